/*
 * test_objects.c — et_objects_collect in the test process itself: the main
 * program first, with the test's code inside its executable segments; the
 * vdso flagged; segments matching r-x mappings in /proc/self/smaps; build
 * ids matching the files; the counting call agreeing with the filling call,
 * and its largest-segment / text-bytes figures agreeing with the table.
 */
#include "unit_util.h"

#include "core/smaps.h"
#include "core/sysinfo.h"
#include "runtime/objects.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>

/* A bug that loops forever fails its test instead of hanging the run; a
 * failed test leaves no temporary directory behind. */
TestSuite(objects, .timeout = 30, .fini = ut_cleanup);

#define GUARD_BYTE 0xA5

static int marker_function(int x)
{
	return x + 41;
}

/* Collect into a table with `extra` guard elements; check the guards. */
static struct et_object *collect(size_t *count)
{
	size_t n = et_objects_collect(NULL, 0, NULL, NULL);
	cr_assert(n >= 2, "only %zu objects", n);
	const size_t extra = 3;
	struct et_object *o = malloc((n + extra) * sizeof *o);
	cr_assert_not_null(o);
	memset(o, GUARD_BYTE, (n + extra) * sizeof *o);
	size_t n2 = et_objects_collect(o, n + extra, NULL, NULL);
	cr_assert_eq(n2, n, "count call %zu, fill call %zu", n, n2);
	const unsigned char *g = (const unsigned char *)&o[n];
	for (size_t i = 0; i < extra * sizeof *o; i++)
		cr_assert_eq(g[i], GUARD_BYTE, "wrote past the objects at byte %zu", i);
	*count = n;
	return o;
}

static bool in_segs(const struct et_object *o, uint64_t addr)
{
	for (uint32_t s = 0; s < o->nsegs; s++)
		if (addr >= o->segs[s].start && addr < o->segs[s].end)
			return true;
	return false;
}

/* The GNU build-id of an ELF file, read from its PT_NOTE segments. */
static void file_build_id(const char *path, char out[41])
{
	out[0] = '\0';
	size_t len;
	char *buf = ut_read(path, &len);
	cr_assert_not_null(buf, "cannot read %s", path);
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)buf;
	cr_assert(len >= sizeof *eh && !memcmp(eh->e_ident, ELFMAG, SELFMAG), "%s is not ELF", path);
	for (int i = 0; i < eh->e_phnum; i++) {
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(buf + eh->e_phoff + (size_t)i * eh->e_phentsize);
		if (ph->p_type != PT_NOTE || ph->p_offset + ph->p_filesz > len)
			continue;
		size_t align = ph->p_align >= 8 ? 8 : 4;
		const char *p = buf + ph->p_offset, *end = p + ph->p_filesz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *nh;
			const char *desc = name + ((nh->n_namesz + align - 1) & ~(align - 1));
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
				size_t k = nh->n_descsz > 20 ? 20 : nh->n_descsz;
				for (size_t b = 0; b < k; b++)
					sprintf(out + 2 * b, "%02x", (unsigned char)desc[b]);
				out[2 * k] = '\0';
				free(buf);
				return;
			}
			p = desc + ((nh->n_descsz + align - 1) & ~(align - 1));
		}
	}
	free(buf);
}

Test(objects, count_call_equals_fill_call)
{
	size_t n;
	struct et_object *o = collect(&n);
	/* And again: nothing was loaded in between. */
	cr_expect_eq(et_objects_collect(NULL, 0, NULL, NULL), n);
	free(o);
}

Test(objects, cap_smaller_than_count)
{
	size_t n = et_objects_collect(NULL, 0, NULL, NULL);
	cr_assert(n >= 3);
	struct et_object o[3];
	memset(o, GUARD_BYTE, sizeof o);
	cr_expect_eq(et_objects_collect(o, 2, NULL, NULL), n, "returns the full count");
	cr_expect(o[0].is_main);
	cr_expect(!o[1].is_main);
	const unsigned char *g = (const unsigned char *)&o[2];
	for (size_t i = 0; i < sizeof o[2]; i++)
		cr_assert_eq(g[i], GUARD_BYTE, "wrote past cap at byte %zu", i);
}

