/*
 * test_memcg.c — et_memcg_read against fake /proc and cgroup trees made in
 * a temporary directory (cgroup v1 and v2, limits on ancestors, "max",
 * missing and garbage files, mounts that show part of a hierarchy, escaped
 * mount points, long mountinfo lines), et_memcg_margin, and the copy order
 * of et_memcg_keep_best.
 */
#include "unit_util.h"

#include "core/memcg.h"

TestSuite(memcg, .timeout = 30, .fini = ut_cleanup);

#define V1_NOLIMIT "9223372036854771712\n"   /* what v1 writes for "no limit" */

/* The usual mounts: v1 controllers under /sys/fs/cgroup, cgroup2 beside. */
static const char MOUNTINFO_V1[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static const char MOUNTINFO_V2[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"30 22 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
	"rw,nsdelegate,memory_recursiveprot\n";

static struct et_memcg read_tree(const char *dir)
{
	struct et_memcg m;
	memset(&m, 0x5A, sizeof m);
	et_memcg_read(&m, dir);
	return m;
}

static void expect_unlimited(const struct et_memcg *m, const char *what)
{
	cr_expect_eq(m->budget, ET_MEMCG_UNLIMITED, "%s: budget %llu, want unlimited", what,
	             (unsigned long long)m->budget);
	cr_expect_eq(m->version, 0, "%s: version %d", what, m->version);
	cr_expect(!m->garbled, "%s: garbled", what);
}

/* limit - usage - margin, with the margin written out: max(16 MiB, limit/8) */
#define LEFT(limit, usage) ((limit) - (usage) - ((limit) / 8 > 16 * UT_MIB ? (limit) / 8 : 16 * UT_MIB))

Test(memcg, margin_is_an_eighth_with_a_floor)
{
	cr_expect_eq(et_memcg_margin(0), 16 * UT_MIB);
	cr_expect_eq(et_memcg_margin(64 * UT_MIB), 16 * UT_MIB);
	cr_expect_eq(et_memcg_margin(128 * UT_MIB), 16 * UT_MIB);
	cr_expect_eq(et_memcg_margin(256 * UT_MIB), 32 * UT_MIB);
	cr_expect_eq(et_memcg_margin(UT_GIB), 128 * UT_MIB);
}

Test(memcg, v1_one_limit)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "5:cpu:/\n4:memory:/a\n0::/\n");
	ut_write(d, "proc/self/mountinfo", MOUNTINFO_V1);
	ut_write(d, "sys/fs/cgroup/memory/memory.limit_in_bytes", V1_NOLIMIT);
	ut_write(d, "sys/fs/cgroup/memory/memory.usage_in_bytes", "20000000000\n");
	ut_write(d, "sys/fs/cgroup/memory/a/memory.limit_in_bytes", "268435456\n");
	ut_write(d, "sys/fs/cgroup/memory/a/memory.usage_in_bytes", "104857600\n");
	/* memsw is memory + swap: never the tighter one, never read */
	ut_write(d, "sys/fs/cgroup/memory/a/memory.memsw.limit_in_bytes", "1\n");
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, 256 * UT_MIB - 100 * UT_MIB - 32 * UT_MIB, "budget %llu",
	             (unsigned long long)m.budget);
	cr_expect_eq(m.limit, 256 * UT_MIB);
	cr_expect_eq(m.usage, 100 * UT_MIB);
	cr_expect_eq(m.margin, 32 * UT_MIB);
	cr_expect_eq(m.version, 1);
	cr_expect(!m.garbled);
	cr_expect_str_eq(m.path, "/sys/fs/cgroup/memory/a");
	/* a and the hierarchy's root (cgroup2 shows no memory files here) */
	cr_expect_eq(m.levels, 3, "levels %u", m.levels);
	ut_rmtree(d);
}

Test(memcg, v1_memory_among_other_controllers)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "3:cpu,cpuacct:/x\n2:blkio,memory:/job\n");
	ut_write(d, "proc/self/mountinfo",
	         "34 30 0:31 / /cg/mem rw,relatime - cgroup cgroup rw,blkio,memory\n"
	         "35 30 0:32 / /cg/cpu rw,relatime - cgroup cgroup rw,cpu,cpuacct\n");
	ut_write(d, "cg/mem/job/memory.limit_in_bytes", "536870912\n");
	ut_write(d, "cg/mem/job/memory.usage_in_bytes", "0\n");
	ut_write(d, "cg/cpu/x/memory.limit_in_bytes", "1\n");     /* not the memory hierarchy */
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, LEFT(512 * UT_MIB, 0), "budget %llu", (unsigned long long)m.budget);
	cr_expect_str_eq(m.path, "/cg/mem/job");
	ut_rmtree(d);
}

