/*
 * partrun — the program of integration.defaults.copies: 8 MiB of text of
 * its own (the generated functions, bt_exe_funcs.c, 4 KiB each), of which
 * it runs the functions of one 2 MiB window only for a while, then,
 * optionally, all of them.  What a deferred pass of libenormoustext sees
 * in its page tables then (ENORMOUSTEXT_COPY_MIN) is one window that ran
 * and others of which almost nothing did.
 *
 *   partrun [--hot-ms MS] [--all-ms MS] [--sample-ms MS]
 *
 *   --hot-ms MS     for MS milliseconds (default 1500), call the functions
 *                   that lie in the window holding the middle function,
 *                   and only those, over and over
 *   --all-ms MS     then, for MS milliseconds (default 0), call every
 *                   function, over and over
 *   --sample-ms MS  at MS milliseconds into the hot phase (default 900),
 *                   print how much of each window is in the page tables
 *                   (/proc/self/pagemap): what the pass will see
 *
 * Prints, first, "partrun: windows N hot K congruent yes|no": its eligible
 * windows as bigtext counts them (H-aligned, H-sized, wholly inside its
 * executable PT_LOAD), in address order — the order of the report's
 * window_kinds —, the index of the hot one, and whether the window's
 * address and file offset agree modulo H (a congruent window could be
 * primed into zero-copy); then the sample, "partrun: window I: P KiB
 * present", one line a window; and at the end every function called once
 * more, "partrun: results: ... wrong, checksum ...".
 *
 * It keeps its CPU busy, never sleeping: the library's deferral on the
 * program's own thread (ENORMOUSTEXT_DEFER_ON=main, the default) finds
 * its moment on a tick of the thread's CPU time (every 10 ms of it), so a
 * program that mostly slept would see the pass, and the try 1 s after it,
 * late by as long as it took to use 10 ms of CPU (about a second, when
 * this one slept 5 ms between rounds) — past the hot phase, when every
 * window has run.  Exit 0 when every
 * result was right, 1 when one was not, 2 when the set-up is broken.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bigtext.h"

static uintptr_t g_lo, g_hi;  /* the eligible windows [g_lo, g_hi) */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static __attribute__((noreturn)) void die(const char *what)
{
	printf("partrun: ERROR: %s\n", what);
	fflush(stdout);
	exit(2);
}

static uint64_t pmd_size(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");

	if (!f || fscanf(f, "%llu", &v) != 1 || v < 4096 || (v & (v - 1)))
		die("cannot read the PMD size");
	fclose(f);
	return v;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t H = *(uint64_t *)data;
	uintptr_t probe = (uintptr_t)bt_exe_table[bt_exe_count / 2];

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || probe < a || probe >= a + ph->p_memsz)
			continue;
		g_lo = (a + H - 1) & ~(uintptr_t)(H - 1);
		g_hi = g_lo;
		while (g_hi + H <= a + ph->p_memsz)
			g_hi += H;
		return 1;
	}
	return 0;
}

/* Do the window's address and file offset agree modulo H?  From the
 * mapping that holds it in /proc/self/maps. */
static int congruent(uintptr_t addr, uint64_t H)
{
	char line[4096];
	int r = -1;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		die("cannot read /proc/self/maps");
	while (r < 0 && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		unsigned long long off;

		if (sscanf(line, "%lx-%lx %*s %llx", &lo, &hi, &off) == 3 && addr >= lo && addr < hi)
			r = ((lo - off) & (H - 1)) == 0;
	}
	fclose(f);
	if (r < 0)
		die("the hot window is in no mapping of /proc/self/maps");
	return r;
}

/* KiB of [lo, lo + len) in this process's page tables. */
static uint64_t present_kib(int fd, uintptr_t lo, uint64_t len, long page)
{
	uint64_t n = 0, e[512];
	uint64_t pages = len / (uint64_t)page;

	for (uint64_t done = 0; done < pages;) {
		uint64_t want = pages - done < 512 ? pages - done : 512;
		ssize_t got = pread(fd, e, want * 8, (off_t)((lo / (uint64_t)page + done) * 8));

		if (got <= 0)
			die("cannot read /proc/self/pagemap");
		for (ssize_t i = 0; i < got / 8; i++)
			n += (e[i] >> 63) & 1;
		done += (uint64_t)got / 8;
	}
	return n * (uint64_t)page / 1024;
}

