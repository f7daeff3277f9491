/*
 * test_smaps.c — the smaps parser (et_smaps_read / et_smaps_read_fd), the
 * lookup (et_smaps_find) and the accessors, on fake smaps files written in
 * the kernel's format, and on the test's own /proc/self/smaps.
 */
#include "unit_util.h"

#include "core/smaps.h"

#include <sys/mman.h>
#include <sys/wait.h>

/* A bug that loops forever fails its test instead of hanging the run; a
 * failed test leaves no temporary directory behind. */
TestSuite(smaps, .timeout = 30, .fini = ut_cleanup);

/* ------------------------------------------------------------ builders */

struct fvma {
	uint64_t start, end;
	const char *perms;
	uint64_t offset;
	const char *dev;
	uint64_t inode;
	const char *path;     /* NULL = anonymous */
	uint64_t anon_kb, file_kb, shmem_kb, priv_htlb_kb, shared_htlb_kb;
};

/* One VMA as the kernel prints it (6.x field set). */
static void put_vma(FILE *f, const struct fvma *v)
{
	int n = fprintf(f, "%08llx-%08llx %s %08llx %s %llu ", (unsigned long long)v->start,
	                (unsigned long long)v->end, v->perms, (unsigned long long)v->offset,
	                v->dev ? v->dev : "00:00", (unsigned long long)v->inode);
	if (v->path) {
		for (; n < 73; n++)
			fputc(' ', f);
		fputs(v->path, f);
	}
	fputc('\n', f);
	unsigned long long kb = (v->end - v->start) >> 10;
	fprintf(f, "Size:           %8llu kB\n", kb);
	fprintf(f, "KernelPageSize:        4 kB\nMMUPageSize:           4 kB\n");
	fprintf(f, "Rss:            %8llu kB\nPss:            %8llu kB\n", kb, kb);
	fprintf(f, "Pss_Dirty:             0 kB\nShared_Clean:          0 kB\nShared_Dirty:          0 kB\n");
	fprintf(f, "Private_Clean:  %8llu kB\nPrivate_Dirty:         0 kB\n", kb);
	fprintf(f, "Referenced:     %8llu kB\nAnonymous:      %8llu kB\n", kb,
	        (unsigned long long)v->anon_kb);
	fprintf(f, "KSM:                   0 kB\nLazyFree:              0 kB\n");
	fprintf(f, "AnonHugePages:  %8llu kB\n", (unsigned long long)v->anon_kb);
	fprintf(f, "ShmemPmdMapped: %8llu kB\n", (unsigned long long)v->shmem_kb);
	fprintf(f, "FilePmdMapped:  %8llu kB\n", (unsigned long long)v->file_kb);
	fprintf(f, "Shared_Hugetlb: %8llu kB\n", (unsigned long long)v->shared_htlb_kb);
	fprintf(f, "Private_Hugetlb:%8llu kB\n", (unsigned long long)v->priv_htlb_kb);
	fprintf(f, "Swap:                  0 kB\nSwapPss:               0 kB\nLocked:                0 kB\n");
	fprintf(f, "THPeligible:           1\nProtectionKey:         0\n");
	fprintf(f, "VmFlags: rd ex mr mw me dw sd\n");
}

/* Text of a whole fake smaps file (malloc'd). */
static char *smaps_text(const struct fvma *v, size_t n, size_t *len)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);
	cr_assert_not_null(f);
	for (size_t i = 0; i < n; i++)
		put_vma(f, &v[i]);
	fclose(f);
	*len = sz;
	return buf;
}

/* Write text to a temp file and parse it. */
static int parse_text(struct et_smaps *sm, const char *text, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	ut_tmpdir(dir, sizeof dir);
	ut_write_n(dir, "smaps", text, len);
	snprintf(path, sizeof path, "%s/smaps", dir);
	int r = et_smaps_read(sm, path);
	ut_rmtree(dir);
	return r;
}

