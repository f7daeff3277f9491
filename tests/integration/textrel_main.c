/*
 * textrel_main.c — runs with libtextrel.so (text relocations): the
 * relocation must have been applied (the value is right) and every mapping
 * over the library's executable segment must still be its file, not an
 * anonymous copy.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "../lib/et_test.h"

int et_tr_value(void);

static uintptr_t seg_lo, seg_hi;

int main(void)
{
	int v = et_tr_value();
	if (v != 42) {
		printf("textrel: FAIL: value %d, expected 42\n", v);
		return 1;
	}
	/* the whole segment as loaded: all of it must still be the file */
	et_find_text("libtextrel.so", ET_SEG_MEMSZ, &seg_lo, &seg_hi);
	if (seg_hi - seg_lo < (4ul << 20)) {
		printf("textrel: FAIL: libtextrel.so's executable segment not found or too small\n");
		return 1;
	}
	char line[4096], path[4096];
	unsigned long a, b, covered = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f) {
		perror("/proc/self/maps");
		return 1;
	}
	while (fgets(line, sizeof line, f)) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %4095s", &a, &b, path) < 2 || b <= seg_lo || a >= seg_hi)
			continue;
		if (!strstr(path, "libtextrel.so")) {
			printf("textrel: FAIL: [%#lx, %#lx) inside libtextrel.so's text is %s, not the file\n", a, b,
			       path[0] ? path : "anonymous");
			return 1;
		}
		covered += (b < seg_hi ? b : seg_hi) - (a > seg_lo ? a : seg_lo);
	}
	fclose(f);
	printf("textrel: %lu of %lu bytes of libtextrel.so's text are still its file mapping\n", covered,
	       seg_hi - seg_lo);
	if (covered != seg_hi - seg_lo) {
		printf("textrel: FAIL: part of the text is not mapped\n");
		return 1;
	}
	printf("textrel: PASS\n");
	return 0;
}
