/*
 * stress_main.c — the swap is safe while other threads run the code it
 * moves, and while signal handlers run in it.
 *
 *   stress_main LIB [SWAPS]
 *
 * dlopens LIB (libstress.so: its constructor starts threads calling its
 * functions), so the library's dlopen pass swaps windows while they run;
 * then swaps the windows again and again with enormoustext_remap_range
 * until SWAPS (default 10000) window swaps are done, with a thread sending
 * SIGUSR1 (handled in moved text) all along.  Passes when no result was
 * wrong, nothing crashed, every swap landed on a huge page, and the text
 * is still huge at the end.  Must run with the library preloaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "it_text.h"

static int stop_signals;
static uint64_t signals_sent;

static void *signaller(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 200000 };
	while (!__atomic_load_n(&stop_signals, __ATOMIC_RELAXED)) {
		kill(getpid(), SIGUSR1);
		signals_sent++;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: stress_main LIB [SWAPS]\n");
		return 2;
	}
	long target = argc > 2 ? atol(argv[2]) : 10000;
	int (*remap)(const void *, size_t) =
		(int (*)(const void *, size_t))dlsym(RTLD_DEFAULT, "enormoustext_remap_range");
	if (!remap) {
		printf("stress: FAIL: enormoustext_remap_range not found: run with the library preloaded\n");
		return 1;
	}
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		printf("stress: FAIL: dlopen %s: %s\n", argv[1], dlerror());
		return 1;
	}
	void (*stop)(uint64_t *) = (void (*)(uint64_t *))dlsym(h, "stress_stop");
	void *handler = dlsym(h, "stress_signal_handler");
	uintptr_t lo, hi;
	const char *needle = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
	if (!stop || !handler || !et_find_text(needle, ET_SEG_FILESZ, &lo, &hi)) {
		printf("stress: FAIL: %s lacks stress_stop/stress_signal_handler or is not found\n", argv[1]);
		return 1;
	}
	uint64_t H = it_pmd_size();
	struct it_huge r;
	it_huge_of(lo, hi, H, &r);
	uint64_t windows = r.eligible / H;
	uintptr_t w0 = (lo + H - 1) & ~(uintptr_t)(H - 1);
	int in_window = (uintptr_t)handler >= w0 && (uintptr_t)handler < w0 + r.eligible;
	printf("stress: %s: %llu windows, %llu of %llu bytes huge after dlopen; signal handler at %p %s a window\n",
	       needle, (unsigned long long)windows, (unsigned long long)(r.anon + r.file + r.hugetlb),
	       (unsigned long long)r.eligible, handler, in_window ? "inside" : "NOT inside");
	int fails = 0;
	if (!in_window || windows == 0) {
		printf("stress: FAIL: the test library is not laid out as expected\n");
		return 1;
	}
	if (r.anon + r.file + r.hugetlb < r.eligible) {
		printf("stress: FAIL: the dlopen pass did not make every window huge\n");
		fails++;
	}

	pthread_t sig;
	pthread_create(&sig, NULL, signaller, NULL);
	long swaps = 0, rounds = 0, short_rounds = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (swaps < target) {
		int n = remap((const void *)lo, hi - lo);
		if (n < 0) {
			printf("stress: FAIL: enormoustext_remap_range returned %d\n", n);
			fails++;
			break;
		}
		if ((uint64_t)n != windows)
			short_rounds++;
		swaps += n;
		rounds++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	__atomic_store_n(&stop_signals, 1, __ATOMIC_RELAXED);
	pthread_join(sig, NULL);
	uint64_t c[5];
	stop(c);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("stress: %ld window swaps in %ld rounds (%ld rounds moved fewer than %llu) in %.1f s\n", swaps,
	       rounds, short_rounds, (unsigned long long)windows, secs);
	printf("stress: %llu calls by %llu threads, %llu wrong; %llu signals sent, %llu handled in moved text, %llu wrong\n",
	       (unsigned long long)c[0], (unsigned long long)c[4], (unsigned long long)c[1],
	       (unsigned long long)signals_sent, (unsigned long long)c[2], (unsigned long long)c[3]);
	it_huge_of(lo, hi, H, &r);
	printf("stress: at the end %llu of %llu bytes huge\n", (unsigned long long)(r.anon + r.file + r.hugetlb),
	       (unsigned long long)r.eligible);
	if (swaps < target) { printf("stress: FAIL: only %ld swaps\n", swaps); fails++; }
	if (short_rounds) { printf("stress: FAIL: %ld rounds did not move every window\n", short_rounds); fails++; }
	if (c[1] || c[3]) { printf("stress: FAIL: wrong results\n"); fails++; }
	if (c[4] != 2 || c[0] == 0) { printf("stress: FAIL: the threads did not run\n"); fails++; }
	if (c[2] == 0) { printf("stress: FAIL: no signal was handled\n"); fails++; }
	if (r.anon + r.file + r.hugetlb < r.eligible) { printf("stress: FAIL: text not huge at the end\n"); fails++; }
	printf("stress: %s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