static void expect_vma(const struct et_smaps *sm, size_t i, const struct fvma *f)
{
	cr_assert(i < sm->count, "VMA %zu missing (count %zu)", i, sm->count);
	const struct et_vma *v = &sm->vmas[i];
	cr_expect_eq(v->start, f->start, "VMA %zu start 0x%llx", i, (unsigned long long)v->start);
	cr_expect_eq(v->end, f->end, "VMA %zu end 0x%llx", i, (unsigned long long)v->end);
	cr_expect_eq(v->offset, f->offset, "VMA %zu offset 0x%llx", i, (unsigned long long)v->offset);
	cr_expect_eq(v->inode, f->inode, "VMA %zu inode %llu", i, (unsigned long long)v->inode);
	unsigned maj = 0, min = 0;
	if (f->dev)
		cr_assert_eq(sscanf(f->dev, "%x:%x", &maj, &min), 2);
	cr_expect_eq(v->dev_major, maj, "VMA %zu dev major %u, expected %u", i, v->dev_major, maj);
	cr_expect_eq(v->dev_minor, min, "VMA %zu dev minor %u, expected %u", i, v->dev_minor, min);
	uint32_t prot = (f->perms[0] == 'r' ? PROT_READ : 0) | (f->perms[1] == 'w' ? PROT_WRITE : 0) |
	                (f->perms[2] == 'x' ? PROT_EXEC : 0);
	cr_expect_eq(v->prot, prot, "VMA %zu (%s) prot %u", i, f->perms, v->prot);
	cr_expect_eq(v->shared, f->perms[3] == 's', "VMA %zu (%s) shared", i, f->perms);
	const char *p = et_vma_path(sm, v);
	cr_assert_not_null(p);
	cr_expect_str_eq(p, f->path ? f->path : "", "VMA %zu path", i);
	if (!f->path)
		cr_expect_eq(v->path_off, 0, "VMA %zu: anonymous but path_off %u", i, v->path_off);
	else
		cr_expect_neq(v->path_off, 0, "VMA %zu: path but path_off 0", i);
	cr_expect_eq(v->anon_huge, f->anon_kb * 1024, "VMA %zu anon_huge %llu", i,
	             (unsigned long long)v->anon_huge);
	cr_expect_eq(v->file_pmd, f->file_kb * 1024, "VMA %zu file_pmd %llu", i,
	             (unsigned long long)v->file_pmd);
	cr_expect_eq(v->shmem_pmd, f->shmem_kb * 1024, "VMA %zu shmem_pmd", i);
	cr_expect_eq(v->hugetlb, (f->priv_htlb_kb + f->shared_htlb_kb) * 1024, "VMA %zu hugetlb %llu", i,
	             (unsigned long long)v->hugetlb);
	cr_expect_eq(et_vma_huge_bytes(v),
	             (f->anon_kb + f->file_kb + f->shmem_kb + f->priv_htlb_kb + f->shared_htlb_kb) * 1024,
	             "VMA %zu huge bytes", i);
}

