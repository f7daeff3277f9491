/*
 * itlb_pages — the known-answer program for itlbgrind: a hot loop that
 * touches exactly N distinct code pages, generated at run time.
 *
 *   itlb_pages --pages N [--stride BYTES] [--backing small|huge|collapse]
 *              [--iters I] [--threads T] [--fork] [--dlopen LIB:SYMBOL]
 *              [--snapshots]
 *
 * Page k of the loop (k = 0 .. N-1, at base + k * stride) holds one
 * instruction, a jump to page k+1; the last page holds `dec rcx; jz out;
 * movabs $page0, rax; jmp *rax; out: ret` (an absolute jump back, so that
 * strides of hundreds of MiB work).  One iteration is N + 3 instructions
 * and visits each page once, in order, so the misses per iteration follow
 * from the TLB geometry alone (bench/itlb/test.sh computes them).  The code is written into an
 * anonymous mapping while it is read-write, then made read+execute (never
 * both writable and executable).  --backing huge asks for transparent huge
 * pages (MADV_HUGEPAGE) and checks its own smaps that every 2 MiB window it
 * uses is huge; small (the default) forbids them (MADV_NOHUGEPAGE) and
 * checks that none is.  Exit 0 on success, 3 when the pages did not come out
 * as asked (the caller decides whether that is a skip), 2 on bad usage.
 *
 * --backing collapse gives no advice (THP "madvise" mode: small pages),
 * runs the loop, then collapses the code into huge pages with
 * madvise(MADV_COLLAPSE) and runs the loop again: what changes the page
 * size under a running program (exit 3 when the kernel cannot collapse).
 *
 * --snapshots (one thread, under itlbgrind) measures in one process what
 * two runs of different lengths would: the loop for I iterations (warm-up),
 * snapshot "a", I iterations, snapshot "b", 2I iterations, snapshot "c";
 * (c - b) - (b - a) is I steady-state iterations exactly, since each
 * measured stretch starts from the same state.  With --backing collapse the
 * three are taken on small pages ("small-a".."small-c") and again after the
 * collapse ("huge-a".."huge-c").
 *
 * --threads T runs the loop in T threads one after the other (each thread
 * starts on a new core with an empty TLB in itlbgrind's model); --fork runs
 * it in a child process as well as in the parent; --dlopen LIB:SYMBOL loads
 * LIB with dlopen after the loop and calls SYMBOL (a double (double)
 * function, e.g. libm.so.6:cos), then unloads it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itlbgrind.h"

#define H (2ul << 20)

static unsigned long npages = 0, stride = 4096, iters = 10, nthreads = 1;
static int huge, collapse, do_fork, snapshots;
static void (*entry)(long);
static char *dl_spec;

static void usage(void)
{
	fprintf(stderr, "usage: itlb_pages --pages N [--stride BYTES] [--backing small|huge|collapse] "
	                "[--iters I] [--threads T] [--fork] [--dlopen LIB:SYMBOL] [--snapshots]\n");
	exit(2);
}

static unsigned long num(const char *s)
{
	char *e;
	errno = 0;
	unsigned long v = strtoul(s, &e, 0);
	if (errno || *e || e == s)
		usage();
	return v;
}

static void put_rel32(uint8_t *at, uintptr_t next_insn, uintptr_t target)
{
	int32_t rel = (int32_t)((intptr_t)target - (intptr_t)next_insn);
	memcpy(at, &rel, 4);
}

/* kB of AnonHugePages in the VMA holding addr, or -1. */
static long anon_huge_kb(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0;
	long kb = -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {   /* a VMA's first line */
			in = addr >= lo && addr < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static void *run_loop(void *arg)
{
	(void)arg;
	entry((long)iters);
	return NULL;
}

/* Warm-up, then the snapshots: every stretch between two of them starts in
 * the state the previous loop call and this code leave. */
static volatile long counts[2];   /* loaded the same way for both calls */

static void measure(const char *phase)
{
	char a[32], b[32], c[32];
	counts[0] = (long)iters;
	counts[1] = 2 * (long)iters;
	snprintf(a, sizeof a, "%s-a", phase);
	snprintf(b, sizeof b, "%s-b", phase);
	snprintf(c, sizeof c, "%s-c", phase);
	entry(counts[0]);
	ITLBGRIND_SNAPSHOT(a);
	entry(counts[0]);
	ITLBGRIND_SNAPSHOT(b);
	entry(counts[1]);
	ITLBGRIND_SNAPSHOT(c);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pages") && i + 1 < argc)
			npages = num(argv[++i]);
		else if (!strcmp(argv[i], "--stride") && i + 1 < argc)
			stride = num(argv[++i]);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = num(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = num(argv[++i]);
		else if (!strcmp(argv[i], "--backing") && i + 1 < argc) {
			const char *b = argv[++i];
			if (!strcmp(b, "huge"))
				huge = 1;
			else if (!strcmp(b, "collapse"))
				collapse = 1;
			else if (strcmp(b, "small"))
				usage();
		} else if (!strcmp(argv[i], "--dlopen") && i + 1 < argc)
			dl_spec = argv[++i];
		else if (!strcmp(argv[i], "--snapshots"))
			snapshots = 1;
		else if (!strcmp(argv[i], "--fork"))
			do_fork = 1;
		else
			usage();
	}
	if (npages == 0 || stride < 4096 || stride % 4096 || stride >= (1ul << 31) || iters == 0 ||
	    nthreads == 0 || npages * stride >= (1ul << 44))
		usage();

	/* An H-aligned region of whole windows, so that huge pages are possible
	 * (reserved only: untouched windows cost nothing). */
	size_t len = ((npages - 1) * stride + 4096 + H - 1) & ~(H - 1);
	uint8_t *raw = mmap(NULL, len + H, PROT_READ | PROT_WRITE,
	                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED) {
		perror("itlb_pages: mmap");
		return 2;
	}
	uint8_t *base = (uint8_t *)(((uintptr_t)raw + H - 1) & ~(H - 1));
	if (base > raw)
		munmap(raw, (size_t)(base - raw));
	if (base + len < raw + len + H)
		munmap(base + len, (size_t)(raw + len + H - (base + len)));
	if (!collapse && madvise(base, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
		perror("itlb_pages: madvise");
		return 2;
	}

	for (unsigned long k = 0; k < npages; k++) {
		uint8_t *p = base + k * stride;
		uintptr_t a = (uintptr_t)p;
		if (k + 1 < npages) {
			p[0] = 0xE9;                              /* jmp rel32 -> page k+1 */
			put_rel32(p + 1, a + 5, a + stride);
		} else {
			uint64_t b = (uint64_t)(uintptr_t)base;
			p[0] = 0x48, p[1] = 0xFF, p[2] = 0xC9;    /* dec %rcx */
			p[3] = 0x74, p[4] = 0x0C;                 /* jz +12 (to the ret) */
			p[5] = 0x48, p[6] = 0xB8;                 /* movabs $page0, %rax */
			memcpy(p + 7, &b, 8);
			p[15] = 0xFF, p[16] = 0xE0;               /* jmp *%rax */
			p[17] = 0xC3;                             /* ret */
		}
	}
	/* The entry, once per call: mov %rdi,%rcx; jmp page 0 (in page 0). */
	uint8_t *e = base + 64;
	e[0] = 0x48, e[1] = 0x89, e[2] = 0xF9;
	e[3] = 0xE9;
	put_rel32(e + 4, (uintptr_t)e + 8, (uintptr_t)base);
	if (mprotect(base, len, PROT_READ | PROT_EXEC)) {
		perror("itlb_pages: mprotect");
		return 2;
	}
	entry = (void (*)(long))(uintptr_t)e;

	/* Did the pages come out as asked?  Every window the loop uses must be
	 * huge (huge) or none may be (small). */
	unsigned long used_windows = stride >= H ? npages : len / H;
	long kb = anon_huge_kb((uintptr_t)base);
	printf("itlb_pages: %lu pages, stride %lu, %s backing, %lu iterations, %lu thread(s)%s; "
	       "code at %p, AnonHugePages %ld kB of %lu windows\n",
	       npages, stride, huge ? "huge" : collapse ? "collapse" : "small", iters, nthreads, do_fork ? ", forked" : "",
	       (void *)base, kb, used_windows);
	fflush(stdout);
	if (huge ? kb != (long)(used_windows * (H >> 10)) : kb != 0) {
		fprintf(stderr, "itlb_pages: the code is not on the pages asked for (AnonHugePages %ld kB)\n", kb);
		return 3;
	}

	if (snapshots && (nthreads != 1 || do_fork))
		usage();
	if (collapse) {
		/* Small pages first, then the same code collapsed in place. */
		if (snapshots)
			measure("small");
		else
			run_loop(NULL);
		if (madvise(base, len, 25 /* MADV_COLLAPSE, Linux 6.1 */)) {
			fprintf(stderr, "itlb_pages: MADV_COLLAPSE failed: %s\n", strerror(errno));
			return 3;
		}
		kb = anon_huge_kb((uintptr_t)base);
		printf("itlb_pages: collapsed: AnonHugePages %ld kB\n", kb);
		fflush(stdout);
		if (kb != (long)(used_windows * (H >> 10))) {
			fprintf(stderr, "itlb_pages: MADV_COLLAPSE left the code small (AnonHugePages %ld kB)\n", kb);
			return 3;
		}
	}

	if (snapshots) {
		measure(collapse ? "huge" : "loop");
		return 0;
	}

	pid_t child = -1;
	if (do_fork) {
		child = fork();
		if (child < 0) {
			perror("itlb_pages: fork");
			return 2;
		}
	}
	for (unsigned long t = 0; t < nthreads; t++) {
		if (nthreads == 1) {
			run_loop(NULL);
			break;
		}
		pthread_t th;
		if (pthread_create(&th, NULL, run_loop, NULL) || pthread_join(th, NULL)) {
			fprintf(stderr, "itlb_pages: thread failed\n");
			return 2;
		}
	}
	if (dl_spec && child != 0) {
		char *sym = strchr(dl_spec, ':');
		if (!sym)
			usage();
		*sym++ = 0;
		void *h = dlopen(dl_spec, RTLD_NOW | RTLD_LOCAL);
		double (*fn)(double) = h ? (double (*)(double))(uintptr_t)dlsym(h, sym) : NULL;
		if (!fn) {
			fprintf(stderr, "itlb_pages: dlopen %s / dlsym %s: %s\n", dl_spec, sym, dlerror());
			return 2;
		}
		double acc = 0;
		for (int i = 0; i < 1000; i++)
			acc += fn(i * 0.001);
		printf("itlb_pages: %s:%s summed to %.6f\n", dl_spec, sym, acc);
		dlclose(h);
	}
	if (child == 0)
		_exit(0);
	if (child > 0) {
		int st;
		if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "itlb_pages: the child failed\n");
			return 2;
		}
	}
	return 0;
}