int main(int argc, char **argv)
{
	long hot_ms = 1500, all_ms = 0, sample_ms = 900;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t H = pmd_size();
	unsigned *hot, nhot = 0, wrong = 0;

	for (int i = 1; i < argc; i++) {
		long *dst = !strcmp(argv[i], "--hot-ms") ? &hot_ms : !strcmp(argv[i], "--all-ms") ? &all_ms
			  : !strcmp(argv[i], "--sample-ms") ? &sample_ms : NULL;
		char *end;

		if (!dst || i + 1 >= argc)
			die("usage: partrun [--hot-ms MS] [--all-ms MS] [--sample-ms MS]");
		*dst = strtol(argv[++i], &end, 10);
		if (*end || *dst < 0)
			die("a duration in milliseconds, please");
	}
	dl_iterate_phdr(phdr_cb, &H);
	if (g_hi - g_lo < 3 * H)
		die("fewer than 3 whole windows of text: the program is too small to test anything");
	uintptr_t hot_lo = (uintptr_t)bt_exe_table[bt_exe_count / 2] & ~(uintptr_t)(H - 1);
	hot = malloc(bt_exe_count * sizeof *hot);
	if (!hot)
		die("out of memory");
	for (unsigned i = 0; i < bt_exe_count; i++)
		if ((uintptr_t)bt_exe_table[i] >= hot_lo && (uintptr_t)bt_exe_table[i] + 4096 <= hot_lo + H)
			hot[nhot++] = i;
	printf("partrun: windows %u hot %u congruent %s\n", (unsigned)((g_hi - g_lo) / H),
	       (unsigned)((hot_lo - g_lo) / H), congruent(hot_lo, H) ? "yes" : "no");
	printf("partrun: the hot window holds %u of the %u functions (%u KiB)\n", nhot, bt_exe_count, nhot * 4);
	fflush(stdout);

	double t0 = now_s();
	int sampled = 0;
	do {
		for (unsigned k = 0; k < nhot; k++) {
			uint64_t x = bt_arg(BT_OBJ_EXE, hot[k]);
			wrong += bt_exe_table[hot[k]](x) != bt_expect(BT_OBJ_EXE, hot[k], x);
		}
		if (!sampled && (now_s() - t0) * 1000 >= (double)sample_ms) {
			int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				die("cannot open /proc/self/pagemap");
			for (uintptr_t w = g_lo; w < g_hi; w += H)
				printf("partrun: window %u: %" PRIu64 " KiB present\n", (unsigned)((w - g_lo) / H),
				       present_kib(fd, w, H, page));
			close(fd);
			fflush(stdout);
			sampled = 1;
		}
	} while ((now_s() - t0) * 1000 < (double)hot_ms);
	if (all_ms > 0) {
		printf("partrun: now every function, for %ld ms\n", all_ms);
		fflush(stdout);
		t0 = now_s();
		do {
			for (unsigned i = 0; i < bt_exe_count; i++) {
				uint64_t x = bt_arg(BT_OBJ_EXE, i);
				wrong += bt_exe_table[i](x) != bt_expect(BT_OBJ_EXE, i, x);
			}
		} while ((now_s() - t0) * 1000 < (double)all_ms);
	}
	uint64_t sum = 0;
	unsigned bad = 0;
	for (unsigned i = 0; i < bt_exe_count; i++) {
		uint64_t x = bt_arg(BT_OBJ_EXE, i), r = bt_exe_table[i](x);
		bad += r != bt_expect(BT_OBJ_EXE, i, x);
		sum = (sum ^ r) * 0x100000001B3ull;
	}
	printf("partrun: results: %u functions called, %u wrong, checksum %016" PRIx64 "\n", bt_exe_count, bad, sum);
	if (wrong)
		printf("partrun: FAIL: %u wrong results while running\n", wrong);
	return bad || wrong ? 1 : 0;
}