static const struct fvma sample[] = {
	{ 0x555555554000, 0x555555556000, "r--p", 0, "fd:01", 1234, "/usr/bin/prog", 0, 0, 0, 0, 0 },
	{ 0x555555600000, 0x555555a00000, "r-xp", 0xac000, "fd:01", 1234, "/usr/bin/prog", 0, 4096, 0, 0, 0 },
	{ 0x555555a00000, 0x555555a10000, "rw-p", 0x4ac000, "103:1a", 1234, "/usr/bin/prog", 0, 0, 0, 0, 0 },
	{ 0x555555c00000, 0x555555e21000, "rw-p", 0, NULL, 0, "[heap]", 2048, 0, 0, 0, 0 },
	{ 0x7f0000000000, 0x7f0000400000, "r-xp", 0, NULL, 0, NULL, 4096, 0, 0, 0, 0 },
	{ 0x7f0000400000, 0x7f0000800000, "r-xs", 0, "00:10", 99, "/anon_hugepage (deleted)", 0, 0, 0, 2048, 2048 },
	{ 0x7f0000800000, 0x7f0000801000, "---p", 0, NULL, 0, NULL, 0, 0, 0, 0, 0 },
	{ 0x7f1000000000, 0x7f1000200000, "r-xp", 0x200000, "08:02", 77, "/opt/my app/lib  with spaces.so", 0, 0, 2048, 0, 0 },
	{ 0x7f1000200000, 0x7f1000400000, "r--s", 0x400000, "08:02", 77, "/opt/my app/lib  with spaces.so", 0, 0, 0, 0, 0 },
	{ 0x7ffffffde000, 0x7ffffffff000, "rw-p", 0, NULL, 0, "[stack]", 0, 0, 0, 0, 0 },
	{ 0xffffffffff600000, 0xffffffffff601000, "--xp", 0, NULL, 0, "[vsyscall]", 0, 0, 0, 0, 0 },
};
#define NSAMPLE (sizeof sample / sizeof *sample)

/* ------------------------------------------------------------ tests */

Test(smaps, several_vmas)
{
	size_t len;
	char *text = smaps_text(sample, NSAMPLE, &len);
	struct et_smaps sm;
	cr_assert_eq(parse_text(&sm, text, len), 0);
	cr_assert_eq(sm.count, NSAMPLE, "count %zu", sm.count);
	for (size_t i = 0; i < NSAMPLE; i++)
		expect_vma(&sm, i, &sample[i]);
	et_smaps_free(&sm);
	cr_expect_null(sm.mem);
	cr_expect_eq(sm.count, 0);
	free(text);
}

Test(smaps, find_binary_search)
{
	size_t len;
	char *text = smaps_text(sample, NSAMPLE, &len);
	struct et_smaps sm;
	cr_assert_eq(parse_text(&sm, text, len), 0);
	cr_assert_eq(sm.count, NSAMPLE);
	for (size_t i = 0; i < NSAMPLE; i++) {
		cr_expect_eq(et_smaps_find(&sm, sample[i].start), &sm.vmas[i], "start of VMA %zu", i);
		cr_expect_eq(et_smaps_find(&sm, sample[i].end - 1), &sm.vmas[i], "end-1 of VMA %zu", i);
		cr_expect_eq(et_smaps_find(&sm, sample[i].start + (sample[i].end - sample[i].start) / 2),
		             &sm.vmas[i], "middle of VMA %zu", i);
		/* The end is the next VMA when adjacent, else a gap. */
		const struct et_vma *at_end = et_smaps_find(&sm, sample[i].end);
		if (i + 1 < NSAMPLE && sample[i + 1].start == sample[i].end)
			cr_expect_eq(at_end, &sm.vmas[i + 1], "end of VMA %zu is the next one", i);
		else if (i + 1 < NSAMPLE)
			cr_expect_null(at_end, "end of VMA %zu is a gap", i);
		/* Just before the start: the previous VMA when adjacent, else a gap. */
		if (sample[i].start > 0) {
			const struct et_vma *before = et_smaps_find(&sm, sample[i].start - 1);
			if (i > 0 && sample[i - 1].end == sample[i].start)
				cr_expect_eq(before, &sm.vmas[i - 1]);
			else
				cr_expect_null(before, "byte before VMA %zu", i);
		}
	}
	cr_expect_null(et_smaps_find(&sm, 0));
	cr_expect_null(et_smaps_find(&sm, 0x1000));
	cr_expect_null(et_smaps_find(&sm, 0x555555553fff));
	cr_expect_null(et_smaps_find(&sm, 0x555555b00000));            /* gap */
	cr_expect_null(et_smaps_find(&sm, 0x7f0800000000));            /* gap */
	cr_expect_eq(et_smaps_find(&sm, UINT64_C(0xffffffffff600123)), &sm.vmas[NSAMPLE - 1]);
	cr_expect_null(et_smaps_find(&sm, UINT64_C(0xffffffffff601000)));  /* after last */
	cr_expect_null(et_smaps_find(&sm, UINT64_MAX));
	et_smaps_free(&sm);
	free(text);
}

