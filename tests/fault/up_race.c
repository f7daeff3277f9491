/*
 * up_race — run a program and write to files at set moments of its life
 * (fault.uprobe: enable and disable tracefs uprobes while a deferred
 * worker moves the program's text).
 *
 *   up_race STATUS [--limit S] [--trigger PATH OFFSET [--trigger-wait MS]]
 *           [--at US FILE VALUE]... -- CMD [ARG...]
 *
 * Starts CMD (its stdin, stdout and stderr are up_race's), then, for each
 * --at in the order given, waits until US microseconds after the fork and
 * writes VALUE to FILE (open, write, close: a tracefs enable file takes
 * "1" or "0").  Then waits for CMD; after S seconds (default 60) it kills
 * it with SIGKILL and says so.
 *
 * --trigger: the moments are counted from the first time a thread of CMD
 * (after its exec) runs the instruction at file offset OFFSET of PATH (a
 * function of a shared library CMD loads) instead of from the fork.  A
 * uprobe perf event (perf_event_open, PMU "uprobe") that counts, attached
 * to CMD's process before it execs and inherited by its threads, is read
 * every 100 us; it goes with up_race (nothing is left in tracefs).  When
 * the function has not run MS milliseconds (default 5000) after the fork,
 * no --at is done.
 *
 * STATUS gets, one line each:
 *
 *   exit N | signal N NAME | hang
 *   trigger: at T us | trigger: never      (with --trigger)
 *   at I: asked US us, wrote at A us, done at B us, VALUE, ok|ERRNO-TEXT
 *   end: E us
 *
 * (A and B count from the fork, US from the trigger when there is one.)
 *
 * Exits 0 when all went as asked (CMD's own end is in STATUS), 2 on a
 * usage or system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <time.h>
#include <unistd.h>

struct act {
	long us;
	const char *file, *value;
	long start_us, done_us;
	int err;
};

static struct timespec t0;

static long since(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000;
}

static void sleep_until(long us)
{
	struct timespec t = t0;
	t.tv_sec += us / 1000000;
	t.tv_nsec += (us % 1000000) * 1000;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

/* A counting uprobe perf event at PATH:OFFSET on process pid and the
 * threads it makes; -1 with errno. */
static int uprobe_counter(const char *path, unsigned long long offset, pid_t pid)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int type = -1;
	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	if (type < 0) {
		errno = ENOENT;
		return -1;
	}
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = (unsigned)type;
	a.config1 = (unsigned long long)(uintptr_t)path;   /* uprobe_path */
	a.config2 = offset;                                  /* probe_offset */
	a.inherit = 1;
	a.disabled = 1;
	a.enable_on_exec = 1;
	return (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int put(const char *file, const char *value)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	size_t n = strlen(value);
	int e = write(fd, value, n) == (ssize_t)n ? 0 : errno ? errno : EIO;
	if (close(fd) != 0 && !e)
		e = errno;
	return e;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: up_race STATUS [--limit S] [--at US FILE VALUE]... -- CMD [ARG...]\n");
		return 2;
	}
	const char *status = argv[1];
	struct act acts[64];
	int nacts = 0, limit = 60, i = 2, trig_wait_ms = 5000;
	const char *trig_path = NULL;
	unsigned long long trig_off = 0;
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
			limit = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--trigger") && i + 2 < argc) {
			trig_path = argv[i + 1];
			trig_off = strtoull(argv[i + 2], NULL, 0);
			i += 2;
		} else if (!strcmp(argv[i], "--trigger-wait") && i + 1 < argc) {
			trig_wait_ms = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--at") && i + 3 < argc && nacts < 64) {
			acts[nacts] = (struct act){ atol(argv[i + 1]), argv[i + 2], argv[i + 3], -1, -1, 0 };
			nacts++;
			i += 3;
		} else {
			fprintf(stderr, "up_race: bad argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "up_race: no command after --\n");
		return 2;
	}
	char **cmd = argv + i + 1;
	int go[2];
	if (pipe2(go, O_CLOEXEC) != 0) {
		perror("up_race: pipe");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t c = fork();
	if (c < 0) {
		perror("up_race: fork");
		return 2;
	}
	if (c == 0) {
		char b;
		close(go[1]);
		if (read(go[0], &b, 1) != 1)   /* the parent gave up */
			_exit(127);
		execvp(cmd[0], cmd);
		perror(cmd[0]);
		_exit(127);
	}
	close(go[0]);
	int tfd = -1;
	if (trig_path) {
		tfd = uprobe_counter(trig_path, trig_off, c);
		if (tfd < 0) {
			fprintf(stderr, "up_race: perf_event_open(uprobe %s:0x%llx): %s\n", trig_path, trig_off, strerror(errno));
			kill(c, SIGKILL);
			waitpid(c, NULL, 0);
			return 2;
		}
	}
	if (write(go[1], "g", 1) != 1) {
		perror("up_race: pipe");
		return 2;
	}
	close(go[1]);
	long base = 0, trig_at = -1;
	if (tfd >= 0) {
		unsigned long long n = 0;
		while (since() < trig_wait_ms * 1000L) {
			if (read(tfd, &n, sizeof n) == (ssize_t)sizeof n && n > 0) {
				trig_at = since();
				break;
			}
			siginfo_t si;
			si.si_pid = 0;
			if (waitid(P_PID, (id_t)c, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == c)
				break;
			struct timespec t = { 0, 100000 };
			nanosleep(&t, NULL);
		}
		if (trig_at < 0)
			nacts = 0;
		base = trig_at;
	}
	for (int k = 0; k < nacts; k++) {
		sleep_until(base + acts[k].us);
		acts[k].start_us = since();
		acts[k].err = put(acts[k].file, acts[k].value);
		acts[k].done_us = since();
	}
	if (tfd >= 0)
		close(tfd);   /* unregistering takes a while: not before the writes */
	int st = 0;
	pid_t r;
	long deadline = (long)limit * 1000000L;
	while ((r = waitpid(c, &st, WNOHANG)) == 0 && since() < deadline) {
		struct timespec t = { 0, 2000000 };
		nanosleep(&t, NULL);
	}
	int hang = r == 0;
	if (hang) {
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
	}
	long end = since();
	FILE *f = fopen(status, "w");
	if (!f) {
		perror(status);
		return 2;
	}
	if (hang)
		fprintf(f, "hang\n");
	else if (WIFSIGNALED(st))
		fprintf(f, "signal %d %s\n", WTERMSIG(st), sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
	else
		fprintf(f, "exit %d\n", WEXITSTATUS(st));
	if (trig_path && trig_at >= 0)
		fprintf(f, "trigger: at %ld us\n", trig_at);
	else if (trig_path)
		fprintf(f, "trigger: never\n");
	for (int k = 0; k < nacts; k++)
		fprintf(f, "at %d: asked %ld us, wrote at %ld us, done at %ld us, %s, %s\n", k, acts[k].us,
			acts[k].start_us, acts[k].done_us, acts[k].value, acts[k].err ? strerror(acts[k].err) : "ok");
	fprintf(f, "end: %ld us\n", end);
	return fclose(f) == 0 ? 0 : 2;
}