Test(objects, main_program_is_first)
{
	size_t n;
	struct et_object *o = collect(&n);
	uint64_t fn = (uint64_t)(uintptr_t)&marker_function;
	cr_expect(o[0].is_main);
	for (size_t i = 1; i < n; i++)
		cr_expect(!o[i].is_main, "object %zu (%s) marked main", i, o[i].path);
	cr_assert(o[0].nsegs >= 1, "main program without executable segments");
	cr_expect(in_segs(&o[0], fn), "marker_function 0x%llx not in the main program's text",
	          (unsigned long long)fn);
	/* The library is linked into the program: its code is the program's text. */
	cr_expect(in_segs(&o[0], (uint64_t)(uintptr_t)&et_objects_collect));
	for (size_t i = 1; i < n; i++)
		cr_expect(!in_segs(&o[i], fn), "marker_function also inside object %zu", i);
	uint64_t sum = 0;
	for (uint32_t s = 0; s < o[0].nsegs; s++) {
		const struct et_segment *sg = &o[0].segs[s];
		cr_expect(sg->flags & PF_X_FLAG);
		cr_expect_lt(sg->start, sg->end);
		sum += sg->end - sg->start;
	}
	cr_expect_geq(o[0].text_bytes, sum, "text_bytes %llu < segments %llu",
	              (unsigned long long)o[0].text_bytes, (unsigned long long)sum);
	/* The program's own load address: its program headers are where the
	 * auxiliary vector says. */
	uint64_t phdr = getauxval(AT_PHDR);
	cr_expect(phdr >= o[0].base, "AT_PHDR 0x%llx below base 0x%llx", (unsigned long long)phdr,
	          (unsigned long long)o[0].base);
	cr_expect_eq(marker_function(1), 42);
	free(o);
}

Test(objects, vdso_is_flagged)
{
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	if (!vdso)
		cr_skip_test("no vdso in this process (AT_SYSINFO_EHDR is 0)");
	size_t n;
	struct et_object *o = collect(&n);
	int flagged = 0;
	for (size_t i = 0; i < n; i++) {
		if (o[i].skip != ET_R_VDSO)
			continue;
		flagged++;
		cr_expect(!o[i].is_main);
		cr_expect(o[i].path[0], "vdso without a name");
		cr_expect(o[i].base == vdso || (o[i].nsegs && (o[i].segs[0].start & ~UINT64_C(4095)) == vdso),
		          "the flagged object (base 0x%llx) is not at AT_SYSINFO_EHDR 0x%llx",
		          (unsigned long long)o[i].base, (unsigned long long)vdso);
		/* Its text is the [vdso] mapping. */
		cr_assert(o[i].nsegs >= 1, "vdso without an executable segment");
		struct et_smaps sm;
		cr_assert_eq(et_smaps_read(&sm, "/proc/self/smaps"), 0);
		const struct et_vma *v = et_smaps_find(&sm, o[i].segs[0].start);
		cr_assert_not_null(v);
		cr_expect_str_eq(et_vma_path(&sm, v), "[vdso]");
		et_smaps_free(&sm);
	}
	cr_expect_eq(flagged, 1, "%d objects flagged as the vdso", flagged);
	free(o);
}

/* Linked into the program, the library is not a separate object: nothing
 * is flagged as "itself", and nothing here has text relocations. */
Test(objects, no_self_or_textrel_in_a_normal_process)
{
	size_t n;
	struct et_object *o = collect(&n);
	for (size_t i = 0; i < n; i++) {
		cr_expect_neq(o[i].skip, ET_R_SELF, "object %zu (%s) flagged as the library itself", i, o[i].path);
		cr_expect_neq(o[i].skip, ET_R_TEXTREL, "object %zu (%s) flagged textrel", i, o[i].path);
		cr_expect(o[i].skip == ET_R_NONE || o[i].skip == ET_R_VDSO, "object %zu skip %d", i, o[i].skip);
		cr_expect_eq(o[i].backend, ET_BACKEND_NONE);
		cr_expect_eq(o[i].nwindows, 0);
		cr_expect_eq(o[i].huge_bytes, 0);
	}
	free(o);
}

/* Every executable segment is mapped r-x from the object's own file. */
Test(objects, segments_match_smaps)
{
	size_t n;
	struct et_object *o = collect(&n);
	struct et_smaps sm;
	cr_assert_eq(et_smaps_read(&sm, "/proc/self/smaps"), 0);
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	cr_assert(k > 0);
	exe[k] = '\0';
	int checked = 0;
	for (size_t i = 0; i < n; i++) {
		if (o[i].skip == ET_R_VDSO)
			continue;
		char want[PATH_MAX];
		if (o[i].is_main)
			strcpy(want, exe);
		else if (!realpath(o[i].path, want))
			cr_assert_fail("object %zu: realpath(%s): %s", i, o[i].path, strerror(errno));
		for (uint32_t s = 0; s < o[i].nsegs; s++) {
			const struct et_segment *sg = &o[i].segs[s];
			const struct et_vma *v = et_smaps_find(&sm, sg->start);
			cr_assert_not_null(v, "object %zu segment %u at 0x%llx not mapped", i, s,
			                   (unsigned long long)sg->start);
			cr_expect(v->prot & PROT_EXEC, "object %zu segment %u: VMA not executable", i, s);
			cr_expect_str_eq(et_vma_path(&sm, v), want, "object %zu segment %u", i, s);
			/* File offset and address agree modulo the page size. */
			cr_expect_eq((sg->start - v->start + v->offset) & 4095, sg->offset & 4095,
			             "object %zu segment %u offset", i, s);
			const struct et_vma *last = et_smaps_find(&sm, sg->end - 1);
			cr_expect_not_null(last, "object %zu segment %u end not mapped", i, s);
			checked++;
		}
	}
	cr_expect_geq(checked, 3, "only %d segments checked", checked);
	et_smaps_free(&sm);
	free(o);
}

