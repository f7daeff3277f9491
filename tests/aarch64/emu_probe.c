/*
 * emu_probe.c — what the machine running this program (under qemu-user,
 * or natively) gives the library: one KEY=VALUE line per finding, for
 * tests/aarch64/run.sh, which prints them and decides from them what can
 * be checked.
 *
 *   text_maps=PERMS        permissions of this program's text in /proc/self/maps
 *   text_smaps=PERMS       ... in /proc/self/smaps (qemu-user 7.2 emulates
 *                          maps but passes the host's smaps through)
 *   same_addresses=0|1     the text's VMA has the same start in both files
 *                          (guest addresses are host addresses)
 *   madvise_bogus=RC       madvise() with an advice no kernel knows (0 means
 *                          madvise is not handed to a kernel at all)
 *   madv_hugepage=RC/FLAG  MADV_HUGEPAGE on an aligned anonymous range; FLAG
 *                          is 1 when smaps then shows VmFlags "hg"
 *   anon_huge_kb=N         AnonHugePages of that range once touched
 *   madv_collapse=RC/N     MADV_COLLAPSE on it, and AnonHugePages after
 *   vdso=0|1               AT_SYSINFO_EHDR is set
 *   page_size=N            AT_PAGESZ
 *
 * Exit 0 (2 when /proc/self/maps cannot be read).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

struct vma {
	unsigned long lo, hi;
	char perms[8];
	int hg;                 /* VmFlags has "hg" */
	unsigned long anon_huge; /* kB */
	int found;
};

/* The VMA holding addr in FILE (maps or smaps). */
static int vma_of(const char *file, uintptr_t addr, struct vma *v)
{
	FILE *f = fopen(file, "r");
	char line[1024];
	int in = 0;

	memset(v, 0, sizeof *v);
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3) {
			if (in)
				break;
			in = addr >= lo && addr < hi;
			if (in) {
				v->lo = lo;
				v->hi = hi;
				snprintf(v->perms, sizeof v->perms, "%s", perms);
				v->found = 1;
			}
			continue;
		}
		if (!in)
			continue;
		if (!strncmp(line, "AnonHugePages:", 14))
			v->anon_huge = strtoul(line + 14, NULL, 10);
		else if (!strncmp(line, "VmFlags:", 8))
			v->hg = strstr(line, " hg") != NULL;
	}
	fclose(f);
	return v->found ? 0 : -1;
}

int main(void)
{
	const uintptr_t H = 2u << 20;
	struct vma m, s, a;
	uintptr_t text = (uintptr_t)&main;

	if (vma_of("/proc/self/maps", text, &m) != 0) {
		printf("error=cannot read /proc/self/maps\n");
		return 2;
	}
	vma_of("/proc/self/smaps", text, &s);
	printf("text_maps=%s\n", m.perms);
	printf("text_smaps=%s\n", s.found ? s.perms : "none");
	printf("same_addresses=%d\n", s.found && s.lo == m.lo);

	errno = 0;
	long rc = madvise((void *)(text & ~(uintptr_t)4095), 4096, 12345);
	printf("madvise_bogus=%ld%s%s\n", rc, rc ? "/" : "", rc ? strerror(errno) : "");

	char *p = mmap(NULL, 3 * H, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		printf("error=mmap: %s\n", strerror(errno));
		return 0;
	}
	char *w = (char *)(((uintptr_t)p + H - 1) & ~(H - 1));
	rc = madvise(w, H, MADV_HUGEPAGE);
	memset(w, 1, H);
	vma_of("/proc/self/smaps", (uintptr_t)w, &a);
	printf("madv_hugepage=%ld/%d\n", rc, a.hg);
	printf("anon_huge_kb=%lu\n", a.anon_huge);
	rc = madvise(w, H, MADV_COLLAPSE);
	vma_of("/proc/self/smaps", (uintptr_t)w, &a);
	printf("madv_collapse=%ld/%lu\n", rc, a.anon_huge);
	printf("vdso=%d\n", getauxval(AT_SYSINFO_EHDR) != 0);
	printf("page_size=%lu\n", getauxval(AT_PAGESZ));
	return 0;
}