Test(smaps, find_in_empty_and_single)
{
	struct et_smaps sm;
	cr_assert_eq(parse_text(&sm, "", 0), 0);
	cr_expect_eq(sm.count, 0);
	cr_expect_null(et_smaps_find(&sm, 0));
	cr_expect_null(et_smaps_find(&sm, 0x400000));
	et_smaps_free(&sm);

	size_t len;
	char *text = smaps_text(&sample[1], 1, &len);
	cr_assert_eq(parse_text(&sm, text, len), 0);
	cr_assert_eq(sm.count, 1);
	cr_expect_eq(et_smaps_find(&sm, sample[1].start), &sm.vmas[0]);
	cr_expect_null(et_smaps_find(&sm, sample[1].start - 1));
	cr_expect_null(et_smaps_find(&sm, sample[1].end));
	et_smaps_free(&sm);
	free(text);
}

Test(smaps, paths_with_spaces_and_deleted)
{
	static const struct fvma v[] = {
		{ 0x1000, 0x2000, "r-xp", 0, "08:01", 5, "/tmp/a b/c  d.so", 0, 0, 0, 0, 0 },
		{ 0x2000, 0x3000, "r-xp", 0, "08:01", 6, "/tmp/x (deleted)", 0, 0, 0, 0, 0 },
		{ 0x3000, 0x4000, "r-xp", 0, "08:01", 7, "/tmp/ leading space", 0, 0, 0, 0, 0 },
		{ 0x4000, 0x5000, "r-xp", 0, "08:01", 8, "/tmp/trailing space ", 0, 0, 0, 0, 0 },
	};
	size_t len;
	char *text = smaps_text(v, 4, &len);
	struct et_smaps sm;
	cr_assert_eq(parse_text(&sm, text, len), 0);
	cr_assert_eq(sm.count, 4);
	for (size_t i = 0; i < 4; i++)
		expect_vma(&sm, i, &v[i]);
	et_smaps_free(&sm);
	free(text);
}

/* Neighbouring VMAs share their path string when it is the same; a path
 * that is a prefix (or an extension) of its neighbour's is not the same. */
Test(smaps, neighbouring_paths_prefixes)
{
	static const struct fvma v[] = {
		{ 0x1000, 0x2000, "r--p", 0, "08:01", 5, "/lib/libfoo.so.1", 0, 0, 0, 0, 0 },
		{ 0x2000, 0x3000, "r-xp", 0x1000, "08:01", 5, "/lib/libfoo.so.1", 0, 0, 0, 0, 0 },
		{ 0x3000, 0x4000, "r--p", 0, "08:01", 6, "/lib/libfoo.so", 0, 0, 0, 0, 0 },
		{ 0x4000, 0x5000, "r--p", 0, "08:01", 7, "/lib/libfoo.so.12", 0, 0, 0, 0, 0 },
		{ 0x5000, 0x6000, "r--p", 0, "08:01", 8, "/lib/lib", 0, 0, 0, 0, 0 },
		{ 0x6000, 0x7000, "rw-p", 0, NULL, 0, NULL, 0, 0, 0, 0, 0 },
		{ 0x7000, 0x8000, "r--p", 0, "08:01", 8, "/lib/lib", 0, 0, 0, 0, 0 },
	};
	size_t len;
	char *text = smaps_text(v, 7, &len);
	struct et_smaps sm;
	cr_assert_eq(parse_text(&sm, text, len), 0);
	cr_assert_eq(sm.count, 7);
	for (size_t i = 0; i < 7; i++)
		expect_vma(&sm, i, &v[i]);
	et_smaps_free(&sm);
	free(text);
}

