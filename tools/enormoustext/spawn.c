/*
 * tools/enormoustext/spawn.c — another program run by the command, its
 * output captured: `systemctl` and the trial run of `enable`, a program's
 * loader asked for its libraries (loader.c).
 *
 * Owns: et_tool_capture (fork, exec, the pipes, the wait).
 * May call: libc.
 * Never: runs a program through a shell; leaves a child unwaited for.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
