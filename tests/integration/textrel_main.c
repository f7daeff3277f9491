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

int et_tr_value(void);

static unsigned long seg_lo, seg_hi;

static int find_seg(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libtextrel.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			seg_lo = info->dlpi_addr + ph->p_vaddr;
			seg_hi = seg_lo + ph->p_memsz;
		}
	}
	return 1;
}

int main(void)
{
	int v = et_tr_value();
	if (v != 42) {
		printf("textrel: FAIL: value %d, expected 42\n", v);
		return 1;
	}
	dl_iterate_phdr(find_seg, NULL);
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