Test(smaps, very_long_path)
{
	char path[4097];
	path[0] = '/';
	for (int i = 1; i < 4096; i++)
		path[i] = (i % 64 == 0) ? '/' : (char)('a' + i % 26);
	path[4096] = '\0';
	struct fvma v[] = {
		{ 0x400000, 0x600000, "r-xp", 0, "08:01", 5, path, 0, 2048, 0, 0, 0 },
		{ 0x600000, 0x800000, "r--p", 0x200000, "08:01", 5, path, 0, 0, 0, 0, 0 },
		{ 0x900000, 0xa00000, "rw-p", 0, NULL, 0, NULL, 1024, 0, 0, 0, 0 },
	};
	size_t len;
	char *text = smaps_text(v, 3, &len);
	struct et_smaps sm;
	cr_assert_eq(parse_text(&sm, text, len), 0);
	cr_assert_eq(sm.count, 3);
	for (size_t i = 0; i < 3; i++)
		expect_vma(&sm, i, &v[i]);
	cr_expect_eq(strlen(et_vma_path(&sm, &sm.vmas[0])), 4096);
	et_smaps_free(&sm);
	free(text);
}

Test(smaps, no_trailing_newline)
{
	size_t len;
	char *text = smaps_text(&sample[5], 1, &len);      /* hugetlb VMA, ends "VmFlags: ...\n" */
	/* Cut after "Private_Hugetlb: ... kB" with no newline. */
	char *ph = strstr(text, "Private_Hugetlb:");
	cr_assert_not_null(ph);
	char *nl = strchr(ph, '\n');
	cr_assert_not_null(nl);
	struct et_smaps sm;
	cr_assert_eq(parse_text(&sm, text, (size_t)(nl - text)), 0);
	cr_assert_eq(sm.count, 1);
	expect_vma(&sm, 0, &sample[5]);
	et_smaps_free(&sm);

	/* The whole block without its final newline. */
	cr_assert_eq(parse_text(&sm, text, len - 1), 0);
	cr_assert_eq(sm.count, 1);
	expect_vma(&sm, 0, &sample[5]);
	et_smaps_free(&sm);
	free(text);

	/* A file that ends in a header line without newline. */
	const char *hdr = "00400000-00600000 r-xp 00001000 08:01 42     /usr/lib/last.so";
	cr_assert_eq(parse_text(&sm, hdr, strlen(hdr)), 0);
	cr_assert_eq(sm.count, 1);
	cr_expect_eq(sm.vmas[0].start, 0x400000);
	cr_expect_eq(sm.vmas[0].end, 0x600000);
	cr_expect_eq(sm.vmas[0].offset, 0x1000);
	cr_expect_eq(sm.vmas[0].inode, 42);
	cr_expect_str_eq(et_vma_path(&sm, &sm.vmas[0]), "/usr/lib/last.so");
	et_smaps_free(&sm);
}

Test(smaps, empty_file)
{
	struct et_smaps sm;
	cr_assert_eq(parse_text(&sm, "", 0), 0);
	cr_expect_eq(sm.count, 0);
	cr_expect_not_null(sm.mem);
	et_smaps_free(&sm);
	/* Only newlines. */
	cr_assert_eq(parse_text(&sm, "\n\n\n", 3), 0);
	cr_expect_eq(sm.count, 0);
	et_smaps_free(&sm);
}

Test(smaps, fields_before_first_header_are_ignored)
{
	size_t len;
	char *body = smaps_text(&sample[1], 1, &len);
	char *text = NULL;
	cr_assert(asprintf(&text, "AnonHugePages:      2048 kB\nFilePmdMapped: 2048 kB\nRss: 4 kB\n%s", body) > 0);
	struct et_smaps sm;
	cr_assert_eq(parse_text(&sm, text, strlen(text)), 0);
	cr_assert_eq(sm.count, 1);
	expect_vma(&sm, 0, &sample[1]);
	et_smaps_free(&sm);
	free(text);
	free(body);
}

