/*
 * test_sysinfo.c — et_sysinfo_read against fake sysfs trees made in a
 * temporary directory (each THP policy, each defrag mode, missing and
 * garbage files, PMD sizes, the hugetlb pool of the PMD size), and once
 * against the real system.
 */
#include "unit_util.h"

#include "core/object.h"
#include "core/sysinfo.h"

#include <sys/prctl.h>

/* A bug that loops forever fails its test instead of hanging the run; a
 * failed test leaves no temporary directory behind. */
TestSuite(sysinfo, .timeout = 30, .fini = ut_cleanup);

#define THP "sys/kernel/mm/transparent_hugepage/"

struct tree {
	const char *enabled, *defrag, *pmd;    /* NULL = file absent */
	const char *pool_dir;                  /* e.g. "hugepages-2048kB", NULL = none */
	const char *free, *nr;
};

static void make_tree(const char *dir, const struct tree *t)
{
	char rel[256];
	if (t->enabled)
		ut_write(dir, THP "enabled", t->enabled);
	if (t->defrag)
		ut_write(dir, THP "defrag", t->defrag);
	if (t->pmd)
		ut_write(dir, THP "hpage_pmd_size", t->pmd);
	if (t->pool_dir) {
		if (t->free) {
			snprintf(rel, sizeof rel, "sys/kernel/mm/hugepages/%s/free_hugepages", t->pool_dir);
			ut_write(dir, rel, t->free);
		}
		if (t->nr) {
			snprintf(rel, sizeof rel, "sys/kernel/mm/hugepages/%s/nr_hugepages", t->pool_dir);
			ut_write(dir, rel, t->nr);
		}
	}
}

/* Build the tree in a fresh directory, read it, remove the directory. */
static struct et_sysinfo read_tree(const struct tree *t)
{
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	make_tree(dir, t);
	struct et_sysinfo si;
	memset(&si, 0x5A, sizeof si);
	et_sysinfo_read(&si, dir);
	ut_rmtree(dir);
	return si;
}

static void expect_unknown_defaults(const struct et_sysinfo *si, const char *what)
{
	cr_expect_eq(si->pmd_size, 2 * UT_MIB, "%s: pmd_size %llu", what,
	             (unsigned long long)si->pmd_size);
	cr_expect(!si->pmd_size_read, "%s: pmd_size_read", what);
	cr_expect_eq(si->thp, ET_THP_UNKNOWN, "%s: thp %s", what, et_thp_mode_name(si->thp));
	cr_expect_eq(si->defrag, ET_DEFRAG_UNKNOWN, "%s: defrag %s", what,
	             et_defrag_mode_name(si->defrag));
	cr_expect_eq(si->hugetlb_free, -1, "%s: hugetlb_free %ld", what, si->hugetlb_free);
	cr_expect_eq(si->hugetlb_total, -1, "%s: hugetlb_total %ld", what, si->hugetlb_total);
	cr_expect(!si->thp_disabled_process, "%s: a fake root must not report the process flag", what);
}

Test(sysinfo, empty_tree_gives_defaults)
{
	struct tree t = { 0 };
	struct et_sysinfo si = read_tree(&t);
	expect_unknown_defaults(&si, "empty tree");
}

Test(sysinfo, nonexistent_root_gives_defaults)
{
	struct et_sysinfo si;
	memset(&si, 0x5A, sizeof si);
	et_sysinfo_read(&si, "/nonexistent/et-unit/root");
	expect_unknown_defaults(&si, "nonexistent root");
}

