/*
 * memcpy — the reference the library's remap rate is held against: copy
 * MIB MiB from memory already touched into fresh anonymous memory (page
 * faults included, as the library's copies take them), and print MiB/s.
 *
 *   memcpy MIB
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	size_t len = mib << 20;
	char *src = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *dst = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED || dst == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(src, 0x5a, len);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	memcpy(dst, src, len);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%.1f\n", (double)mib / s);
	return dst[len - 1] != 0x5a;
}