Test(memcg, v1_unlimited_value_is_no_limit)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "4:memory:/a\n");
	ut_write(d, "proc/self/mountinfo", MOUNTINFO_V1);
	ut_write(d, "sys/fs/cgroup/memory/a/memory.limit_in_bytes", V1_NOLIMIT);
	ut_write(d, "sys/fs/cgroup/memory/a/memory.usage_in_bytes", "104857600\n");
	/* 64 KiB pages write a different "no limit" */
	ut_write(d, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854710272\n");
	ut_write(d, "sys/fs/cgroup/memory/memory.usage_in_bytes", "104857600\n");
	struct et_memcg m = read_tree(d);
	expect_unlimited(&m, "v1 no limit");
	cr_expect_eq(m.levels, 2, "levels %u", m.levels);
	ut_rmtree(d);
}

Test(memcg, v2_max_high_current)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "0::/a\n");
	ut_write(d, "proc/self/mountinfo", MOUNTINFO_V2);
	ut_write(d, "sys/fs/cgroup/a/memory.max", "1073741824\n");
	ut_write(d, "sys/fs/cgroup/a/memory.high", "max\n");
	ut_write(d, "sys/fs/cgroup/a/memory.current", "209715200\n");
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, UT_GIB - 200 * UT_MIB - 128 * UT_MIB, "budget %llu",
	             (unsigned long long)m.budget);
	cr_expect_eq(m.version, 2);
	cr_expect_eq(m.limit, UT_GIB);
	cr_expect_str_eq(m.path, "/sys/fs/cgroup/a");
	cr_expect(!m.hugetlb_charged);
	ut_rmtree(d);
}

Test(memcg, v2_high_below_max_is_the_limit)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "0::/a\n");
	ut_write(d, "proc/self/mountinfo", MOUNTINFO_V2);
	ut_write(d, "sys/fs/cgroup/a/memory.max", "1073741824\n");
	ut_write(d, "sys/fs/cgroup/a/memory.high", "536870912\n");
	ut_write(d, "sys/fs/cgroup/a/memory.current", "104857600\n");
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, LEFT(512 * UT_MIB, 100 * UT_MIB), "budget %llu",
	             (unsigned long long)m.budget);
	cr_expect_eq(m.limit, 512 * UT_MIB);
	ut_rmtree(d);
}

Test(memcg, v2_max_everywhere_is_unlimited)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "0::/a/b\n");
	ut_write(d, "proc/self/mountinfo", MOUNTINFO_V2);
	ut_write(d, "sys/fs/cgroup/a/b/memory.max", "max\n");
	ut_write(d, "sys/fs/cgroup/a/b/memory.high", "max\n");
	ut_write(d, "sys/fs/cgroup/a/b/memory.current", "104857600\n");
	ut_write(d, "sys/fs/cgroup/a/memory.max", "max\n");
	ut_write(d, "sys/fs/cgroup/a/memory.current", "104857600\n");
	/* the root cgroup has no memory.max at all */
	ut_write(d, "sys/fs/cgroup/memory.stat", "anon 0\n");
	struct et_memcg m = read_tree(d);
	expect_unlimited(&m, "max everywhere");
	cr_expect_eq(m.levels, 3, "levels %u", m.levels);
	ut_rmtree(d);
}

/* A parent's limit applies to its children: the tightest level wins, even
 * when it is not the process's own cgroup. */