Test(sysinfo, each_thp_policy)
{
	static const struct { const char *text; enum et_thp_mode m; const char *name; } cases[] = {
		{ "[always] madvise never\n", ET_THP_ALWAYS, "always" },
		{ "always [madvise] never\n", ET_THP_MADVISE, "madvise" },
		{ "always madvise [never]\n", ET_THP_NEVER, "never" },
		/* newer kernels list "inherit" for per-size controls; the top file too on some */
		{ "always inherit [madvise] never\n", ET_THP_MADVISE, "madvise" },
		{ "[always] madvise never", ET_THP_ALWAYS, "always" },       /* no newline */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct tree t = { .enabled = cases[i].text, .defrag = "always defer defer+madvise [madvise] never\n",
		                  .pmd = "2097152\n" };
		struct et_sysinfo si = read_tree(&t);
		cr_expect_eq(si.thp, cases[i].m, "\"%s\" read as %s", cases[i].text, et_thp_mode_name(si.thp));
		cr_expect_str_eq(et_thp_mode_name(si.thp), cases[i].name);
		cr_expect_eq(si.defrag, ET_DEFRAG_MADVISE);
		cr_expect_eq(si.pmd_size, 2 * UT_MIB);
		cr_expect(si.pmd_size_read);
	}
}

Test(sysinfo, each_defrag_mode)
{
	static const struct { const char *text; enum et_defrag_mode m; const char *name; } cases[] = {
		{ "[always] defer defer+madvise madvise never\n", ET_DEFRAG_ALWAYS, "always" },
		{ "always [defer] defer+madvise madvise never\n", ET_DEFRAG_DEFER, "defer" },
		{ "always defer [defer+madvise] madvise never\n", ET_DEFRAG_DEFER_MADVISE, "defer+madvise" },
		{ "always defer defer+madvise [madvise] never\n", ET_DEFRAG_MADVISE, "madvise" },
		{ "always defer defer+madvise madvise [never]\n", ET_DEFRAG_NEVER, "never" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct tree t = { .enabled = "always madvise [never]\n", .defrag = cases[i].text };
		struct et_sysinfo si = read_tree(&t);
		cr_expect_eq(si.defrag, cases[i].m, "\"%s\" read as %s", cases[i].text,
		             et_defrag_mode_name(si.defrag));
		cr_expect_str_eq(et_defrag_mode_name(si.defrag), cases[i].name);
		cr_expect_eq(si.thp, ET_THP_NEVER);
		/* Only the policy files: the PMD size stays the default. */
		cr_expect_eq(si.pmd_size, 2 * UT_MIB);
		cr_expect(!si.pmd_size_read);
	}
}

Test(sysinfo, mode_names)
{
	cr_expect_str_eq(et_thp_mode_name(ET_THP_UNKNOWN), "unknown");
	cr_expect_str_eq(et_thp_mode_name((enum et_thp_mode)99), "unknown");
	cr_expect_str_eq(et_defrag_mode_name(ET_DEFRAG_UNKNOWN), "unknown");
	cr_expect_str_eq(et_defrag_mode_name((enum et_defrag_mode)99), "unknown");
}

Test(sysinfo, garbage_policy_files)
{
	static const char *const garbage[] = {
		"", "\n", "garbage\n", "always madvise never\n", "[sometimes] always\n", "[\n", "]\n",
		"[madvise\n", "madvise]\n", "[]\n", "[ always ]\n", "[Always]\n",
		"[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n",
		"[always\n] never\n",
	};
	for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++) {
		struct tree t = { .enabled = garbage[i], .defrag = garbage[i] };
		struct et_sysinfo si = read_tree(&t);
		cr_expect_eq(si.thp, ET_THP_UNKNOWN, "enabled \"%s\" read as %s", garbage[i],
		             et_thp_mode_name(si.thp));
		/* "[always\n] never" does bracket "always\n", which is not "always". */
		cr_expect_eq(si.defrag, ET_DEFRAG_UNKNOWN, "defrag \"%s\" read as %s", garbage[i],
		             et_defrag_mode_name(si.defrag));
	}
}

Test(sysinfo, pmd_sizes)
{
	static const struct { const char *text; uint64_t v; } ok[] = {
		{ "2097152\n", 2 * UT_MIB }, { "65536\n", 64 * UT_KIB }, { "33554432\n", 32 * UT_MIB },
		{ "536870912\n", 512 * UT_MIB }, { "1073741824\n", UT_GIB }, { "2097152", 2 * UT_MIB },
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		struct tree t = { .pmd = ok[i].text };
		struct et_sysinfo si = read_tree(&t);
		cr_expect_eq(si.pmd_size, ok[i].v, "\"%s\" read as %llu", ok[i].text,
		             (unsigned long long)si.pmd_size);
		cr_expect(si.pmd_size_read, "\"%s\" not marked read", ok[i].text);
	}
}

