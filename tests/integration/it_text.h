/*
 * it_text.h — for the integration programs that load code at run time:
 * what /proc/self/smaps says backs the whole huge-page windows of an
 * object's executable segment (found with tests/lib/et_test.h).  Header-only, libc only.
 */
#ifndef IT_TEXT_H
#define IT_TEXT_H

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Where an object's executable segment is: et_find_text (tests/lib/et_test.h),
 * with ET_SEG_FILESZ: the file-backed bytes, whose windows these programs
 * measure. */
#include "../lib/et_test.h"

static inline uint64_t it_pmd_size(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? v : 2u << 20;
}

struct it_huge {
	uint64_t eligible;    /* bytes in whole windows of [lo, hi) */
	uint64_t anon;        /* AnonHugePages of the VMAs over them (capped per VMA) */
	uint64_t file;        /* FilePmdMapped, likewise */
	uint64_t hugetlb;
	uint64_t shared;      /* Shared_Clean + Shared_Dirty over the windows (capped per VMA) */
	uint64_t private_;    /* Private_Clean + Private_Dirty, likewise */
	uint64_t anon_rx;     /* bytes of anonymous r-x mappings inside [lo, hi) */
	uint64_t mapped;      /* bytes of [lo, hi) covered by any mapping */
};

/* What backs the windows of [lo, hi), from /proc/self/smaps. */
static inline int it_huge_of(uintptr_t lo, uintptr_t hi, uint64_t H, struct it_huge *r)
{
	memset(r, 0, sizeof *r);
	uintptr_t w0 = (lo + H - 1) & ~(uintptr_t)(H - 1), w1 = hi & ~(uintptr_t)(H - 1);
	r->eligible = w1 > w0 ? w1 - w0 : 0;
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[4096], perms[8], path[4096];
	unsigned long long a = 0, b = 0, kb;
	uint64_t in_win = 0;
	while (fgets(line, sizeof line, f)) {
		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %4095s", &a, &b, perms, path) >= 3) {
			uintptr_t x0 = a > lo ? a : lo, x1 = b < hi ? b : hi;
			r->mapped += x1 > x0 ? x1 - x0 : 0;
			if (x1 > x0 && !path[0] && perms[2] == 'x')
				r->anon_rx += x1 - x0;
			uintptr_t y0 = a > w0 ? a : w0, y1 = b < w1 ? b : w1;
			in_win = y1 > y0 ? y1 - y0 : 0;
			continue;
		}
		if (!in_win)
			continue;
		uint64_t *dst = NULL;
		if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			dst = &r->anon;
		else if (sscanf(line, "FilePmdMapped: %llu kB", &kb) == 1)
			dst = &r->file;
		else if (sscanf(line, "Shared_Clean: %llu kB", &kb) == 1 ||
		         sscanf(line, "Shared_Dirty: %llu kB", &kb) == 1)
			dst = &r->shared;
		else if (sscanf(line, "Private_Clean: %llu kB", &kb) == 1 ||
		         sscanf(line, "Private_Dirty: %llu kB", &kb) == 1)
			dst = &r->private_;
		else if (sscanf(line, "Private_Hugetlb: %llu kB", &kb) == 1 ||
		         sscanf(line, "Shared_Hugetlb: %llu kB", &kb) == 1)
			dst = &r->hugetlb;
		if (dst)
			*dst += kb * 1024 < in_win ? kb * 1024 : in_win;
	}
	fclose(f);
	return 0;
}

#endif
