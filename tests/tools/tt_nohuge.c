/*
 * tt_nohuge.c — a preloaded shim for tool_prime: the first TT_NOHUGE
 * madvise(MADV_HUGEPAGE) calls of the command do nothing (and say 0), so
 * the window it reads back next comes into the page cache in small pages,
 * as it does when readahead finds no free huge page.  Deterministic, where
 * fragmenting a host's memory is not.  TT_NOHUGE_LOG=FILE: one line per
 * call, "skipped" or "done".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int madvise(void *addr, size_t len, int advice)
{
	static int (*real)(void *, size_t, int);
	static long left = -1;
	if (!real)
		real = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "madvise");
	if (advice != MADV_HUGEPAGE)
		return real(addr, len, advice);
	if (left < 0) {
		const char *n = getenv("TT_NOHUGE");
		left = n ? atol(n) : 0;
	}
	const char *log = getenv("TT_NOHUGE_LOG");
	FILE *f = log ? fopen(log, "a") : NULL;
	if (f) {
		fprintf(f, "%s\n", left > 0 ? "skipped" : "done");
		fclose(f);
	}
	if (left > 0) {
		left--;
		return 0;
	}
	return real(addr, len, advice);
}
