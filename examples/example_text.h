/*
 * example_text.h — what the examples print about themselves: how much of
 * this program's executable segment /proc/self/smaps shows on huge pages.
 */
#ifndef EXAMPLE_TEXT_H
#define EXAMPLE_TEXT_H

#include <link.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A program at work for `ms` milliseconds: run(), over and over.  By
 * default the library moves the text of a process that lives longer than
 * a second (ENORMOUSTEXT_DEFER=1s), on a thread of its own, while the
 * program runs; a program that ends sooner is left alone.  Returns the
 * last result of run(). */
static int example_work(int (*run)(void), long ms)
{
	struct timespec t0, t;
	int r;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		r = run();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L < ms);
	return r;
}

static int et_ex_main_seg(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	unsigned long *seg = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			seg[0] = info->dlpi_addr + ph->p_vaddr;
			seg[1] = seg[0] + ph->p_memsz;
		}
	}
	return 1;    /* the first object is the program */
}

/* Prints "NAME: X of Y MiB of this program's text on huge pages (P%)". */
static void example_report(const char *name)
{
	unsigned long seg[2] = { 0, 0 }, huge = 0, lo = 0, hi = 0;
	dl_iterate_phdr(et_ex_main_seg, seg);
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	while (f && fgets(line, sizeof line, f)) {
		unsigned long a, b, kb;
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			lo = a > seg[0] ? a : seg[0];
			hi = b < seg[1] ? b : seg[1];
		} else if (hi > lo && (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1 ||
		                       sscanf(line, "FilePmdMapped: %lu kB", &kb) == 1 ||
		                       sscanf(line, "Private_Hugetlb: %lu kB", &kb) == 1)) {
			huge += kb * 1024 < hi - lo ? kb * 1024 : hi - lo;
		}
	}
	if (f)
		fclose(f);
	unsigned long len = seg[1] - seg[0];
	printf("%s: %.1f of %.1f MiB of this program's text on huge pages (%.0f%%)\n", name,
	       huge / 1048576.0, len / 1048576.0, len ? 100.0 * (double)huge / (double)len : 0.0);
}
#endif
