/*
 * cc_signal_swap.c — a signal handler runs moved code during the swap.
 *
 *   cc_signal_swap [--no-restart] [--interval-us N] [--rounds N] [--phase-seconds S] BIGLIB CTORLIB
 *
 * One thread.  A timer (setitimer ITIMER_REAL, every --interval-us
 * microseconds, default 100) sends SIGALRM all along; the handler calls
 * functions of the windows being moved and checks them:
 *   1. the remap phase: BIGLIB (a libbigtext.so copy) is open; the main
 *      thread calls enormoustext_remap_range over its text --rounds times
 *      (default 200) while the handler calls BIGLIB's functions;
 *   2. the dlopen phase: the main thread dlopens and dlcloses CTORLIB
 *      (cc_ctor_lib.c) --rounds / 2 times; its constructor hands its table
 *      to cc_publish_table() below, so the handler calls CTORLIB's
 *      functions while the dlopen pass moves them (and BIGLIB's).
 * With --no-restart the handler is installed without SA_RESTART: the
 * library's system calls may fail with EINTR, and the pass must still
 * move every window, keep errno, and the program must see nothing.
 * Each phase also ends after --phase-seconds (default 20: the machine may be
 * loaded), when it has done at least 3 rounds.  After each pass: every window of the object moved (an anonymous copy,
 * /proc/self/pagemap) when the library is in the process, errno as it
 * was, every function right.  Plainly (no library) the same runs with
 * nothing moved.  A one-shot timer (SIGUSR2, 2 phases + 90 s) ends a hang.
 * Exit 0 pass, 1 fail, 2 usage/setup, 3 hung.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/time.h>

#include "cc_common.h"

static struct cc_table big;                 /* BIGLIB, open all along */
static const bt_fn *volatile pub_t;         /* CTORLIB, while open */
static volatile unsigned pub_n;
static volatile sig_atomic_t in_pass;
static volatile uint64_t sig_calls, sig_in_pass, sig_in_pass_ctor, sig_wrong, sig_seq;

/* Called by CTORLIB's constructor (dlsym(RTLD_DEFAULT)): from here on the
 * handler calls its functions too. */
__attribute__((visibility("default"))) void cc_publish_table(const bt_fn *t, unsigned n)
{
	pub_n = n;
	pub_t = t;
}

static void on_tick(int sig)
{
	(void)sig;
	int e = errno;
	uint64_t k = ++sig_seq;
	struct cc_table tb = big;
	for (int j = 0; j < 2; j++) {
		unsigned i = (unsigned)((k * 2654435761u + (uint64_t)j * 977u) % tb.n);
		if (!cc_call_lib(&tb, i))
			sig_wrong++;
	}
	const bt_fn *t = pub_t;
	if (t) {
		struct cc_table c = { t, pub_n };
		for (int j = 0; j < 2; j++)
			if (!cc_call_lib(&c, (unsigned)((k * 40503u + (uint64_t)j) % c.n)))
				sig_wrong++;
		if (in_pass)
			sig_in_pass_ctor++;
	}
	sig_calls++;
	if (in_pass)
		sig_in_pass++;
	errno = e;
}

static void on_deadline(int sig)
{
	(void)sig;
	cc_write_str("signal_swap: FAIL: not done by the deadline (2 phases + 90 s): hung?\n");
	_exit(3);
}

/* Whole windows of [lo, hi) that are anonymous memory now (moved), of all. */
static unsigned moved_windows(uintptr_t lo, uintptr_t hi, uint64_t H, unsigned *all)
{
	uintptr_t w0 = (lo + H - 1) & ~(uintptr_t)(H - 1), w1 = hi & ~(uintptr_t)(H - 1);
	unsigned n = 0;
	*all = 0;
	for (uintptr_t w = w0; w + H <= w1; w += H) {
		uint64_t e = cc_pagemap((const void *)w);
		(*all)++;
		if ((e >> 63) & 1 && !((e >> 61) & 1))
			n++;
	}
	return n;
}

static int all_right(const struct cc_table *tb)
{
	for (unsigned i = 0; i < tb->n; i++)
		if (!cc_call_lib(tb, i))
			return 0;
	return 1;
}

static const char *base_name(const char *p)
{
	return strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
}

