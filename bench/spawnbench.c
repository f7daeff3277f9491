/*
 * spawnbench.c — start-up cost of a program with and without an LD_PRELOAD,
 * measured the way bench/ measures everything: A and B alternated in one go.
 *
 *   spawnbench [-p PAIRS] [-r RUNS] [-w FILE] [-a BASE] LIBRARY PROGRAM [ARGS...]
 *
 * Each pair runs RUNS executions plain (A) and RUNS with LD_PRELOAD=LIBRARY
 * (B), interleaved one by one (A B A B ...: the machine's drift hits both
 * alike), timing each with CLOCK_MONOTONIC around posix_spawn + waitpid; the
 * pair's ratio is median(B) / median(A) (medians drop the runs the noisy
 * machine disturbed).  Prints every pair, then the median ratio and the
 * spread (min..max) over pairs.
 *
 * -w FILE: the host-wide way in.  Each B run is made with FILE.on renamed to
 * FILE (e.g. /etc/ld.so.preload naming the library) and renamed back after
 * it, so that A runs see no FILE; LIBRARY "-" adds no LD_PRELOAD to B.
 *
 * -a BASE: A runs with LD_PRELOAD=BASE instead of plain (e.g. an empty
 * library: what the library costs beyond what any preloaded library costs).
 *
 * -1: one side only (LIBRARY "-"): RUNS plain executions, after 20 to warm
 * up, and one line "median NS runs RUNS": for a state of the host that
 * cannot be switched between two executions (a daemon running or not:
 * bench/startup-cost --daemon alternates it pair by pair).
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* FILE.on -> FILE (in), or FILE -> FILE.on (out) */
static void swap_file(const char *f, int in)
{
	char on[4096];
	snprintf(on, sizeof on, "%s.on", f);
	if (rename(in ? on : f, in ? f : on) != 0) {
		perror(in ? on : f);
		exit(1);
	}
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static uint64_t run_once(char **argv, char **envp)
{
	pid_t pid;
	uint64_t t0 = now_ns();
	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, envp) != 0) {
		perror(argv[0]);
		exit(1);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "spawnbench: %s failed\n", argv[0]);
		exit(1);
	}
	return now_ns() - t0;
}

/* one B run: with FILE swapped in for it (-w), else as it is */
static uint64_t run_b(char **argv, char **envp, const char *swap)
{
	if (swap)
		swap_file(swap, 1);
	uint64_t t = run_once(argv, envp);
	if (swap)
		swap_file(swap, 0);
	return t;
}

int main(int argc, char **argv)
{
	int pairs = 11, runs = 200, opt, one = 0;
	const char *swap = NULL, *base = NULL;
	while ((opt = getopt(argc, argv, "+p:r:w:a:1")) != -1) {
		if (opt == '1') one = 1;
		else if (opt == 'p') pairs = atoi(optarg);
		else if (opt == 'r') runs = atoi(optarg);
		else if (opt == 'w') swap = optarg;
		else if (opt == 'a') base = optarg;
		else return 2;
	}
	if (argc - optind < 2 || pairs < 1 || runs < 1) {
		fprintf(stderr, "usage: spawnbench [-p PAIRS] [-r RUNS] [-w FILE] [-a BASE] [-1] LIBRARY PROGRAM [ARGS...]\n");
		return 2;
	}
	const char *lib = argv[optind];
	char **prog = argv + optind + 1;

	/* B's environment: ours plus LD_PRELOAD; A's: ours without LD_PRELOAD. */
	size_t n = 0;
	while (environ[n]) n++;
	char **ea = calloc(n + 2, sizeof *ea), **eb = calloc(n + 2, sizeof *eb);
	size_t ia = 0, ib = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(environ[i], "LD_PRELOAD=", 11)) continue;
		ea[ia++] = environ[i];
		eb[ib++] = environ[i];
	}
	char *pre = malloc(strlen(lib) + 12);
	sprintf(pre, "LD_PRELOAD=%s", lib);
	if (strcmp(lib, "-"))
		eb[ib++] = pre;
	if (base) {
		char *pa = malloc(strlen(base) + 12);
		sprintf(pa, "LD_PRELOAD=%s", base);
		ea[ia++] = pa;
	}

	uint64_t *ta = calloc((size_t)runs, sizeof *ta), *tb = calloc((size_t)runs, sizeof *tb);
	if (one) {
		for (int i = 0; i < 20; i++)
			run_once(prog, ea);
		for (int r = 0; r < runs; r++)
			ta[r] = run_once(prog, ea);
		qsort(ta, (size_t)runs, sizeof *ta, cmp_u64);
		printf("median %llu runs %d\n", (unsigned long long)ta[runs / 2], runs);
		return 0;
	}
	double *ratio = calloc((size_t)pairs, sizeof *ratio);
	for (int i = 0; i < 20; i++) { run_once(prog, ea); run_b(prog, eb, swap); }   /* warm up */
	for (int p = 0; p < pairs; p++) {
		for (int r = 0; r < runs; r++) {
			ta[r] = run_once(prog, ea);
			tb[r] = run_b(prog, eb, swap);
		}
		qsort(ta, (size_t)runs, sizeof *ta, cmp_u64);
		qsort(tb, (size_t)runs, sizeof *tb, cmp_u64);
		double a = (double)ta[runs / 2], b = (double)tb[runs / 2];
		ratio[p] = b / a;
		printf("pair %2d: %s %8.1f us, preloaded %8.1f us (medians of %d), ratio %.4f\n",
		       p, base ? "base" : "plain", a / 1e3, b / 1e3, runs, ratio[p]);
	}
	qsort(ratio, (size_t)pairs, sizeof *ratio, cmp_d);
	double med = pairs % 2 ? ratio[pairs / 2] : (ratio[pairs / 2 - 1] + ratio[pairs / 2]) / 2;
	printf("median ratio %.4f spread %.4f..%.4f pairs %d runs %d\n", med, ratio[0], ratio[pairs - 1], pairs, runs);
	return 0;
}