Test(smaps, nonexistent_file)
{
	struct et_smaps sm;
	memset(&sm, 0x5A, sizeof sm);
	cr_expect_eq(et_smaps_read(&sm, "/nonexistent/et-unit/smaps"), -ENOENT);
	cr_expect_null(sm.mem);
	cr_expect_eq(sm.count, 0);
	et_smaps_free(&sm);     /* harmless after a failed read */
	et_smaps_free(&sm);
}

/* Thousands of VMAs: lines are split across the parser's 64 KiB reads. */
Test(smaps, many_vmas_across_read_buffers)
{
	enum { N = 3000 };
	struct fvma *v = calloc(N, sizeof *v);
	char (*paths)[96] = calloc(N, sizeof *paths);
	cr_assert(v && paths);
	uint64_t a = 0x100000000;
	for (size_t i = 0; i < N; i++) {
		uint64_t len = (uint64_t)(1 + i % 7) * 2 * UT_MIB;
		snprintf(paths[i], sizeof paths[i], "/usr/lib/lib number %zu.so", i / 3);
		v[i] = (struct fvma){ a, a + len, i % 3 == 1 ? "r-xp" : "r--p", (uint64_t)i * 4096, "fd:01",
		                      1000 + i / 3, (i % 5 == 4) ? NULL : paths[i],
		                      (i % 11) * 2048, (i % 13 == 0) ? len >> 10 : 0, 0, (i % 17 == 0) ? 2048 : 0,
		                      (i % 19 == 0) ? 4096 : 0 };
		a += len + ((i % 4 == 0) ? 4096 : 0);      /* some adjacent, some with gaps */
	}
	size_t len;
	char *text = smaps_text(v, N, &len);
	cr_assert(len > 4 * 65536, "the file should span many read buffers (%zu bytes)", len);
	struct et_smaps sm;
	cr_assert_eq(parse_text(&sm, text, len), 0);
	cr_assert_eq(sm.count, N, "count %zu", sm.count);
	for (size_t i = 0; i < N; i++) {
		expect_vma(&sm, i, &v[i]);
		cr_assert_eq(et_smaps_find(&sm, v[i].start), &sm.vmas[i], "find start of %zu", i);
		cr_assert_eq(et_smaps_find(&sm, v[i].end - 1), &sm.vmas[i], "find end-1 of %zu", i);
	}
	et_smaps_free(&sm);
	free(text);
	free(paths);
	free(v);
}

/* et_smaps_read_fd on a pipe fed in small pieces: short reads that end in
 * the middle of lines. */
Test(smaps, read_fd_with_short_reads)
{
	size_t len;
	char *text = smaps_text(sample, NSAMPLE, &len);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		for (size_t off = 0; off < len; off += 7) {
			size_t n = len - off < 7 ? len - off : 7;
			if (write(p[1], text + off, n) != (ssize_t)n)
				_exit(1);
			if (off % 70 == 0)
				usleep(50);
		}
		_exit(0);
	}
	close(p[1]);
	struct et_smaps sm;
	int r = et_smaps_read_fd(&sm, p[0]);
	close(p[0]);
	int status;
	waitpid(pid, &status, 0);
	cr_assert_eq(r, 0);
	cr_assert_eq(sm.count, NSAMPLE);
	for (size_t i = 0; i < NSAMPLE; i++)
		expect_vma(&sm, i, &sample[i]);
	et_smaps_free(&sm);
	free(text);
}

Test(smaps, huge_bytes_sums_every_kind)
{
	struct et_vma v = { .anon_huge = 1, .file_pmd = 20, .shmem_pmd = 300, .hugetlb = 4000 };
	cr_expect_eq(et_vma_huge_bytes(&v), 4321);
	struct et_vma z = { 0 };
	cr_expect_eq(et_vma_huge_bytes(&z), 0);
}

/* ------------------------------------------------------------ real smaps */

static int marker_function(int x)
{
	return x * 3 + 1;
}