int main(int argc, char **argv)
{
	int restart = 1, rounds = 200;
	double phase_seconds = 20;
	long interval = 100;
	int a = 1;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--no-restart"))
			restart = 0;
		else if (!strcmp(argv[a], "--interval-us") && a + 1 < argc)
			interval = atol(argv[++a]);
		else if (!strcmp(argv[a], "--rounds") && a + 1 < argc)
			rounds = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--phase-seconds") && a + 1 < argc)
			phase_seconds = atof(argv[++a]);
		else
			break;
	}
	if (argc - a != 2 || interval < 1 || rounds < 6 || phase_seconds <= 0) {
		fprintf(stderr, "usage: cc_signal_swap [--no-restart] [--interval-us N] [--rounds N >= 6] "
		                "[--phase-seconds S] BIGLIB CTORLIB\n");
		return 2;
	}
	const char *biglib = argv[a], *ctorlib = argv[a + 1];
	setvbuf(stdout, NULL, _IONBF, 0);
	struct cc_api api;
	cc_api_find(&api);
	const uint64_t H = cc_pmd_size();
	void *hb = dlopen(biglib, RTLD_NOW);
	if (!hb || cc_lib_table(hb, &big) != 0) {
		printf("signal_swap: FAIL: cannot load %s: %s\n", biglib, hb ? "no bt_lib_table" : dlerror());
		return 2;
	}
	uintptr_t lo, hi;
	if (!et_find_text(base_name(biglib), ET_SEG_MEMSZ, &lo, &hi)) {
		printf("signal_swap: FAIL: %s not found among the loaded objects\n", biglib);
		return 2;
	}
	unsigned nwin;
	unsigned moved0 = moved_windows(lo, hi, H, &nwin);
	printf("signal_swap: %s: %u windows, %u moved at dlopen; SIGALRM every %ld us, SA_RESTART %s; %s\n",
	       base_name(biglib), nwin, moved0, interval, restart ? "on" : "off",
	       api.remap_range ? "the library is in the process" : "the library is not in the process");

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_deadline;
	sigaction(SIGUSR2, &sa, NULL);
	timer_t deadline;
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR2;
	struct itimerspec dl = { { 0, 0 }, { (time_t)(2 * phase_seconds) + 90, 0 } };
	if (timer_create(CLOCK_MONOTONIC, &sev, &deadline) != 0 || timer_settime(deadline, 0, &dl, NULL) != 0) {
		printf("signal_swap: FAIL: timer_create: %s\n", strerror(errno));
		return 2;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_tick;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, interval }, { 0, interval } };
	setitimer(ITIMER_REAL, &it, NULL);

	int fails = 0;
	long errno_changed = 0, short_passes = 0, api_errors = 0, ctor_bad = 0, wrong_after = 0, dl_fail = 0;
	long swaps = 0, remap_calls = 0;
	int first_err = 0, first_errno = 0;
	/* 1. remap_range over BIGLIB while the handler runs it. */
	double t0 = cc_now();
	for (int r = 0; r < rounds && api.remap_range && (r < 3 || cc_now() - t0 < phase_seconds); r++) {
		errno = EDOM;
		in_pass = 1;
		int n = api.remap_range((const void *)lo, hi - lo);
		in_pass = 0;
		if (errno != EDOM && !errno_changed++)
			first_errno = errno;
		remap_calls++;
		if (n < 0) {
			if (!first_err)
				first_err = n;
			api_errors++;
		} else {
			swaps += n;
			if ((unsigned)n != nwin)
				short_passes++;
		}
	}
	if (!all_right(&big))
		wrong_after++;
	/* 2. dlopen/dlclose CTORLIB: its pass moves it while the handler runs it. */
	long loads = 0, ctor_small = 0;
	t0 = cc_now();
	for (int r = 0; r < rounds / 2 && (r < 3 || cc_now() - t0 < phase_seconds); r++) {
		in_pass = 1;
		void *h = dlopen(ctorlib, RTLD_NOW | RTLD_LOCAL);
		in_pass = 0;
		if (!h) {
			dl_fail++;
			continue;
		}
		loads++;
		int (*ok)(void) = (int (*)(void))dlsym(h, "cc_ctor_ok");
		if (!ok || ok() != 1 || !pub_t)
			ctor_bad++;
		struct cc_table c;
		if (cc_lib_table(h, &c) != 0 || !all_right(&c))
			wrong_after++;
		uintptr_t clo, chi;
		unsigned call = 0, cm = et_find_text(base_name(ctorlib), ET_SEG_MEMSZ, &clo, &chi) ?
		                                 moved_windows(clo, chi, H, &call) : 0;
		if (api.remap_range && (call == 0 || cm != call))
			ctor_small++;
		pub_t = NULL;      /* the handler stops calling it before it goes */
		if (dlclose(h) != 0)
			dl_fail++;
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	timer_delete(deadline);
	if (!all_right(&big))
		wrong_after++;

	printf("signal_swap: %ld remap_range calls, %ld windows swapped; %ld dlopen/dlclose of %s\n",
	       remap_calls, swaps, loads, base_name(ctorlib));
	printf("signal_swap: %llu signals handled, %llu during a pass (%llu calling %s while it was loaded "
	       "and moved), %llu wrong\n",
	       (unsigned long long)sig_calls, (unsigned long long)sig_in_pass,
	       (unsigned long long)sig_in_pass_ctor, base_name(ctorlib), (unsigned long long)sig_wrong);
	printf("signal_swap: RESULT sig_wrong=%llu wrong_after=%ld ctor_bad=%ld dl_fail=%ld\n",
	       (unsigned long long)sig_wrong, wrong_after, ctor_bad, dl_fail);
	if (sig_wrong || wrong_after || ctor_bad || dl_fail) {
		printf("signal_swap: FAIL: wrong results or failed loads\n");
		fails++;
	}
	if (!sig_in_pass) {
		printf("signal_swap: FAIL: no signal arrived during a pass: the test did not test\n");
		fails++;
	}
	if (api.remap_range) {
		if (api_errors) {
			printf("signal_swap: FAIL: enormoustext_remap_range failed %ld times (first %d)\n", api_errors,
			       first_err);
			fails++;
		}
		if (short_passes) {
			printf("signal_swap: FAIL: %ld remap_range passes moved fewer than %u windows\n", short_passes,
			       nwin);
			fails++;
		}
		if (errno_changed) {
			printf("signal_swap: FAIL: errno changed by enormoustext_remap_range %ld times (first to %d, %s)\n",
			       errno_changed, first_errno, strerror(first_errno));
			fails++;
		}
		if (ctor_small) {
			printf("signal_swap: FAIL: %ld dlopen passes left windows of %s unmoved\n", ctor_small,
			       base_name(ctorlib));
			fails++;
		}
		if (!sig_in_pass_ctor) {
			printf("signal_swap: FAIL: no signal ran %s's code during its dlopen\n", base_name(ctorlib));
			fails++;
		}
	}
	printf("signal_swap: %s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
