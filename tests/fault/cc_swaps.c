/*
 * cc_swaps.c — 10,000 window swaps while threads run the windows.
 *
 *   cc_swaps [--threads N] [--swaps N] [--max-seconds S] [--plain-seconds S] LIB
 *
 * The program carries 8 MiB of text of its own (the generated
 * bt_exe_funcs.c) and dlopens LIB (a libbigtext.so copy: 8 MiB more).
 * N threads (default 3, 1..4; niced, so that on a small machine the
 * swapping thread keeps its share) call random functions of both and
 * check every result.  The main thread swaps: one swap is one whole huge-page
 * window replaced by a fresh copy through the library's mremap — what one
 * unit of enormoustext_remap_range's return value counts (a window already
 * moved is copied again and swapped again).  It alternates between the
 * program's text and LIB's text, so each window goes back and forth
 * between a new copy and the next, until --swaps (default 10,000) swaps
 * are done.  After each call it reads /proc/self/pagemap: every window
 * must sit on a page frame it did not sit on before the call (root sees
 * frame numbers; elsewhere that check says it cannot be made).
 *
 * Without the library (no enormoustext_remap_range) nothing is swapped:
 * the threads run for --plain-seconds (default 3) and the results are
 * checked the same way.  A thread without progress for 20 s, or swaps not
 * done within --max-seconds (default 500: a loaded machine is slow), fail
 * the run instead of hanging it.  Exit 0 pass, 1 fail, 2 usage/setup.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include "cc_common.h"

#define MAXT 4
#define MAXW 16

static struct cc_table exe_tb, lib_tb;
static int stop_flag;
static uint64_t calls[MAXT], wrong[MAXT];
static int nthreads = 3;

static void *worker(void *arg)
{
	int t = (int)(uintptr_t)arg;
	uint64_t s = 0x2545F4914F6CDD1Dull * (uint64_t)(t + 3);
	/* The workers never stop calling; niced, they leave the swapping
	 * thread its share of a small machine (Linux: per thread). */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		uint64_t r = cc_rand(&s);
		int ok;
		if (r & 1) {
			unsigned i = (unsigned)((r >> 1) % exe_tb.n);
			uint64_t x = bt_arg(BT_OBJ_EXE, i);
			ok = exe_tb.t[i](x) == bt_expect(BT_OBJ_EXE, i, x);
		} else {
			ok = cc_call_lib(&lib_tb, (unsigned)((r >> 1) % lib_tb.n));
		}
		if (!ok)
			__atomic_add_fetch(&wrong[t], 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&calls[t], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Watchdog: a worker without a call for 20 s is stuck. */
static void *watchdog(void *arg)
{
	(void)arg;
	uint64_t last[MAXT] = { 0 };
	int still[MAXT] = { 0 };
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		cc_sleep_us(1000000);
		for (int t = 0; t < nthreads; t++) {
			uint64_t c = __atomic_load_n(&calls[t], __ATOMIC_RELAXED);
			still[t] = c == last[t] ? still[t] + 1 : 0;
			last[t] = c;
			if (still[t] >= 20 && !__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
				char b[24];
				cc_write_str("swaps: FAIL: worker ");
				cc_write_str(cc_u64_text((uint64_t)t, b));
				cc_write_str(" made no call for 20 s\n");
				_exit(1);
			}
		}
	}
	return NULL;
}

struct region {
	const char *name;
	uintptr_t lo, hi;       /* the executable segment */
	uintptr_t w0;           /* first whole window */
	unsigned nwin;
	uint64_t pfn[MAXW];
};

static void region_init(struct region *g, const char *name, uintptr_t lo, uintptr_t hi, uint64_t H)
{
	g->name = name;
	g->lo = lo;
	g->hi = hi;
	g->w0 = (lo + H - 1) & ~(uintptr_t)(H - 1);
	uintptr_t w1 = hi & ~(uintptr_t)(H - 1);
	g->nwin = w1 > g->w0 ? (unsigned)((w1 - g->w0) / H) : 0;
	if (g->nwin > MAXW)
		g->nwin = MAXW;
}

/* The frame numbers of the windows' first pages; 0 where not visible. */
static void region_pfns(const struct region *g, uint64_t H, uint64_t *out)
{
	for (unsigned k = 0; k < g->nwin; k++) {
		uint64_t e = cc_pagemap((const void *)(g->w0 + k * H));
		out[k] = (e >> 63) & 1 ? e & ((1ull << 55) - 1) : 0;
	}
}