Test(memcg, nested_limits_tightest_ancestor_wins)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "0::/a/b/c\n");
	ut_write(d, "proc/self/mountinfo", MOUNTINFO_V2);
	ut_write(d, "sys/fs/cgroup/a/b/c/memory.max", "max\n");
	ut_write(d, "sys/fs/cgroup/a/b/c/memory.current", "10485760\n");
	ut_write(d, "sys/fs/cgroup/a/b/memory.max", "314572800\n");    /* 300 MiB */
	ut_write(d, "sys/fs/cgroup/a/b/memory.current", "262144000\n"); /* 250 MiB */
	ut_write(d, "sys/fs/cgroup/a/memory.max", "1073741824\n");
	ut_write(d, "sys/fs/cgroup/a/memory.current", "272629760\n");
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, LEFT(300 * UT_MIB, 250 * UT_MIB), "budget %llu",
	             (unsigned long long)m.budget);
	cr_expect_str_eq(m.path, "/sys/fs/cgroup/a/b");
	cr_expect_eq(m.levels, 4, "levels %u", m.levels);

	/* the same with the tight one at the process's own level */
	ut_write(d, "sys/fs/cgroup/a/b/c/memory.max", "37748736\n");    /* 36 MiB: 10 left */
	m = read_tree(d);
	cr_expect_eq(m.budget, LEFT(36 * UT_MIB, 10 * UT_MIB), "budget %llu",
	             (unsigned long long)m.budget);
	cr_expect_str_eq(m.path, "/sys/fs/cgroup/a/b/c");
	ut_rmtree(d);
}

Test(memcg, over_the_margin_gives_zero)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "0::/a\n");
	ut_write(d, "proc/self/mountinfo", MOUNTINFO_V2);
	ut_write(d, "sys/fs/cgroup/a/memory.max", "33554432\n");        /* 32 MiB */
	ut_write(d, "sys/fs/cgroup/a/memory.current", "20971520\n");    /* 20: 12 left < 16 */
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, 0, "budget %llu", (unsigned long long)m.budget);
	cr_expect_eq(m.version, 2);
	cr_expect(!m.garbled);
	/* usage above the limit (possible for a moment, and after a lowered limit) */
	ut_write(d, "sys/fs/cgroup/a/memory.current", "67108864\n");
	m = read_tree(d);
	cr_expect_eq(m.budget, 0, "budget %llu", (unsigned long long)m.budget);
	ut_rmtree(d);
}

Test(memcg, both_hierarchies_the_lower_wins)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "4:memory:/v1g\n0::/v2g\n");
	ut_write(d, "proc/self/mountinfo", MOUNTINFO_V1);
	ut_write(d, "sys/fs/cgroup/memory/v1g/memory.limit_in_bytes", "1073741824\n");
	ut_write(d, "sys/fs/cgroup/memory/v1g/memory.usage_in_bytes", "0\n");
	ut_write(d, "sys/fs/cgroup/unified/v2g/memory.max", "268435456\n");
	ut_write(d, "sys/fs/cgroup/unified/v2g/memory.current", "0\n");
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, LEFT(256 * UT_MIB, 0), "budget %llu", (unsigned long long)m.budget);
	cr_expect_eq(m.version, 2);
	cr_expect_str_eq(m.path, "/sys/fs/cgroup/unified/v2g");
	ut_rmtree(d);
}

Test(memcg, missing_files_are_no_limit)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	struct et_memcg m = read_tree(d);
	expect_unlimited(&m, "empty tree");
	cr_expect_eq(m.levels, 0);

	m = read_tree("/nonexistent/et-unit-memcg");
	expect_unlimited(&m, "no such root");

	/* cgroup known, no mountinfo */
	ut_write(d, "proc/self/cgroup", "0::/a\n");
	m = read_tree(d);
	expect_unlimited(&m, "no mountinfo");
	cr_expect_eq(m.levels, 0);

	/* mounted, but the cgroup's directory is not there */
	ut_write(d, "proc/self/mountinfo", MOUNTINFO_V2);
	m = read_tree(d);
	expect_unlimited(&m, "no directory");

	/* a limit whose usage file is missing: there is a limit, how near is unknown */
	ut_write(d, "sys/fs/cgroup/a/memory.max", "268435456\n");
	m = read_tree(d);
	cr_expect_eq(m.budget, 0, "limit without usage: budget %llu", (unsigned long long)m.budget);
	cr_expect(m.garbled);
	ut_rmtree(d);
}

