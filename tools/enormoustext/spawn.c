/*
 * tools/enormoustext/spawn.c — another program run by the command, its
 * output captured: `systemctl` and the trial run of `enable`, a program's
 * loader asked for its libraries (loader.c); and which file a command name
 * is: the PATH search of `run` (which execs it) and of `status --explain`
 * (which explains it), and the interpreter of a script's #! line.
 *
 * Owns: et_tool_capture (fork, exec, the pipes, the wait); et_tool_which
 * (THE search along PATH, execvp's rules); et_tool_script (a #! line read
 * as the kernel reads it, `env`'s program searched as env searches it).
 * May call: libc.
 * Never: runs a program through a shell; leaves a child unwaited for.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run argv with env, stdout into *out (malloc'd, may be NULL), stderr
 * into *err when err is given (else inherited); the exit status, or -1
 * when it could not run or was killed. */
int et_tool_capture(char *const argv[], char *const envp[], char **out, char **err)
{
	int po[2], pe[2] = { -1, -1 };
	if (pipe2(po, O_CLOEXEC) != 0)
		return -1;
	if (err && pipe2(pe, O_CLOEXEC) != 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(po[1], 1);
		if (err)
			dup2(pe[1], 2);
		if (envp)
			execve(argv[0], argv, envp);
		else
			execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	if (err)
		close(pe[1]);
	int fds[2] = { po[0], err ? pe[0] : -1 };
	char *bufs[2] = { NULL, NULL };
	size_t lens[2] = { 0, 0 };
	for (int k = 0; k < 2; k++) {
		if (fds[k] < 0)
			continue;
		size_t cap = 0;
		for (;;) {
			if (lens[k] + 4096 + 1 > cap) {
				cap = cap ? cap * 2 : 8192;
				char *nb = realloc(bufs[k], cap);
				if (!nb)
					break;
				bufs[k] = nb;
			}
			ssize_t r = read(fds[k], bufs[k] + lens[k], 4096);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			lens[k] += (size_t)r;
		}
		if (bufs[k])
			bufs[k][lens[k]] = '\0';
		close(fds[k]);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (out)
		*out = bufs[0];
	else
		free(bufs[0]);
	if (err)
		*err = bufs[1];
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Is path a file execve could run?  0, or why not (EACCES: a directory or
 * no execute permission; ENOENT...). */
static int executable(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return errno;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0)
		return EACCES;
	return 0;
}

int et_tool_which(const char *name, char *out, size_t cap)
{
	if (!*name)
		return ENOENT;
	if (strchr(name, '/')) {
		if (strlen(name) >= cap)
			return ENAMETOOLONG;
		memcpy(out, name, strlen(name) + 1);
		return 0;
	}
	/* glibc's execvp: PATH unset is confstr(_CS_PATH)'s "/bin:/usr/bin";
	 * an empty entry is the current directory; a file found but not
	 * executable (EACCES) does not end the search, and is the answer
	 * when nothing later is found. */
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	int err = ENOENT;
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dl = (size_t)(end - p);
		char cand[PATH_MAX];
		int n = dl ? snprintf(cand, sizeof cand, "%.*s/%s", (int)dl, p, name)
		           : snprintf(cand, sizeof cand, "%s", name);
		if (n > 0 && (size_t)n < sizeof cand) {
			int e = executable(cand);
			if (e == 0) {
				if ((size_t)n >= cap)
					return ENAMETOOLONG;
				memcpy(out, cand, (size_t)n + 1);
				return 0;
			}
			if (e == EACCES)
				err = EACCES;
		}
		if (!*end)
			break;
		p = end;
	}
	return err;
}

/* env's options that take the next word as their value (coreutils 9). */
static bool env_option_with_value(const char *w)
{
	return !strcmp(w, "-u") || !strcmp(w, "--unset") || !strcmp(w, "-C") || !strcmp(w, "--chdir");
}

int et_tool_script(const char *path, struct et_tool_script *sc)
{
	memset(sc, 0, sizeof *sc);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the kernel reads the first 256 bytes (BINPRM_BUF_SIZE) */
	char buf[sizeof sc->line];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf - 1)) < 0 && errno == EINTR)
		;
	close(fd);
	if (r < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	buf[r] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	snprintf(sc->line, sizeof sc->line, "%s", buf);
	for (size_t n = strlen(sc->line); n && sc->line[n - 1] == '\r'; n--)
		sc->line[n - 1] = '\0';      /* for messages; the names keep it */
	/* "#!", blanks, the interpreter up to a blank, then the rest, its
	 * trailing blanks cut, as one argument (a carriage return is part of
	 * the name, as the kernel reads it) */
	char *p = buf + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	char *ip = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (*p)
		*p++ = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	for (size_t n = strlen(p); n && (p[n - 1] == ' ' || p[n - 1] == '\t'); n--)
		p[n - 1] = '\0';
	if (!*ip)
		return -ENOEXEC;
	if (strlen(ip) >= sizeof sc->interp)
		return -ENAMETOOLONG;
	snprintf(sc->interp, sizeof sc->interp, "%s", ip);
	const char *base = strrchr(ip, '/');
	base = base ? base + 1 : ip;
	if (strcmp(base, "env") != 0) {
		snprintf(sc->program, sizeof sc->program, "%s", ip);
		return 1;
	}
	/* #!/usr/bin/env PROGRAM: env searches PATH for PROGRAM, the whole
	 * argument (a blank in it is part of the name); with -S env splits it
	 * into words: options, NAME=VALUE, then PROGRAM and its arguments. */
	sc->via_env = true;
	const char *name = p;
	if (!strncmp(p, "-S", 2) || !strncmp(p, "--split-string", 14)) {
		p += p[1] == 'S' ? 2 : 14;
		if (*p == '=')
			p++;
		name = NULL;
		char *save = NULL;
		for (char *w = strtok_r(p, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
			if (w[0] == '-') {
				if (env_option_with_value(w) && !strtok_r(NULL, " \t", &save))
					break;
				continue;
			}
			if (strchr(w, '='))
				continue;
			name = w;
			break;
		}
	}
	/* env with no program (or only an option, without -S): it prints the
	 * environment */
	if (!name || !*name || (name == p && *name == '-'))
		return -ENOEXEC;
	snprintf(sc->name, sizeof sc->name, "%s", name);
	int e = et_tool_which(name, sc->program, sizeof sc->program);
	return e ? -e : 1;
}