Test(objects, build_ids_match_the_files)
{
	size_t n;
	struct et_object *o = collect(&n);
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	cr_assert(k > 0);
	exe[k] = '\0';
	int nonempty = 0;
	for (size_t i = 0; i < n; i++) {
		if (o[i].skip == ET_R_VDSO)
			continue;
		const char *path = o[i].is_main ? exe : o[i].path;
		char want[41];
		file_build_id(path, want);
		cr_expect_str_eq(o[i].build_id, want, "object %zu (%s)", i, path);
		nonempty += want[0] != '\0';
	}
	cr_expect_gt(nonempty, 0, "no object has a build id; the check proved nothing");
	free(o);
}

Test(objects, dlopen_adds_an_object)
{
	size_t before = et_objects_collect(NULL, 0, NULL, NULL);
	void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		cr_skip_test("dlopen(libm.so.6): %s", dlerror());
	size_t after = et_objects_collect(NULL, 0, NULL, NULL);
	/* libm may already be loaded (then nothing changes). */
	cr_expect(after == before || after == before + 1, "before %zu, after %zu", before, after);
	struct et_object *o = malloc(after * sizeof *o);
	cr_assert_not_null(o);
	cr_assert_eq(et_objects_collect(o, after, NULL, NULL), after);
	int found = 0;
	for (size_t i = 0; i < after; i++)
		if (strstr(o[i].path, "libm.so.6"))
			found++;
	cr_expect_eq(found, 1);
	free(o);
	dlclose(h);
}

/* The counting pass reports the largest executable segment and the text of
 * the objects it did not fill in; they must agree with the filled table. */
Test(objects, count_pass_figures_match_the_table)
{
	size_t n;
	struct et_object *o = collect(&n);
	uint64_t max_all = 0, text_all = 0;
	for (size_t i = 0; i < n; i++) {
		text_all += o[i].text_bytes;
		for (uint32_t s = 0; s < o[i].nsegs; s++)
			if (o[i].segs[s].end - o[i].segs[s].start > max_all)
				max_all = o[i].segs[s].end - o[i].segs[s].start;
	}
	uint64_t max_seg = 12345, text = 12345;
	cr_assert_eq(et_objects_collect(NULL, 0, &max_seg, &text), n);
	cr_expect_eq(max_seg, max_all, "count pass max_seg %llu, table %llu", (unsigned long long)max_seg,
	             (unsigned long long)max_all);
	cr_expect_eq(text, text_all, "count pass text %llu, table %llu", (unsigned long long)text,
	             (unsigned long long)text_all);
	cr_expect_gt(text, 0);

	/* Filling the first two: the figures cover only the others. */
	uint64_t max_rest = 0, text_rest = 0;
	for (size_t i = 2; i < n; i++) {
		text_rest += o[i].text_bytes;
		for (uint32_t s = 0; s < o[i].nsegs; s++)
			if (o[i].segs[s].end - o[i].segs[s].start > max_rest)
				max_rest = o[i].segs[s].end - o[i].segs[s].start;
	}
	struct et_object two[2];
	max_seg = text = 12345;
	cr_assert_eq(et_objects_collect(two, 2, &max_seg, &text), n);
	cr_expect_eq(max_seg, max_rest);
	cr_expect_eq(text, text_rest);

	/* Everything filled: nothing left to count. */
	struct et_object *all = malloc(n * sizeof *all);
	cr_assert_not_null(all);
	max_seg = text = 12345;
	cr_assert_eq(et_objects_collect(all, n, &max_seg, &text), n);
	cr_expect_eq(max_seg, 0);
	cr_expect_eq(text, 0);
	free(all);
	free(o);
}

Test(objects, pmd_size_floor)
{
	uint64_t floor = et_pmd_size_floor();
#if defined(__x86_64__)
	if (sysconf(_SC_PAGESIZE) == 4096)
		cr_expect_eq(floor, 2 * UT_MIB, "x86-64 floor %llu", (unsigned long long)floor);
#endif
	if (floor)
		cr_expect_eq(floor & (floor - 1), 0, "floor %llu not a power of two", (unsigned long long)floor);
	/* Never above the real PMD size: the quick path relies on it. */
	size_t len;
	char *pmd = ut_read("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", &len);
	if (pmd) {
		cr_expect_leq(floor, strtoull(pmd, NULL, 10), "floor %llu above hpage_pmd_size %s",
		              (unsigned long long)floor, pmd);
		free(pmd);
	}
}