Test(smaps, real_self_text_is_rx_and_named)
{
	struct et_smaps sm;
	cr_assert_eq(et_smaps_read(&sm, "/proc/self/smaps"), 0);
	cr_assert(sm.count > 5, "only %zu VMAs in /proc/self/smaps", sm.count);
	for (size_t i = 1; i < sm.count; i++) {
		cr_assert(sm.vmas[i - 1].start < sm.vmas[i - 1].end);
		cr_assert(sm.vmas[i - 1].end <= sm.vmas[i].start, "VMAs %zu and %zu out of order", i - 1, i);
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	cr_assert(n > 0);
	exe[n] = '\0';
	uint64_t fn = (uint64_t)(uintptr_t)&marker_function;
	const struct et_vma *v = et_smaps_find(&sm, fn);
	cr_assert_not_null(v, "no VMA holds marker_function at 0x%llx", (unsigned long long)fn);
	cr_expect(v->start <= fn && fn < v->end);
	cr_expect_eq(v->prot, PROT_READ | PROT_EXEC, "text VMA prot %u", v->prot);
	cr_expect(!v->shared);
	cr_expect_neq(v->inode, 0);
	cr_expect_str_eq(et_vma_path(&sm, v), exe);
	/* And a libc function lives in an r-x file mapping too. */
	const struct et_vma *lc = et_smaps_find(&sm, (uint64_t)(uintptr_t)&memcpy);
	cr_assert_not_null(lc);
	cr_expect(lc->prot & PROT_EXEC);
	cr_expect_neq(lc->path_off, 0);
	cr_expect_eq(marker_function(1), 4);
	et_smaps_free(&sm);
}

Test(smaps, real_anonymous_and_shared_file_mappings)
{
	/* An anonymous read-write mapping. */
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *anon = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(anon, MAP_FAILED);
	anon[0] = 1;
	/* A shared read-only mapping of a file with a space in its name, at an offset. */
	char dir[PATH_MAX], path[PATH_MAX + 32];
	ut_tmpdir(dir, sizeof dir);
	char *data = calloc(4, pg);
	ut_write_n(dir, "my file.bin", data, 4 * pg);
	free(data);
	snprintf(path, sizeof path, "%s/my file.bin", dir);
	int fd = open(path, O_RDONLY);
	cr_assert(fd >= 0);
	struct stat st;
	fstat(fd, &st);
	char *file = mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, fd, (off_t)pg);
	char real[PATH_MAX];
	cr_assert_not_null(realpath(path, real));
	cr_assert_neq(file, MAP_FAILED);
	close(fd);

	struct et_smaps sm;
	cr_assert_eq(et_smaps_read(&sm, "/proc/self/smaps"), 0);
	const struct et_vma *a = et_smaps_find(&sm, (uint64_t)(uintptr_t)anon + pg);
	cr_assert_not_null(a);
	cr_expect_eq(a->prot, PROT_READ | PROT_WRITE);
	cr_expect(!a->shared);
	cr_expect_eq(a->inode, 0);
	cr_expect_str_eq(et_vma_path(&sm, a), "");

	const struct et_vma *f = et_smaps_find(&sm, (uint64_t)(uintptr_t)file);
	cr_assert_not_null(f);
	cr_expect_eq(f->start, (uint64_t)(uintptr_t)file);
	cr_expect_eq(f->end, (uint64_t)(uintptr_t)file + 2 * pg);
	cr_expect_eq(f->prot, PROT_READ);
	cr_expect(f->shared);
	cr_expect_eq(f->offset, pg);
	cr_expect_eq(f->inode, (uint64_t)st.st_ino);
	cr_expect_str_eq(et_vma_path(&sm, f), real);
	cr_expect_eq(et_vma_huge_bytes(f), 0);
	et_smaps_free(&sm);
	munmap(file, 2 * pg);
	munmap(anon, 3 * pg);
	ut_rmtree(dir);
}