Test(memcg, garbage_values_give_zero)
{
	static const char *bad[] = { "12abc\n", "-5\n", "\n", "", "99999999999999999999999\n", "maximum\n" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char d[PATH_MAX];
		ut_tmpdir(d, sizeof d);
		ut_write(d, "proc/self/cgroup", "0::/a/b\n");
		ut_write(d, "proc/self/mountinfo", MOUNTINFO_V2);
		ut_write(d, "sys/fs/cgroup/a/b/memory.max", "max\n");
		ut_write(d, "sys/fs/cgroup/a/b/memory.current", "0\n");
		/* the garbage is a parent's limit */
		ut_write(d, "sys/fs/cgroup/a/memory.max", bad[i]);
		ut_write(d, "sys/fs/cgroup/a/memory.current", "0\n");
		struct et_memcg m = read_tree(d);
		cr_expect_eq(m.budget, 0, "limit '%s': budget %llu", bad[i], (unsigned long long)m.budget);
		cr_expect(m.garbled, "limit '%s': garbled", bad[i]);
		cr_expect_str_eq(m.path, "/sys/fs/cgroup/a");

		/* a good limit, a garbage usage */
		ut_write(d, "sys/fs/cgroup/a/memory.max", "1073741824\n");
		ut_write(d, "sys/fs/cgroup/a/memory.current", bad[i]);
		m = read_tree(d);
		cr_expect_eq(m.budget, 0, "usage '%s': budget %llu", bad[i], (unsigned long long)m.budget);
		cr_expect(m.garbled, "usage '%s': garbled", bad[i]);
		ut_rmtree(d);
	}
}

Test(memcg, garbage_cgroup_and_mountinfo_lines_are_skipped)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "garbage\n4:memory\n::\n0::relative\n0::/a\n");
	ut_write(d, "proc/self/mountinfo",
	         "nonsense\n"
	         "1 2 3 4 - cgroup2\n"
	         "30 22 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw");   /* no final newline */
	ut_write(d, "sys/fs/cgroup/a/memory.max", "268435456\n");
	ut_write(d, "sys/fs/cgroup/a/memory.current", "0\n");
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, LEFT(256 * UT_MIB, 0), "budget %llu", (unsigned long long)m.budget);
	ut_rmtree(d);
}

/* A container's view: the mount shows only the part of the hierarchy from
 * its root down (bind mount, no cgroup namespace). */
Test(memcg, mount_root_below_the_hierarchy_root)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "4:memory:/docker/abc/job\n");
	ut_write(d, "proc/self/mountinfo",
	         "34 30 0:31 /other /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	         "35 30 0:31 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
	ut_write(d, "sys/fs/cgroup/memory/job/memory.limit_in_bytes", V1_NOLIMIT);
	ut_write(d, "sys/fs/cgroup/memory/job/memory.usage_in_bytes", "0\n");
	/* the container's own cgroup is the mount point itself */
	ut_write(d, "sys/fs/cgroup/memory/memory.limit_in_bytes", "268435456\n");
	ut_write(d, "sys/fs/cgroup/memory/memory.usage_in_bytes", "16777216\n");
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, LEFT(256 * UT_MIB, 16 * UT_MIB), "budget %llu",
	             (unsigned long long)m.budget);
	cr_expect_str_eq(m.path, "/sys/fs/cgroup/memory");
	cr_expect_eq(m.levels, 2, "levels %u: never above the mount point", m.levels);

	/* a cgroup outside every mount's root cannot be found: no limit known */
	ut_write(d, "proc/self/cgroup", "4:memory:/docker/abcdef\n");
	m = read_tree(d);
	expect_unlimited(&m, "outside the mount");
	ut_rmtree(d);
}

Test(memcg, escaped_mount_point)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "0::/a\n");
	ut_write(d, "proc/self/mountinfo", "30 22 0:27 / /my\\040cgroups rw - cgroup2 cgroup2 rw\n");
	ut_write(d, "my cgroups/a/memory.max", "268435456\n");
	ut_write(d, "my cgroups/a/memory.current", "0\n");
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, LEFT(256 * UT_MIB, 0), "budget %llu", (unsigned long long)m.budget);
	cr_expect_str_eq(m.path, "/my cgroups/a");
	ut_rmtree(d);
}

/* Overlay mounts' options run to kilobytes: a line longer than the reader's
 * buffer is skipped, the lines after it are still read. */
Test(memcg, long_mountinfo_lines)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "0::/a\n");
	static char mi[16384];
	int n = snprintf(mi, sizeof mi, "22 1 0:40 / / rw - overlay overlay rw,lowerdir=");
	for (int i = 0; i < 300; i++)
		n += snprintf(mi + n, sizeof mi - (size_t)n, "/var/lib/x/%04d:", i);
	/* the end of the long line, read alone, would look like a cgroup2
	 * mount elsewhere: it must not be taken for one */
	n += snprintf(mi + n, sizeof mi - (size_t)n, " 1 0:1 / /fake - cgroup2 cgroup2 rw\n"
	              "30 22 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	cr_assert_lt((size_t)n, sizeof mi);
	ut_write(d, "proc/self/mountinfo", mi);
	ut_write(d, "sys/fs/cgroup/a/memory.max", "268435456\n");
	ut_write(d, "sys/fs/cgroup/a/memory.current", "0\n");
	struct et_memcg m = read_tree(d);
	cr_expect_eq(m.budget, LEFT(256 * UT_MIB, 0), "budget %llu", (unsigned long long)m.budget);
	ut_rmtree(d);
}