/* The PMD sizes of arm64's three page sizes (4 KiB: 2 MiB, 16 KiB: 32 MiB,
 * 64 KiB: 512 MiB) read from sysfs, and which ones the library works with:
 * up to 32 MiB; a 512 MiB window is refused (nothing planned or copied). */
Test(sysinfo, pmd_size_limit)
{
	static const struct { const char *text; bool usable; } sz[] = {
		{ "2097152\n", true }, { "33554432\n", true }, { "536870912\n", false },
		{ "67108864\n", false }, { "1073741824\n", false },
	};
	for (size_t i = 0; i < sizeof sz / sizeof *sz; i++) {
		struct tree t = { .pmd = sz[i].text };
		struct et_sysinfo si = read_tree(&t);
		cr_expect(si.pmd_size_read);
		cr_expect_eq(et_pmd_size_usable(si.pmd_size), sz[i].usable, "%llu: usable %d, expected %d",
		             (unsigned long long)si.pmd_size, et_pmd_size_usable(si.pmd_size), sz[i].usable);
	}
	cr_expect(!et_pmd_size_usable(0));
	cr_expect_eq(ET_PMD_MAX, 32 * UT_MIB);
	/* the reason names the limit */
	cr_expect(strstr(et_reason_text(ET_R_PMD_TOO_LARGE), "32 MiB") != NULL, "%s",
	          et_reason_text(ET_R_PMD_TOO_LARGE));
	/* this machine's page size gives a floor the library can work with */
	uint64_t floor = et_pmd_size_floor();
	if (floor)
		cr_expect(et_pmd_size_usable(floor), "floor %llu", (unsigned long long)floor);
}

Test(sysinfo, bad_pmd_sizes_keep_default)
{
	static const char *const bad[] = {
		"", "\n", "abc\n", "-2097152\n", "3000000\n", "2097153\n", "4096\n", "32768\n", "0\n",
		"1\n", " 2097152\n", "0x200000\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		/* A decoy pool for the bad size, and the real 2 MiB pool: the pool
		 * must be looked up for the size actually in use. */
		struct tree t = { .pmd = bad[i], .pool_dir = "hugepages-2048kB", .free = "6\n", .nr = "7\n" };
		struct et_sysinfo si = read_tree(&t);
		cr_expect_eq(si.pmd_size, 2 * UT_MIB, "\"%s\" read as %llu", bad[i],
		             (unsigned long long)si.pmd_size);
		cr_expect(!si.pmd_size_read, "\"%s\" marked read", bad[i]);
		cr_expect_eq(si.hugetlb_free, 6, "\"%s\": pool of the default size not read", bad[i]);
		cr_expect_eq(si.hugetlb_total, 7);
	}
}

/* Numbers too big for a long must not wrap around into plausible values:
 * 2^64 + 4 MiB wraps (in 64-bit arithmetic) to exactly 4 MiB, a valid PMD
 * size; 2^64 + 1 free pages wraps to 1. */
Test(sysinfo, overflowing_numbers_are_rejected)
{
	struct tree t = { .pmd = "18446744073713745920\n", .pool_dir = "hugepages-2048kB",
	                  .free = "18446744073709551617\n", .nr = "18446744073709551618\n" };
	struct et_sysinfo si = read_tree(&t);
	cr_expect_eq(si.pmd_size, 2 * UT_MIB, "2^64 + 4 MiB read as pmd_size %llu",
	             (unsigned long long)si.pmd_size);
	cr_expect(!si.pmd_size_read, "2^64 + 4 MiB accepted as a PMD size");
	cr_expect(si.hugetlb_free == -1 || si.hugetlb_free > 1000000000L,
	          "2^64 + 1 free pages read as %ld", si.hugetlb_free);
}

