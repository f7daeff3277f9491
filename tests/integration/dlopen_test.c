/*
 * dlopen_test.c — libraries loaded after start-up go huge too.
 *
 *   dlopen_test [--expect-none] LIB          dlopen, call every function, check
 *                                            the windows, dlclose (nothing of ours
 *                                            left), dlopen again, check again
 *   dlopen_test --dlmopen LIB                the same through dlmopen(LM_ID_NEWLM)
 *   dlopen_test --ctor CTORLIB BIGLIB        CTORLIB's constructor dlopens BIGLIB
 *                                            (path in IT_CTOR_DLOPEN); BIGLIB huge
 *   dlopen_test --expect-padded LIB          as the first form, and LIB's partial
 *                                            last window must be huge too (padded)
 *
 * LIB is a copy of libbigtext.so (bt_lib_table).  Exit 0 pass, 1 fail.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtext.h"
#include "it_text.h"

static int failures;
static int expect_padded;

#define FAIL(...) do { printf("dlopen_test: FAIL: " __VA_ARGS__); printf("\n"); failures++; } while (0)

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Call every function of the library through its table. */
static void call_all(void *h, const char *what)
{
	const bt_fn *(*table_of)(unsigned *) = (const bt_fn *(*)(unsigned *))dlsym(h, "bt_lib_table");
	if (!table_of) {
		FAIL("%s: no bt_lib_table: %s", what, dlerror());
		return;
	}
	unsigned n = 0, wrong = 0;
	const bt_fn *t = table_of(&n);
	for (unsigned i = 0; i < n; i++)
		if (t[i](bt_arg(BT_OBJ_LIB, i)) != bt_expect(BT_OBJ_LIB, i, bt_arg(BT_OBJ_LIB, i)))
			wrong++;
	printf("dlopen_test: %s: %u functions called, %u wrong\n", what, n, wrong);
	if (n == 0 || wrong)
		FAIL("%s: %u of %u results wrong", what, wrong, n);
}

/* The executable segment of handle h's object: dl_iterate_phdr shows only
 * our own namespace, so for dlmopen read it from the object's ELF header. */
static int find_seg(void *h, const char *needle, uintptr_t *lo, uintptr_t *hi)
{
	if (et_find_text(needle, ET_SEG_FILESZ, lo, hi))
		return 1;
	struct link_map *lm = NULL;
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_addr)
		return 0;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)lm->l_addr;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(lm->l_addr + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			*lo = lm->l_addr + ph[i].p_vaddr;
			*hi = *lo + ph[i].p_filesz;
			return 1;
		}
	return 0;
}

/* The windows of the object whose path contains needle: all huge (or none). */
static void check_windows(void *h, const char *needle, int expect_huge, const char *what)
{
	uintptr_t lo, hi;
	if (!find_seg(h, needle, &lo, &hi)) {
		FAIL("%s: %s is not loaded", what, needle);
		return;
	}
	struct it_huge r;
	if (it_huge_of(lo, hi, it_pmd_size(), &r) != 0) {
		FAIL("%s: cannot read /proc/self/smaps", what);
		return;
	}
	uint64_t huge = r.anon + r.file + r.hugetlb;
	printf("dlopen_test: %s: %s text [%#lx, %#lx): %llu of %llu eligible bytes huge (anon %llu, file %llu, hugetlb %llu)\n",
	       what, needle, (unsigned long)lo, (unsigned long)hi, (unsigned long long)huge,
	       (unsigned long long)r.eligible, (unsigned long long)r.anon, (unsigned long long)r.file,
	       (unsigned long long)r.hugetlb);
	if (r.eligible == 0)
		FAIL("%s: %s has no whole window: the test library is too small", what, needle);
	else if (expect_huge && huge * 100 < r.eligible * 95)
		FAIL("%s: only %llu of %llu eligible bytes of %s are huge", what, (unsigned long long)huge,
		     (unsigned long long)r.eligible, needle);
	else if (!expect_huge && huge)
		FAIL("%s: %llu bytes of %s are huge, expected none", what, (unsigned long long)huge, needle);
}

/* After dlclose: nothing of ours (anonymous r-x) left where the text was. */
static void check_gone(uintptr_t lo, uintptr_t hi, const char *what)
{
	struct it_huge r;
	if (it_huge_of(lo, hi, it_pmd_size(), &r) != 0) {
		FAIL("%s: cannot read /proc/self/smaps", what);
		return;
	}
	printf("dlopen_test: %s: after dlclose, %llu bytes of anonymous r-x mappings in [%#lx, %#lx)\n",
	       what, (unsigned long long)r.anon_rx, (unsigned long)lo, (unsigned long)hi);
	if (r.anon_rx)
		FAIL("%s: %llu bytes of anonymous executable mappings left behind after dlclose", what,
		     (unsigned long long)r.anon_rx);
}

