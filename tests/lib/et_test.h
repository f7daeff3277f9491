/*
 * et_test.h — what the C test programs of tests/ share, whatever their
 * folder: where a loaded object's executable segment is, and one round of
 * checks over the generated big text.  Header-only, libc only; included by
 * tests/fault/cc_common.h, tests/integration/it_text.h and the programs
 * that need no more (by a path relative to them: no include directory to
 * add).
 *
 * Owns: reading the program headers of loaded objects (dl_iterate_phdr),
 * et_round_all.  May call: libc, bigtext.h's functions.  Never: the
 * library's API (the programs find it themselves, or not at all).
 */
#ifndef ET_TEST_H
#define ET_TEST_H

#include <link.h>
#include <stdint.h>
#include <string.h>

/*
 * How far an executable segment reaches.  The two differ where the segment
 * ends in bytes the file does not hold (p_memsz > p_filesz: zero-filled
 * memory after the file's bytes, which a linker script or an unusual link
 * can make).  Each caller says which it means:
 *   ET_SEG_FILESZ  the bytes backed by the file: what a file-backed
 *                  mapping of the object holds (the integration programs
 *                  measure the windows of the file's text);
 *   ET_SEG_MEMSZ   the whole segment as loaded: the range a remap must
 *                  leave callable (the fault programs call into it and
 *                  read the maps over it).
 */
enum et_seg_extent { ET_SEG_FILESZ, ET_SEG_MEMSZ };

struct et_seg_find {
	const char *needle;         /* substring of the object's path; NULL: the program */
	enum et_seg_extent extent;
	uintptr_t lo, hi;
	int found;
};

static int et_seg_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct et_seg_find *s = (struct et_seg_find *)arg;
	int main_obj = !info->dlpi_name || !info->dlpi_name[0];
	if (s->needle ? main_obj || !strstr(info->dlpi_name, s->needle) : !main_obj)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			s->lo = info->dlpi_addr + ph->p_vaddr;
			s->hi = s->lo + (s->extent == ET_SEG_MEMSZ ? ph->p_memsz : ph->p_filesz);
			s->found = 1;
		}
	}
	return s->found;
}

/* The (last) executable PT_LOAD segment of the program (needle NULL) or of
 * the loaded object whose path contains needle, to the extent asked:
 * [*lo, *hi).  1 found, 0 not (then both 0). */
static inline int et_find_text(const char *needle, enum et_seg_extent extent, uintptr_t *lo, uintptr_t *hi)
{
	struct et_seg_find s = { needle, extent, 0, 0, 0 };
	dl_iterate_phdr(et_seg_cb, &s);
	*lo = s.lo;
	*hi = s.hi;
	return s.found;
}

#ifdef BIGTEXT_H
/* One call of every function of the program's generated text (bigtext.h,
 * included before this header): how many returned a wrong value. */
static inline unsigned et_round_all(void)
{
	unsigned wrong = 0;
	for (unsigned i = 0; i < bt_exe_count; i++) {
		uint64_t x = bt_arg(BT_OBJ_EXE, i);
		if (bt_exe_table[i](x) != bt_expect(BT_OBJ_EXE, i, x))
			wrong++;
	}
	return wrong;
}
#endif

#endif
