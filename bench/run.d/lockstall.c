/*
 * lockstall — how long a program thread waits for the loader's lock while
 * the library works: the main thread calls dl_iterate_phdr (what dlopen,
 * dlsym's callers and every C++ exception's unwinder go through) in a loop
 * for SECONDS of wall time and times each call.  Linked against a big-text
 * library, so that the deferred worker has windows to move meanwhile.
 *
 *   lockstall SECONDS
 *
 * Prints one line: calls N p50_us X p99_us X p9999_us X max_us X.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	++*(unsigned long *)arg;
	return 0;
}

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* latencies in 0.1 us buckets up to 200 ms (the last bucket: longer) */
#define NB 2000000u
static unsigned hist[NB];

static double pct(unsigned long n, double q)
{
	unsigned long want = (unsigned long)(n * q), seen = 0;
	for (unsigned b = 0; b < NB; b++) {
		seen += hist[b];
		if (seen > want)
			return b / 10.0;
	}
	return (NB - 1) / 10.0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	unsigned long objs = 0, n = 0;
	double max = 0, end = now_us() + secs * 1e6;
	for (double t = now_us(); t < end;) {
		dl_iterate_phdr(cb, &objs);
		double u = now_us(), d = u - t;
		unsigned b = (unsigned)(d * 10);
		hist[b < NB ? b : NB - 1]++;
		if (d > max)
			max = d;
		n++;
		t = u;
	}
	printf("calls %lu p50_us %.1f p99_us %.1f p9999_us %.1f max_us %.1f\n", n, pct(n, 0.5), pct(n, 0.99),
	       pct(n, 0.9999), max);
	return 0;
}
