/*
 * dt_prog — the program of fault.defer-tick: 6 MiB of text of its own (one
 * block of `ret` instructions, as tests/tools/tt_hold.c), single-threaded
 * unless asked, and what the deferral's tick must leave as it is.
 *
 *   dt_prog [--sigurg] [--thread] [--sleep MS] [--spin MS]
 *
 *   --sigurg    first thing in main, print SIGURG's disposition as
 *               sigaction reports it, then set a handler of its own; at
 *               300 ms into the spin, send itself one SIGURG; print how
 *               many its handler got (1: only its own)
 *   --thread    at 300 ms into the spin, make a thread that spins too
 *   --sleep MS  nanosleep MS first; print whether it slept it all (no
 *               EINTR, no early return)
 *   --spin MS   call its text for MS ms of wall time (default 1500)
 *
 * stdout holds only what it computed (the same with and without the
 * library); stderr gets "huge KB" (its own text on huge pages, from
 * /proc/self/smaps) and "single_threaded A B" (__libc_single_threaded at
 * main and at the end; -1 where the C library has none).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define HAVE_ST 1
#endif
#endif

__asm__(".text\n"
        ".p2align 12\n"
        ".globl dt_big_text\n"
        ".type dt_big_text, @function\n"
        "dt_big_text:\n"
        ".skip 6291456, 0xc3\n"
        ".size dt_big_text, 6291456\n");
extern char dt_big_text[];

static volatile sig_atomic_t g_got;
static void on_urg(int s)
{
	(void)s;
	g_got++;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double g_until;
static void spin_until(double until)
{
	while (now() < until)
		for (size_t k = 0; k < 6291456; k += 65536)
			((void (*)(void))(dt_big_text + k))();
}

static void *spinner(void *a)
{
	spin_until(g_until);
	return a;
}

static int st(void)
{
#ifdef HAVE_ST
	return __libc_single_threaded;
#else
	return -1;
#endif
}

static long huge_kb(void)
{
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[1024];
	long kb = 0;
	int mine = 0, prev = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char path[512] = "";
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %511s", &lo, &hi, path) >= 2 && strchr(line, '-') < strchr(line, ' ')) {
			mine = path[0] ? !strcmp(path, exe) : prev;
			if (path[0])
				prev = mine;
			continue;
		}
		long v;
		if (mine && (sscanf(line, "AnonHugePages: %ld", &v) == 1 || sscanf(line, "FilePmdMapped: %ld", &v) == 1))
			kb += v;
	}
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	int sigurg = 0, thread = 0;
	long sleep_ms = 0, spin_ms = 1500;
	int st0 = st();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sigurg"))
			sigurg = 1;
		else if (!strcmp(argv[i], "--thread"))
			thread = 1;
		else if (!strcmp(argv[i], "--sleep") && i + 1 < argc)
			sleep_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--spin") && i + 1 < argc)
			spin_ms = atol(argv[++i]);
		else {
			fprintf(stderr, "dt_prog: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (sigurg) {
		struct sigaction old;
		sigaction(SIGURG, NULL, &old);
		printf("SIGURG before: %s\n", old.sa_handler == SIG_DFL ? "SIG_DFL" : old.sa_handler == SIG_IGN ? "SIG_IGN" : "a handler");
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_urg;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGURG, &sa, NULL);
	}
	if (sleep_ms) {
		struct timespec w = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L }, left = { 0, 0 };
		double t0 = now();
		int r = nanosleep(&w, &left);
		int e = errno;
		double took = now() - t0;
		printf("slept: %s\n", r == 0 && took * 1000 >= (double)sleep_ms ? "all of it" : e == EINTR ? "EINTR" : "short");
	}
	double t0 = now();
	g_until = t0 + (double)spin_ms / 1000;
	spin_until(t0 + 0.3);
	pthread_t t;
	int made = thread ? pthread_create(&t, NULL, spinner, NULL) == 0 : 0;
	if (sigurg)
		kill(getpid(), SIGURG);
	spin_until(g_until);
	if (made)
		pthread_join(t, NULL);
	if (thread)
		printf("thread: %s\n", made ? "made" : "not made");
	if (sigurg)
		printf("SIGURG handled: %d\n", (int)g_got);
	printf("done\n");
	fflush(stdout);
	fprintf(stderr, "huge %ld\nsingle_threaded %d %d\n", huge_kb(), st0, st());
	return 0;
}
