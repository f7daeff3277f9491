/*
 * iv_prog — the program of the fault.inv-* tests: 8 MiB of text of its own
 * (the integration tests' generated functions), called and checked, with
 * what a program may assume of its own process done around it: that it
 * ends when its threads have ended, that SIGTERM ends it, that open
 * returns the lowest free descriptor, that the descriptors it has not
 * opened are nobody's.
 *
 *   iv_prog [--hold MS] [--thread MS] [--end pthread_exit|strict]
 *           [--idiom MS] [--idiom-thread MS --dlopen LIB --dlopen-at MS]
 *           [--closefrom FILE --lines N --over MS [--exit-flush]]
 *           [--maps N] [--pidfile F]
 *
 *   --hold MS   keep calling the functions for MS milliseconds of wall time
 *   --thread MS start a program thread that calls the functions for MS
 *               milliseconds, prints its result and returns
 *   --end pthread_exit
 *               main ends with pthread_exit(NULL) (after printing): the
 *               process ends when its last thread does
 *   --end strict
 *               main prints, enters seccomp strict mode
 *               (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)) and ends with
 *               syscall(SYS_exit, 0)
 *   --idiom MS  for MS milliseconds, main repeats the daemon idiom (close
 *               0, 1, 2; open("/dev/null"); dup; dup: must give 0 1 2) and
 *               a plain "open returns the lowest free number" check (3,
 *               unless more were inherited), calling 4 of the functions each round; prints how many
 *               rounds saw a wrong number (stdout and stderr are kept at
 *               high numbers meanwhile and put back after)
 *   --idiom-thread MS --dlopen LIB --dlopen-at MS
 *               a program thread repeats the idiom for MS milliseconds;
 *               at MS into it main has the thread stop between rounds,
 *               dlopens LIB (a copy of libbigtext.so), lets the thread go
 *               on and calls and checks the library's functions; the
 *               wrong rounds are counted before and after the dlopen
 *   --closefrom FILE --lines N --over MS
 *               closefrom(3) (as daemons, sshd do), fopen FILE, write N
 *               numbered lines (each with a function's result) spread
 *               evenly over MS milliseconds, then fclose it; prints
 *               whether every write and the fclose succeeded
 *   --exit-flush
 *               with --closefrom: no fclose; exit's flush writes the last
 *               buffer (what many programs rely on)
 *   --maps N    first, make N more mappings (a page each), as a process
 *               with many mappings has: /proc/self/smaps grows long
 *   --pidfile F write the pid there once main runs
 *
 * Prints only what it computed (no addresses, no timing, no counts that
 * depend on speed): a run with the library must print the same as one
 * without.  Exit 0, or 1 when a result was wrong.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bigtext.h"
#include "../lib/et_test.h"   /* et_round_all */

/* The next 4 functions, from *k on (a round of the idiom is short: most
 * of the loop's time must be the idiom's). */