Test(sysinfo, hugetlb_pool_2m)
{
	struct tree t = { .enabled = "always [madvise] never\n", .pmd = "2097152\n",
	                  .pool_dir = "hugepages-2048kB", .free = "5\n", .nr = "8\n" };
	struct et_sysinfo si = read_tree(&t);
	cr_expect_eq(si.hugetlb_free, 5);
	cr_expect_eq(si.hugetlb_total, 8);
	cr_expect_eq(si.thp, ET_THP_MADVISE);

	struct tree empty = { .pmd = "2097152\n", .pool_dir = "hugepages-2048kB", .free = "0\n", .nr = "0\n" };
	si = read_tree(&empty);
	cr_expect_eq(si.hugetlb_free, 0);
	cr_expect_eq(si.hugetlb_total, 0);

	/* Only one of the two files. */
	struct tree half = { .pool_dir = "hugepages-2048kB", .nr = "12\n" };
	si = read_tree(&half);
	cr_expect_eq(si.hugetlb_free, -1);
	cr_expect_eq(si.hugetlb_total, 12);

	struct tree junk = { .pool_dir = "hugepages-2048kB", .free = "many\n", .nr = "\n" };
	si = read_tree(&junk);
	cr_expect_eq(si.hugetlb_free, -1);
	cr_expect_eq(si.hugetlb_total, -1);
}

/* Only the pool of the PMD size counts: the 1 GiB pool is another size. */
Test(sysinfo, hugetlb_pool_other_size_ignored)
{
	struct tree t = { .pmd = "2097152\n", .pool_dir = "hugepages-1048576kB", .free = "2\n", .nr = "2\n" };
	struct et_sysinfo si = read_tree(&t);
	cr_expect_eq(si.hugetlb_free, -1);
	cr_expect_eq(si.hugetlb_total, -1);
}

Test(sysinfo, pmd_32m_reads_the_32m_pool)
{
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	struct tree t = { .enabled = "always [madvise] never\n",
	                  .defrag = "always defer [defer+madvise] madvise never\n",
	                  .pmd = "33554432\n", .pool_dir = "hugepages-32768kB", .free = "3\n", .nr = "4\n" };
	make_tree(dir, &t);
	/* A decoy 2 MiB pool that must not be read. */
	struct tree decoy = { .pool_dir = "hugepages-2048kB", .free = "99\n", .nr = "99\n" };
	make_tree(dir, &decoy);
	struct et_sysinfo si;
	et_sysinfo_read(&si, dir);
	cr_expect_eq(si.pmd_size, 32 * UT_MIB);
	cr_expect(si.pmd_size_read);
	cr_expect_eq(si.hugetlb_free, 3);
	cr_expect_eq(si.hugetlb_total, 4);
	cr_expect_eq(si.thp, ET_THP_MADVISE);
	cr_expect_eq(si.defrag, ET_DEFRAG_DEFER_MADVISE);

	/* Without the 32 MiB pool, the 2 MiB one is still not it. */
	char rel[PATH_MAX + 64];
	snprintf(rel, sizeof rel, "%s/sys/kernel/mm/hugepages/hugepages-32768kB", dir);
	ut_rmtree(rel);
	et_sysinfo_read(&si, dir);
	cr_expect_eq(si.pmd_size, 32 * UT_MIB);
	cr_expect_eq(si.hugetlb_free, -1);
	cr_expect_eq(si.hugetlb_total, -1);
	ut_rmtree(dir);
}

Test(sysinfo, root_with_trailing_slash)
{
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	struct tree t = { .enabled = "[always] madvise never\n", .pmd = "65536\n" };
	make_tree(dir, &t);
	char root[PATH_MAX + 2];
	snprintf(root, sizeof root, "%s/", dir);
	struct et_sysinfo si;
	et_sysinfo_read(&si, root);
	cr_expect_eq(si.thp, ET_THP_ALWAYS);
	cr_expect_eq(si.pmd_size, 64 * UT_KIB);
	ut_rmtree(dir);
}