int main(int argc, char **argv)
{
	long target = 10000;
	double max_seconds = 500, plain_seconds = 3;
	int a = 1;
	for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
		if (!strcmp(argv[a], "--threads"))
			nthreads = atoi(argv[a + 1]);
		else if (!strcmp(argv[a], "--swaps"))
			target = atol(argv[a + 1]);
		else if (!strcmp(argv[a], "--max-seconds"))
			max_seconds = atof(argv[a + 1]);
		else if (!strcmp(argv[a], "--plain-seconds"))
			plain_seconds = atof(argv[a + 1]);
		else
			break;
	}
	if (argc - a != 1 || nthreads < 1 || nthreads > MAXT || target < 1) {
		fprintf(stderr, "usage: cc_swaps [--threads 1..4] [--swaps N] [--max-seconds S] "
		                "[--plain-seconds S] LIB\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	struct cc_api api;
	cc_api_find(&api);
	const char *lib = argv[a];
	void *h = dlopen(lib, RTLD_NOW);
	if (!h || cc_lib_table(h, &lib_tb) != 0) {
		printf("swaps: FAIL: cannot load %s: %s\n", lib, h ? "no bt_lib_table" : dlerror());
		return 2;
	}
	exe_tb.t = bt_exe_table;
	exe_tb.n = bt_exe_count;
	const uint64_t H = cc_pmd_size();
	const char *needle = strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib;
	struct region g[2];
	uintptr_t lo, hi;
	if (!et_find_text(NULL, ET_SEG_MEMSZ, &lo, &hi)) {
		printf("swaps: FAIL: the program's text segment not found\n");
		return 2;
	}
	region_init(&g[0], "program", lo, hi, H);
	if (!et_find_text(needle, ET_SEG_MEMSZ, &lo, &hi)) {
		printf("swaps: FAIL: %s not found among the loaded objects\n", needle);
		return 2;
	}
	region_init(&g[1], needle, lo, hi, H);
	if (g[0].nwin < 3 || g[1].nwin < 3) {
		printf("swaps: FAIL: expected >= 3 whole windows in each text, found %u and %u\n", g[0].nwin,
		       g[1].nwin);
		return 2;
	}
	printf("swaps: %s: %u windows, %s: %u windows, %d threads calling both; %s\n", g[0].name, g[0].nwin,
	       g[1].name, g[1].nwin, nthreads,
	       api.remap_range ? "the library is in the process: swapping" :
	                         "the library is not in the process: nothing to swap");

	pthread_t th[MAXT], wd;
	pthread_create(&wd, NULL, watchdog, NULL);
	for (int t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0) {
			printf("swaps: FAIL: pthread_create\n");
			return 2;
		}

	int fails = 0;
	long swaps = 0, rounds = 0, short_rounds = 0, same_frame = 0, frames_unseen = 0;
	int first_short = -1;
	double t0 = cc_now();
	if (api.remap_range) {
		for (int k = 0; k < 2; k++)
			region_pfns(&g[k], H, g[k].pfn);
		while (swaps < target) {
			struct region *r = &g[rounds & 1];
			int n = api.remap_range((const void *)r->lo, r->hi - r->lo);
			rounds++;
			if (n < 0) {
				printf("swaps: FAIL: enormoustext_remap_range(%s) returned %d\n", r->name, n);
				fails++;
				break;
			}
			if ((unsigned)n != r->nwin) {
				if (first_short < 0)
					first_short = n;
				short_rounds++;
			}
			swaps += n;
			uint64_t now[MAXW];
			region_pfns(r, H, now);
			for (unsigned k = 0; k < r->nwin; k++) {
				if (!now[k] || !r->pfn[k])
					frames_unseen++;
				else if (now[k] == r->pfn[k])
					same_frame++;
				r->pfn[k] = now[k];
			}
			if (cc_now() - t0 > max_seconds) {
				printf("swaps: FAIL: only %ld swaps in %.0f s (--max-seconds)\n", swaps, max_seconds);
				fails++;
				break;
			}
		}
	} else {
		while (cc_now() - t0 < plain_seconds)
			cc_sleep_us(100000);
	}
	double el = cc_now() - t0;
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	uint64_t total = 0, bad = 0;
	int idle = 0;
	for (int t = 0; t < nthreads; t++) {
		pthread_join(th[t], NULL);
		total += calls[t];
		bad += wrong[t];
		idle |= calls[t] == 0;
	}
	pthread_join(wd, NULL);
	/* Once more, every function, from this thread: the windows as they
	 * are at the end. */
	for (unsigned i = 0; i < exe_tb.n; i++) {
		uint64_t x = bt_arg(BT_OBJ_EXE, i);
		bad += exe_tb.t[i](x) != bt_expect(BT_OBJ_EXE, i, x);
	}
	for (unsigned i = 0; i < lib_tb.n; i++)
		bad += !cc_call_lib(&lib_tb, i);

	printf("swaps: %ld swaps in %ld remap_range calls in %.1f s; %llu calls by %d threads, %llu wrong\n",
	       swaps, rounds, el, (unsigned long long)total, nthreads, (unsigned long long)bad);
	if (api.remap_range) {
		printf("swaps: windows on the same page frame after a call: %ld; frames not visible: %ld\n",
		       same_frame, frames_unseen);
		if (swaps < target && !fails) {
			printf("swaps: FAIL: only %ld swaps\n", swaps);
			fails++;
		}
		if (short_rounds) {
			printf("swaps: FAIL: %ld calls moved fewer windows than the text has (first: %d)\n",
			       short_rounds, first_short);
			fails++;
		}
		if (same_frame) {
			printf("swaps: FAIL: %ld windows counted as swapped stayed on their page frame\n", same_frame);
			fails++;
		}
		if (frames_unseen)
			printf("swaps: (%ld window frames were not visible, not present or not root: those were not "
			       "checked)\n", frames_unseen);
	}
	printf("swaps: RESULT wrong=%llu every_thread_ran=%s\n", (unsigned long long)bad, idle ? "no" : "yes");
	if (bad) {
		printf("swaps: FAIL: %llu wrong results\n", (unsigned long long)bad);
		fails++;
	}
	if (idle) {
		printf("swaps: FAIL: a thread made no call\n");
		fails++;
	}
	printf("swaps: %s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