static unsigned round_some(unsigned *k)
{
	unsigned wrong = 0;
	for (int n = 0; n < 4; n++, *k = (*k + 1) % bt_exe_count) {
		uint64_t x = bt_arg(BT_OBJ_EXE, *k);
		if (bt_exe_table[*k](x) != bt_expect(BT_OBJ_EXE, *k, x))
			wrong++;
	}
	return wrong;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static unsigned hold(int ms)
{
	unsigned wrong = 0;
	double end = now() + ms / 1000.0;
	do
		wrong += et_round_all();
	while (now() < end);
	return wrong;
}

/* ---- --thread ---------------------------------------------------------- */

static int g_thread_ms;

static void *program_thread(void *arg)
{
	(void)arg;
	unsigned wrong = hold(g_thread_ms);
	printf("thread: %s\n", wrong ? "WRONG results" : "all results right");
	fflush(stdout);
	if (wrong)
		exit(1);
	return NULL;
}

/* ---- the daemon idiom -------------------------------------------------- */

struct idiom {
	int a, b, c;          /* what the last round got for 0, 1, 2 (ours to close) */
	int lowest;           /* the lowest free number above 2, at the start */
	unsigned daemon_wrong, lowest_wrong, rounds;
};

/* One round.  Closes only what an earlier round of its own opened. */
static void idiom_round(struct idiom *s)
{
	close(s->a);
	close(s->b);
	close(s->c);
	s->a = open("/dev/null", O_RDWR);
	s->b = dup(s->a);
	s->c = dup(s->a);
	if (s->a != 0 || s->b != 1 || s->c != 2)
		s->daemon_wrong++;
	int x = open("/dev/null", O_RDONLY);
	if (x != s->lowest)
		s->lowest_wrong++;
	close(x);
	/* a number not 0..2 is ours too: closed now, so that it is not left open */
	int *mine[3] = {&s->a, &s->b, &s->c};
	for (int i = 0; i < 3; i++)
		if (*mine[i] > 2) {
			close(*mine[i]);
			*mine[i] = -1;
		}
	s->rounds++;
}

static int g_save_out = -1, g_save_err = -1;

/* stdout and stderr to high numbers, so that the idiom may close 0, 1, 2 */
static void idiom_begin(struct idiom *s)
{
	fflush(stdout);
	fflush(stderr);
	g_save_out = fcntl(1, F_DUPFD_CLOEXEC, 100);
	g_save_err = fcntl(2, F_DUPFD_CLOEXEC, 100);
	if (g_save_out < 0 || g_save_err < 0) {
		perror("iv_prog: F_DUPFD");
		exit(2);
	}
	memset(s, 0, sizeof *s);
	s->a = 0;
	s->b = 1;
	s->c = 2;
	s->lowest = open("/dev/null", O_RDONLY);   /* 3, unless the caller left more open */
	close(s->lowest);
}

static void idiom_end(struct idiom *s)
{
	close(s->a);
	close(s->b);
	close(s->c);
	int n = open("/dev/null", O_RDONLY);
	if (n >= 0 && n != 0) {
		dup2(n, 0);
		close(n);
	}
	dup2(g_save_out, 1);
	dup2(g_save_err, 2);
	close(g_save_out);
	close(g_save_err);
}

/* ---- --idiom-thread with --dlopen --------------------------------------- */

static pthread_mutex_t g_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_c = PTHREAD_COND_INITIALIZER;
static bool g_pause_asked, g_paused, g_dlopened;
static int g_idiom_thread_ms;
static struct idiom g_before, g_after;
static unsigned g_thread_wrong;
static int g_lowest;

static void *idiom_thread(void *arg)
{
	(void)arg;
	struct idiom s;
	memset(&s, 0, sizeof s);
	s.a = 0;
	s.b = 1;
	s.c = 2;
	s.lowest = g_lowest;
	double end = now() + g_idiom_thread_ms / 1000.0;
	bool after = false;
	unsigned k = 0, wrong = 0;
	while (now() < end) {
		pthread_mutex_lock(&g_m);
		if (g_pause_asked) {
			g_paused = true;
			pthread_cond_broadcast(&g_c);
			while (g_pause_asked)
				pthread_cond_wait(&g_c, &g_m);
			g_paused = false;
		}
		if (g_dlopened && !after) {
			after = true;
			g_before = s;
			s.daemon_wrong = s.lowest_wrong = s.rounds = 0;
		}
		pthread_mutex_unlock(&g_m);
		idiom_round(&s);
		wrong += round_some(&k);
	}
	if (after)
		g_after = s;
	else
		g_before = s;
	/* the thread's last round's numbers, for main to close */
	g_after.a = s.a;
	g_after.b = s.b;
	g_after.c = s.c;
	g_thread_wrong = wrong;
	return NULL;
}

/* ---- --maps ------------------------------------------------------------ */

/* n mappings of a page each (one region, every other page read-only: the
 * kernel cannot merge them), as a process with many mappings has: each is
 * a few lines of /proc/self/smaps. */
static bool many_maps(int n)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)n * 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	for (int i = 0; i < n; i++)
		if (mprotect(p + (size_t)i * 2 * (size_t)pg, (size_t)pg, PROT_READ) != 0)
			return false;
	return true;
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
	int hold_ms = 0, idiom_ms = -1, lines = 0, over_ms = 0, dlopen_at = -1;
	const char *end_how = NULL, *pidfile = NULL, *outfile = NULL, *lib = NULL;
	bool exit_flush = false;
	int nmaps = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--hold") && i + 1 < argc)
			hold_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--thread") && i + 1 < argc)
			g_thread_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--end") && i + 1 < argc)
			end_how = argv[++i];
		else if (!strcmp(argv[i], "--idiom") && i + 1 < argc)
			idiom_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--idiom-thread") && i + 1 < argc)
			g_idiom_thread_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dlopen") && i + 1 < argc)
			lib = argv[++i];
		else if (!strcmp(argv[i], "--dlopen-at") && i + 1 < argc)
			dlopen_at = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--closefrom") && i + 1 < argc)
			outfile = argv[++i];
		else if (!strcmp(argv[i], "--lines") && i + 1 < argc)
			lines = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--over") && i + 1 < argc)
			over_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--exit-flush"))
			exit_flush = true;
		else if (!strcmp(argv[i], "--maps") && i + 1 < argc)
			nmaps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pidfile") && i + 1 < argc)
			pidfile = argv[++i];
		else {
			fprintf(stderr, "iv_prog: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (end_how && strcmp(end_how, "pthread_exit") && strcmp(end_how, "strict")) {
		fprintf(stderr, "iv_prog: --end takes pthread_exit or strict\n");
		return 2;
	}
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");
		if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
			perror(pidfile);
			return 2;
		}
	}
	if (nmaps > 0 && !many_maps(nmaps)) {
		printf("--maps %d: %s\n", nmaps, strerror(errno));
		return 1;
	}
	unsigned wrong = et_round_all();

	if (outfile) {
		/* before anything else is opened: the daemon's start */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
		closefrom(3);
#else
		syscall(SYS_close_range, 3u, ~0u, 0u);
#endif
		FILE *f = fopen(outfile, "w");
		if (!f) {
			printf("fopen: %s\n", strerror(errno));
			return 1;
		}
		bool werr = false;
		double start = now();
		for (int i = 0; i < lines; i++) {
			unsigned k = (unsigned)i % bt_exe_count;
			uint64_t x = bt_arg(BT_OBJ_EXE, k);
			uint64_t r = bt_exe_table[k](x);
			if (r != bt_expect(BT_OBJ_EXE, k, x))
				wrong++;
			if (fprintf(f, "line %d of %d: f%u -> %016llx\n", i + 1, lines, k, (unsigned long long)r) < 0)
				werr = true;
			double t = start + (double)over_ms / 1000.0 * (i + 1) / lines;
			while (now() < t)
				wrong += et_round_all() ? 1 : 0;
		}
		printf("%d lines written: %s\n", lines, werr || ferror(f) ? "a write FAILED" : "every fprintf ok");
		if (exit_flush) {
			/* left to exit's flush */
			printf("functions: %u, %s\n", bt_exe_count, wrong ? "WRONG results" : "all results right");
			return wrong ? 1 : 0;
		}
		int e = fclose(f) == 0 ? 0 : errno;
		printf("fclose: %s\n", e ? strerror(e) : "ok");
	}

	if (idiom_ms >= 0) {
		struct idiom s;
		idiom_begin(&s);
		double end = now() + idiom_ms / 1000.0;
		unsigned k = 0;
		while (now() < end) {
			idiom_round(&s);
			wrong += round_some(&k);
		}
		idiom_end(&s);
		printf("idiom: the lowest free number above 2 at the start: %d\n", s.lowest);
		printf("idiom: %u rounds gave other numbers than 0 1 2, %u opens not the lowest free number\n",
		       s.daemon_wrong, s.lowest_wrong);
	}

	if (g_idiom_thread_ms > 0) {
		if (!lib || dlopen_at < 0) {
			fprintf(stderr, "iv_prog: --idiom-thread needs --dlopen and --dlopen-at\n");
			return 2;
		}
		struct idiom s;
		idiom_begin(&s);     /* the saving; the thread keeps its own count */
		g_lowest = s.lowest;
		pthread_t t;
		if (pthread_create(&t, NULL, idiom_thread, NULL) != 0) {
			idiom_end(&s);
			printf("pthread_create failed\n");
			return 1;
		}
		wrong += hold(dlopen_at);
		pthread_mutex_lock(&g_m);
		g_pause_asked = true;
		while (!g_paused)
			pthread_cond_wait(&g_c, &g_m);
		/* the thread waits between rounds: what dlopen opens is not its business */
		void *h = dlopen(lib, RTLD_NOW);
		g_dlopened = true;
		g_pause_asked = false;
		pthread_cond_broadcast(&g_c);
		pthread_mutex_unlock(&g_m);
		const bt_fn *(*get)(unsigned *) = h ? (const bt_fn *(*)(unsigned *))dlsym(h, "bt_lib_table") : NULL;
		unsigned ln = 0;
		const bt_fn *lt = get ? get(&ln) : NULL;
		void *ret;
		/* while the thread runs: call the library's functions (and ours) */
		for (bool done = false; !done;) {
			for (unsigned i = 0; lt && i < ln; i++) {
				uint64_t x = bt_arg(BT_OBJ_LIB, i);
				if (lt[i](x) != bt_expect(BT_OBJ_LIB, i, x))
					wrong++;
			}
			wrong += et_round_all();
			done = pthread_tryjoin_np(t, &ret) == 0;
		}
		wrong += g_thread_wrong;
		s.a = g_after.a;
		s.b = g_after.b;
		s.c = g_after.c;
		idiom_end(&s);
		printf("idiom: the lowest free number above 2 at the start: %d\n", g_lowest);
		if (!lt)
			printf("dlopen %s: failed\n", lib);
		else
			printf("dlopen: %u functions called\n", ln);
		printf("idiom before the dlopen: %u rounds gave other numbers than 0 1 2, %u opens not the lowest free "
		       "number\n", g_before.daemon_wrong, g_before.lowest_wrong);
		printf("idiom after the dlopen: %u rounds gave other numbers than 0 1 2, %u opens not the lowest free "
		       "number\n", g_after.daemon_wrong, g_after.lowest_wrong);
	}

	pthread_t t;
	if (g_thread_ms > 0 && pthread_create(&t, NULL, program_thread, NULL) != 0) {
		printf("pthread_create failed\n");
		return 1;
	}
	wrong += hold(hold_ms);
	printf("functions: %u, %s\n", bt_exe_count, wrong ? "WRONG results" : "all results right");
	fflush(stdout);
	if (end_how && !strcmp(end_how, "pthread_exit")) {
		if (wrong)
			exit(1);
		printf("main: pthread_exit\n");
		fflush(stdout);
		pthread_exit(NULL);
	}
	if (end_how && !strcmp(end_how, "strict")) {
		if (wrong)
			exit(1);
		printf("main: seccomp strict, then SYS_exit\n");
		fflush(stdout);
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0) {
			printf("prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT): %s\n", strerror(errno));
			return 1;
		}
		/* only read, write, _exit and sigreturn from here */
		syscall(SYS_exit, 0);
	}
	if (g_thread_ms > 0)
		pthread_join(t, NULL);
	return wrong ? 1 : 0;
}
