/*
 * itlb_datamix — code and data competing for a shared second-level TLB:
 * the known program of itlbgrind's data-translation check.
 *
 *   itlb_datamix [--code-mib M] [--data-mib D] [--warm W] [--calls N] [--seed S]
 *
 * M MiB of code (default 6) generated at run time on 4 KiB pages
 * (MADV_NOHUGEPAGE), one function (a `ret`) at the start of each page,
 * called in a random order (xorshift64, seed S: the same sequence every
 * run); with D > 0 (default 0), each call also reads one random byte of a
 * D MiB anonymous buffer on 4 KiB pages (MADV_NOHUGEPAGE; never written:
 * the kernel maps its zero page, so the buffer costs no memory).  W calls
 * warm up (default 20000), snapshot "warm" (ITLBGRIND_SNAPSHOT), N calls
 * (default 50000), snapshot "end": the difference of the two records is N
 * steady-state calls.  On a core whose second level is shared by code and
 * data (Intel's STLB, Arm's unified L2 TLB), 6 MiB of code (1536 pages)
 * fits a 2048-entry array and walks rarely; the data reads, on pages of
 * their own each time, evict it.  On a core with a second-level iTLB of its
 * own (AMD Zen) the data reads change nothing for the code.  Prints the
 * code and data addresses.  Exit 0, 2 on bad usage, 3 when the pages could
 * not be had.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "itlbgrind.h"

static void usage(void)
{
	fprintf(stderr, "usage: itlb_datamix [--code-mib M] [--data-mib D] [--warm W] [--calls N] [--seed S]\n");
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

static uint64_t rng;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	unsigned long code_mib = 6, data_mib = 0, warm = 20000, calls = 50000, seed = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--code-mib") && i + 1 < argc)
			code_mib = num(argv[++i]);
		else if (!strcmp(argv[i], "--data-mib") && i + 1 < argc)
			data_mib = num(argv[++i]);
		else if (!strcmp(argv[i], "--warm") && i + 1 < argc)
			warm = num(argv[++i]);
		else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = num(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = num(argv[++i]);
		else
			usage();
	}
	if (code_mib == 0 || code_mib > 1024 || data_mib > 65536)
		usage();
	rng = seed ? seed : 1;
	size_t code_len = code_mib << 20, npages = code_len / 4096;
	uint8_t *code = mmap(NULL, code_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("itlb_datamix: mmap code");
		return 3;
	}
	madvise(code, code_len, MADV_NOHUGEPAGE);
	for (size_t k = 0; k < npages; k++)
		code[k * 4096] = 0xc3;   /* ret */
	if (mprotect(code, code_len, PROT_READ | PROT_EXEC)) {
		perror("itlb_datamix: mprotect");
		return 3;
	}
	size_t data_len = data_mib << 20, dpages = data_len / 4096;
	volatile uint8_t *data = NULL;
	if (data_len) {
		void *d = mmap(NULL, data_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (d == MAP_FAILED) {
			perror("itlb_datamix: mmap data");
			return 3;
		}
		madvise(d, data_len, MADV_NOHUGEPAGE);
		data = d;
	}
	printf("itlb_datamix: %zu code pages at %p, %zu data pages at %p, %lu + %lu calls\n", npages, (void *)code,
	       dpages, (void *)data, warm, calls);
	fflush(stdout);
	unsigned sum = 0;
	for (unsigned long i = 0; i < warm + calls; i++) {
		if (i == warm)
			ITLBGRIND_SNAPSHOT("warm");
		uint64_t r = next();
		((void (*)(void))(code + (r % npages) * 4096))();
		if (dpages) {
			uint64_t q = next();
			sum += data[(q % dpages) * 4096 + ((q >> 40) & 4095)];
		}
	}
	ITLBGRIND_SNAPSHOT("end");
	printf("itlb_datamix: done (%u)\n", sum);
	return 0;
}