/* The real system: compare with what the test reads itself. */
Test(sysinfo, real_system)
{
	static const char *const roots[] = { "/", "" };
	for (int r = 0; r < 2; r++) {
		struct et_sysinfo si;
		et_sysinfo_read(&si, roots[r]);
		size_t len;
		char *pmd = ut_read("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", &len);
		if (pmd) {
			cr_expect_eq(si.pmd_size, strtoull(pmd, NULL, 10), "root \"%s\"", roots[r]);
			cr_expect(si.pmd_size_read);
			free(pmd);
		} else {
			cr_expect_eq(si.pmd_size, 2 * UT_MIB);
		}
		char *en = ut_read("/sys/kernel/mm/transparent_hugepage/enabled", &len);
		if (en) {
			const char *want = strstr(en, "[always]") ? "always"
			                 : strstr(en, "[madvise]") ? "madvise"
			                 : strstr(en, "[never]") ? "never" : "unknown";
			cr_expect_str_eq(et_thp_mode_name(si.thp), want, "root \"%s\"", roots[r]);
			free(en);
		}
		int flag = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
		cr_expect_eq(si.thp_disabled_process, flag > 0);
	}
}

Test(sysinfo, process_thp_disable_is_seen)
{
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0)
		cr_skip_test("PR_SET_THP_DISABLE not available: %s", strerror(errno));
	struct et_sysinfo si;
	et_sysinfo_read(&si, "/");
	cr_expect(si.thp_disabled_process);
	/* A fake root never reports it (it is not a file). */
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	et_sysinfo_read(&si, dir);
	cr_expect(!si.thp_disabled_process);
	ut_rmtree(dir);
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	et_sysinfo_read(&si, "/");
	cr_expect(!si.thp_disabled_process);
}

/* The two halves: read_pmd resets everything and reads only the size;
 * read_policy then adds the policy and the pool of that size. */
Test(sysinfo, read_pmd_then_policy)
{
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	struct tree t = { .enabled = "[always] madvise never\n",
	                  .defrag = "always [defer] defer+madvise madvise never\n",
	                  .pmd = "33554432\n", .pool_dir = "hugepages-32768kB", .free = "2\n", .nr = "9\n" };
	make_tree(dir, &t);
	struct et_sysinfo si;
	memset(&si, 0x5A, sizeof si);
	et_sysinfo_read_pmd(&si, dir);
	cr_expect_eq(si.pmd_size, 32 * UT_MIB);
	cr_expect(si.pmd_size_read);
	cr_expect_eq(si.thp, ET_THP_UNKNOWN, "read_pmd read the policy");
	cr_expect_eq(si.defrag, ET_DEFRAG_UNKNOWN);
	cr_expect_eq(si.hugetlb_free, -1);
	cr_expect_eq(si.hugetlb_total, -1);
	cr_expect(!si.thp_disabled_process);
	et_sysinfo_read_policy(&si, dir);
	cr_expect_eq(si.pmd_size, 32 * UT_MIB);
	cr_expect_eq(si.thp, ET_THP_ALWAYS);
	cr_expect_eq(si.defrag, ET_DEFRAG_DEFER);
	cr_expect_eq(si.hugetlb_free, 2);
	cr_expect_eq(si.hugetlb_total, 9);

	/* The whole read gives the same. */
	struct et_sysinfo all;
	memset(&all, 0x5A, sizeof all);
	et_sysinfo_read(&all, dir);
	cr_expect_eq(all.pmd_size, si.pmd_size);
	cr_expect_eq(all.pmd_size_read, si.pmd_size_read);
	cr_expect_eq(all.thp, si.thp);
	cr_expect_eq(all.defrag, si.defrag);
	cr_expect_eq(all.hugetlb_free, si.hugetlb_free);
	cr_expect_eq(all.hugetlb_total, si.hugetlb_total);
	cr_expect_eq(all.thp_disabled_process, si.thp_disabled_process);
	ut_rmtree(dir);
}
