/*
 * tools/enormoustext/cmd/record_library.c — `enormoustext record COMMAND`
 * where perf_event_open is refused (kernel.perf_event_paranoid, a
 * container's seccomp filter): COMMAND runs with the library preloaded and
 * its own recorder on (ENORMOUSTEXT_RECORD: a CPU-time timer and SIGPROF
 * per thread), each process writes its profile into a private directory,
 * and those are merged into FILE as `profile merge` would.  record.c
 * decides (it tries a cpu-clock event first) and reports.
 *
 * Owns: that route: the private directory and what is left in it when the
 * merge fails, the child's environment (LD_PRELOAD, ENORMOUSTEXT_RECORD,
 * ENORMOUSTEXT=0 unless set), the lines that say why nothing was recorded;
 * and, for both routes, the child's line when exec fails and the output
 * dropped when nothing is written.
 * May call: preload.c (the library to preload), profiles.c (the merge),
 * output.c, msg.c, common.c.
 * Never: writes a profile line itself (the merge does); runs another
 * process to merge; leaves the directory behind unless the merge failed.
 */
#include "record.h"
#include "preload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* (record.h) */
void et_record_out_drop(struct et_tool_out *t)
{
	if (t && t->f)
		et_tool_out_abort(t);
	free(t);
}

/* (record.h) */
void et_record_exec_failed(const char *cmd, int fd)
{
	int e = errno;
	fprintf(stderr, "enormoustext record: %s: %s\n", cmd, strerror(e));
	ssize_t w = write(fd, &e, sizeof e);
	(void)w;                /* the exit status says it too */
	_exit(e == ENOENT ? 127 : 126);
}

/* A profile a process wrote (not one it was still writing: NAME.tmp). */
static bool is_profile(const char *path)
{
	size_t l = strlen(path);
	return l > 5 && !strcmp(path + l - 5, ".prof");
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* (record.h) */
int et_record_with_library(char **cmd, const char *out, int why, struct et_tool_out *t,
                           struct et_record_merged *mg)
{
	char *preload = et_tool_preload(NULL);
	if (!preload) {
		et_tool_err("perf_event_open: %s, and the library's own sampling needs the library: "
		            "nothing recorded", strerror(why));
		et_record_out_drop(t);
		return ET_EXIT_BAD;
	}
	/* (a % in the directory would be the library's to expand) */
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp || strchr(tmp, '%') || strlen(tmp) > 900)
		tmp = "/tmp";
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/enormoustext-record.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		et_tool_err("%s: %s", dir, strerror(errno));
		free(preload);
		et_record_out_drop(t);
		return ET_EXIT_BAD;
	}
	char rec[PATH_MAX + 16];
	snprintf(rec, sizeof rec, "%s/%%p.prof", dir);
	fprintf(stderr, "enormoustext record: perf_event_open: %s: sampling with the library's "
	        "CPU-time timers (ENORMOUSTEXT_RECORD) instead, up to %d Hz a thread\n", strerror(why),
	        ET_PROFILE_RECORD_HZ);
	fflush(stderr);
	/* our own signals go to the command; its status is ours */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	int ex[2] = { -1, -1 };
	pid_t child = pipe2(ex, O_CLOEXEC) == 0 ? fork() : -1;
	if (child < 0) {
		et_tool_err("%s: %s", ex[0] < 0 ? "pipe" : "fork", strerror(errno));
		if (ex[0] >= 0) {
			close(ex[0]);
			close(ex[1]);
		}
		free(preload);
		rmdir(dir);
		et_record_out_drop(t);
		return ET_EXIT_BAD;
	}
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(ex[0]);
		if (setenv("LD_PRELOAD", preload, 1) != 0 || setenv("ENORMOUSTEXT_RECORD", rec, 1) != 0 ||
		    setenv("ENORMOUSTEXT", "0", 0) != 0)
			_exit(126);
		execvp(cmd[0], cmd);
		et_record_exec_failed(cmd[0], ex[1]);
	}
	close(ex[1]);
	free(preload);
	int st = 0;
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	int exec_err = 0;
	if (read(ex[0], &exec_err, sizeof exec_err) != (ssize_t)sizeof exec_err)
		exec_err = 0;
	close(ex[0]);
	/* the profiles the processes wrote */
	char **profs = NULL;
	size_t nf = 0;
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.')
			continue;
		char *path = malloc(strlen(dir) + l + 2);
		char **more = realloc(profs, (nf + 1) * sizeof *profs);
		if (!path || !more) {
			et_tool_err("out of memory");
			exit(ET_EXIT_BAD);
		}
		profs = more;
		sprintf(path, "%s/%s", dir, e->d_name);
		profs[nf++] = path;
	}
	if (d)
		closedir(d);
	int rc = 0;
	size_t ok = 0;
	for (size_t i = 0; i < nf; i++)
		ok += is_profile(profs[i]);
	int cmd_rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	bool keep = false;             /* the processes' profiles, when the merge fails */
	if (ok == 0) {
		/* the library writes at exit(): a process killed by a signal, or one
		 * that leaves through _exit, writes nothing */
		if (WIFSIGNALED(st))
			et_tool_err("%s was killed by signal %d before it could write its profile "
			            "(the library writes at exit): nothing recorded", cmd[0], WTERMSIG(st));
		else if (exec_err)
			;              /* it said why: nothing to add */
		else
			et_tool_err("no process of %s wrote a profile (a static program cannot load the "
			            "library; one that leaves through _exit writes nothing): nothing recorded",
			            cmd[0]);
		rc = cmd_rc ? cmd_rc : ET_EXIT_BAD;
		et_record_out_drop(t);
		t = NULL;
	} else {
		/* `enormoustext profile merge -o OUT FILES...`'s work */
		qsort(profs, nf, sizeof *profs, by_name);
		char **list = calloc(nf ? nf : 1, sizeof *list);
		if (!list) {
			et_tool_err("out of memory");
			exit(ET_EXIT_BAD);
		}
		size_t k = 0;
		for (size_t i = 0; i < nf; i++)
			if (is_profile(profs[i]))
				list[k++] = profs[i];
		int m = et_tool_profile_merge_stats(t && t->f ? t : NULL, out, list, k, &mg->stats);
		mg->ok = m == ET_EXIT_OK;
		mg->processes = ok;
		free(t);
		t = NULL;
		if (m != ET_EXIT_OK) {
			rc = ET_EXIT_BAD;   /* the merge said why */
			keep = true;
			et_tool_err("the profiles of %s's processes are left in %s", cmd[0], dir);
		}
		free(list);
		if (!rc)
			fprintf(stderr, "enormoustext record: %zu process profile%s merged into %s\n", ok,
			        et_tool_s(ok), out);
	}
	for (size_t i = 0; i < nf; i++) {
		if (!keep)
			unlink(profs[i]);
		free(profs[i]);
	}
	free(profs);
	if (!keep)
		rmdir(dir);
	if (rc)
		return rc;
	return cmd_rc;
}