/* The partial last window of [lo, hi): padded by the library, so huge. */
static void check_padded(uintptr_t lo, uintptr_t hi, const char *what)
{
	uint64_t H = it_pmd_size();
	if (!(hi & (H - 1))) {
		FAIL("%s: the text ends on a window boundary: nothing to pad", what);
		return;
	}
	uintptr_t w = hi & ~(uintptr_t)(H - 1);
	struct it_huge r;
	if (w < lo || it_huge_of(w, w + H, H, &r) != 0) {
		FAIL("%s: cannot look at the last window", what);
		return;
	}
	printf("dlopen_test: %s: last window [%#lx, %#lx) holds %#lx bytes of text; huge: anon %llu, file %llu\n",
	       what, (unsigned long)w, (unsigned long)(w + H), (unsigned long)(hi - w),
	       (unsigned long long)r.anon, (unsigned long long)r.file);
	if (r.anon + r.file + r.hugetlb < H)
		FAIL("%s: the partial last window is not huge (not padded)", what);
}

static int round_trip(const char *lib, int expect_huge, int use_dlmopen)
{
	const char *needle = base(lib);
	uintptr_t lo = 0, hi = 0;
	for (int round = 1; round <= 2; round++) {
		char what[64];
		snprintf(what, sizeof what, "%s #%d", use_dlmopen ? "dlmopen" : "dlopen", round);
#ifdef LM_ID_NEWLM
		void *h = use_dlmopen ? dlmopen(LM_ID_NEWLM, lib, RTLD_NOW | RTLD_LOCAL)
		                      : dlopen(lib, RTLD_NOW | RTLD_LOCAL);
#else
		void *h = use_dlmopen ? NULL : dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (use_dlmopen)
			printf("dlopen_test: no dlmopen in this C library\n");
#endif
		if (!h) {
			FAIL("%s: %s: %s", what, lib, dlerror());
			return 1;
		}
		call_all(h, what);
		check_windows(h, needle, expect_huge, what);
		if (!find_seg(h, needle, &lo, &hi))
			FAIL("%s: %s not found", what, needle);
		if (expect_padded)
			check_padded(lo, hi, what);
		/* After dlclose, nothing of ours in any window the text touched
		 * (padding included). */
		uint64_t H = it_pmd_size();
		lo &= ~(uintptr_t)(H - 1);
		hi = (hi + H - 1) & ~(uintptr_t)(H - 1);
		if (dlclose(h) != 0)
			FAIL("%s: dlclose: %s", what, dlerror());
		uintptr_t lo2, hi2;
#ifdef __GLIBC__
		if (et_find_text(needle, ET_SEG_FILESZ, &lo2, &hi2))
			FAIL("%s: %s still loaded after dlclose", what, needle);
		else
			check_gone(lo, hi, what);
#else
		/* musl never unloads: dlclose is a no-op there. */
		if (et_find_text(needle, ET_SEG_FILESZ, &lo2, &hi2))
			printf("dlopen_test: %s: still loaded after dlclose (this C library never unloads)\n", what);
		else
			check_gone(lo, hi, what);
#endif
	}
	return 0;
}

int main(int argc, char **argv)
{
	int expect_huge = 1;
	if (argc >= 3 && !strcmp(argv[1], "--expect-none")) {
		expect_huge = 0;
		argv++;
		argc--;
	} else if (argc >= 3 && !strcmp(argv[1], "--expect-padded")) {
		expect_padded = 1;
		argv++;
		argc--;
	}
	if (argc == 2) {
		round_trip(argv[1], expect_huge, 0);
	} else if (argc == 3 && !strcmp(argv[1], "--dlmopen")) {
		round_trip(argv[2], expect_huge, 1);
	} else if (argc == 4 && !strcmp(argv[1], "--ctor")) {
		setenv("IT_CTOR_DLOPEN", argv[3], 1);
		void *h = dlopen(argv[2], RTLD_NOW);
		if (!h) {
			FAIL("dlopen %s: %s", argv[2], dlerror());
		} else {
			void *inner = dlopen(argv[3], RTLD_NOW | RTLD_NOLOAD);
			if (!inner)
				FAIL("%s was not loaded by %s's constructor", argv[3], argv[2]);
			else
				call_all(inner, "loaded by a constructor");
			check_windows(inner, base(argv[3]), expect_huge, "loaded by a constructor");
		}
	} else {
		fprintf(stderr, "usage: dlopen_test [--expect-none | --expect-padded] LIB | --dlmopen LIB | "
		        "--ctor CTORLIB BIGLIB\n");
		return 2;
	}
	printf("dlopen_test: %s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
