/*
 * prog.c — the program bench/layout-cost links in every layout.
 *
 *   cc -c -DNPAGES=N prog.c; cc -o prog prog.o ...; ./prog [ROUNDS]
 *
 * N pages of text (a `ret` at the start of each 4 KiB page, the rest of the
 * page filled by the assembler with NOPs), all of them run, in order,
 * ROUNDS times (default 1: the iTLB model runs more); then one line on
 * stdout, in kB:
 *
 *   vmrss R rss T anonhuge A filepmd F
 *
 * R: VmRSS from /proc/self/status; T, A, F: the sums of Rss, AnonHugePages
 * and FilePmdMapped in /proc/self/smaps over the executable mappings that
 * overlap the program's own executable segment (found with dl_iterate_phdr:
 * the file's mapping, or the anonymous copies libenormoustext put there).
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef NPAGES
#define NPAGES 25
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

__asm__(".text\n"
        ".balign 4096\n"
        ".globl lc_text\n"
        ".type lc_text, %function\n"
        "lc_text:\n"
        ".rept " STR(NPAGES) "\n"
        ".balign 4096\n"
        "ret\n"
        ".endr\n"
        ".size lc_text, . - lc_text\n");

extern char lc_text[];
static uintptr_t lo, hi;

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uintptr_t a = info->dlpi_addr + ph->p_vaddr;
			if (!lo || a < lo)
				lo = a;
			if (a + ph->p_memsz > hi)
				hi = a + ph->p_memsz;
		}
	}
	return 1;   /* the program is the first object */
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1;
	for (long r = 0; r < rounds; r++)
		for (long k = 0; k < NPAGES; k++) {
			void (*f)(void);
			void *p = lc_text + 4096 * k;
			memcpy(&f, &p, sizeof f);
			f();
		}
	dl_iterate_phdr(first_object, NULL);

	unsigned long vmrss = 0, rss = 0, anon = 0, pmd = 0, v;
	char line[512];
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %lu", &v) == 1)
			vmrss = v;
	if (f)
		fclose(f);
	f = fopen("/proc/self/smaps", "r");
	if (!f) {
		perror("/proc/self/smaps");
		return 1;
	}
	int in = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long a, b;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3 && strlen(perms) == 4)
			in = perms[2] == 'x' && a < hi && b > lo;
		else if (in && sscanf(line, "Rss: %lu", &v) == 1)
			rss += v;
		else if (in && sscanf(line, "AnonHugePages: %lu", &v) == 1)
			anon += v;
		else if (in && sscanf(line, "FilePmdMapped: %lu", &v) == 1)
			pmd += v;
	}
	fclose(f);
	printf("vmrss %lu rss %lu anonhuge %lu filepmd %lu\n", vmrss, rss, anon, pmd);
	return 0;
}