Test(memcg, hugetlb_accounting_mount_option)
{
	char d[PATH_MAX];
	ut_tmpdir(d, sizeof d);
	ut_write(d, "proc/self/cgroup", "0::/\n");
	ut_write(d, "proc/self/mountinfo",
	         "30 22 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate,memory_hugetlb_accounting\n");
	struct et_memcg m = read_tree(d);
	cr_expect(m.hugetlb_charged);
	expect_unlimited(&m, "root cgroup");
	ut_rmtree(d);
}

Test(memcg, real_system_keeps_errno)
{
	struct et_memcg m;
	errno = 1234;
	et_memcg_read(&m, "/");
	cr_expect_eq(errno, 1234);
	cr_expect(m.budget == ET_MEMCG_UNLIMITED || m.version == 1 || m.version == 2,
	          "a budget %llu must name its hierarchy", (unsigned long long)m.budget);
}

/* ----------------------------------------------------------- copy order */

static struct et_window wins[8];

static void held(const char *marks)
{
	memset(wins, 0, sizeof wins);
	for (size_t i = 0; marks[i]; i++)
		wins[i].held_back = marks[i] == 'x';
}

static void marks(char *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = wins[i].held_back ? 'x' : '.';
	out[n] = '\0';
}

Test(memcg, keep_best_without_profile_keeps_the_planner_order)
{
	char got[9];
	held(".xxxx.xx");
	cr_expect_eq(et_memcg_keep_best(wins, 8, 3), 3);
	marks(got, 8);
	cr_expect_str_eq(got, "....x.xx", "the first three held windows are copied");

	held(".xxxx.xx");
	cr_expect_eq(et_memcg_keep_best(wins, 8, 0), 6);
	marks(got, 8);
	cr_expect_str_eq(got, ".xxxx.xx");

	held(".xxxx.xx");
	cr_expect_eq(et_memcg_keep_best(wins, 8, 6), 0);
	marks(got, 8);
	cr_expect_str_eq(got, "........");

	held(".xxxx.xx");
	cr_expect_eq(et_memcg_keep_best(wins, 8, 100), 0);
	marks(got, 8);
	cr_expect_str_eq(got, "........");
}

Test(memcg, keep_best_hottest_first)
{
	char got[9];
	static const uint64_t heat[8] = { 500, 5, 90, 7, 90, 300, 1, 40 };
	held("xxxxxxxx");
	for (size_t i = 0; i < 8; i++) {
		wins[i].heat = heat[i];
		wins[i].heat_known = true;
	}
	cr_expect_eq(et_memcg_keep_best(wins, 8, 3), 5);
	marks(got, 8);
	cr_expect_str_eq(got, ".x.xx.xx", "500, 300 and the first 90");

	held("xxxxxxxx");
	for (size_t i = 0; i < 8; i++) {
		wins[i].heat = heat[i];
		wins[i].heat_known = true;
	}
	cr_expect_eq(et_memcg_keep_best(wins, 8, 4), 4);
	marks(got, 8);
	cr_expect_str_eq(got, ".x.x..xx", "both 90s");
}

/* Windows of objects the profile does not have (heat unknown) come after
 * the measured ones, in the planner's order; windows not held are left. */
Test(memcg, keep_best_measured_before_unmeasured)
{
	char got[9];
	held("xxx.xxx");
	wins[3].heat = 1000;             /* not held: not a candidate here */
	wins[3].heat_known = true;
	wins[4].heat = 2;
	wins[4].heat_known = true;
	wins[6].heat = 10;
	wins[6].heat_known = true;
	cr_expect_eq(et_memcg_keep_best(wins, 7, 3), 3);
	marks(got, 7);
	cr_expect_str_eq(got, ".xx..x.", "the two measured, then the first unmeasured");
	cr_expect(!wins[3].held_back);
}
