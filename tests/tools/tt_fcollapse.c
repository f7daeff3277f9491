/*
 * tt_fcollapse FILE OFFSET — tool_prime_collapse's own probe of what the
 * kernel does with MADV_COLLAPSE on file text, independent of pagecache.c:
 * FILE's PMD-sized window at OFFSET (a multiple of the PMD size) mapped
 * read-only and executable at a PMD-aligned address, then MADV_COLLAPSE.
 * Prints "works" (the call returned 0) or "error MESSAGE" (strerror of its
 * errno); exits 0 either way, 2 when it cannot even map the window.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: tt_fcollapse FILE OFFSET\n");
		return 2;
	}
	size_t H = 2u << 20;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	unsigned long v;
	if (f && fscanf(f, "%lu", &v) == 1)
		H = v;
	if (f)
		fclose(f);
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	char *r = mmap(NULL, 2 * H, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *a = (char *)(((uintptr_t)r + H - 1) & ~(uintptr_t)(H - 1));
	if (r == MAP_FAILED ||
	    mmap(a, H, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, (off_t)strtoull(argv[2], NULL, 0)) != a) {
		perror("mmap");
		return 2;
	}
	madvise(a, H, MADV_HUGEPAGE);
	if (madvise(a, H, MADV_COLLAPSE) == 0)
		printf("works\n");
	else
		printf("error %s\n", strerror(errno));
	return 0;
}
