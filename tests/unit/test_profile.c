/*
 * test_profile.c — the profile parser (et_profile_parse) on good and bad
 * files, and et_profile_heat; then many mutations of a good file: each
 * parses, or is refused with "line N: ...", and nothing crashes.
 */
#include "unit_util.h"

#include "internal.h"

#include <stdlib.h>

TestSuite(profile, .timeout = 60, .fini = ut_cleanup);

static const char good[] =
	"enormoustext-profile 1\n"
	"# a comment\n"
	"granule 4096\n"
	"\n"
	"object 0123456789abcdef0123456789ABCDEF01234567 /usr/bin/prog with spaces\n"
	"200000 10\n"
	"201000 5\r\n"
	"0x3ff000 7\n"
	"object beef /lib/libx.so\n"
	"1000 1\n";

static int parse(struct et_profile *p, const char *s)
{
	return et_profile_parse(p, s, strlen(s));
}

Test(profile, good_file)
{
	struct et_profile p;
	cr_assert_eq(parse(&p, good), 0, "%s", p.err);
	cr_expect_eq(p.granule, 4096);
	cr_assert_eq(p.nobjs, 2);
	cr_expect_str_eq(p.objs[0].build_id, "0123456789abcdef0123456789abcdef01234567");
	cr_expect_str_eq(et_profile_path(&p, &p.objs[0]), "/usr/bin/prog with spaces");
	cr_expect_eq(p.objs[0].n, 3);
	cr_expect_eq(p.objs[0].total, 22);
	cr_expect_str_eq(et_profile_path(&p, &p.objs[1]), "/lib/libx.so");
	cr_expect_eq(p.objs[1].total, 1);
	const struct et_prof_obj *o = et_profile_find(&p, "0123456789abcdef0123456789abcdef01234567");
	cr_assert_not_null(o);
	cr_expect_null(et_profile_find(&p, "0123"));
	cr_expect_null(et_profile_find(&p, ""));
	/* heat over ranges */
	cr_expect_eq(et_profile_heat(&p, o, 0x200000, 0x400000), 22);
	cr_expect_eq(et_profile_heat(&p, o, 0x201000, 0x202000), 5);
	cr_expect_eq(et_profile_heat(&p, o, 0x202000, 0x3ff000), 0);
	cr_expect_eq(et_profile_heat(&p, o, 0, 0x200000), 0);
	cr_expect_eq(et_profile_heat(&p, o, 0x3ff000, UINT64_MAX), 7);
	et_profile_free(&p);
	cr_expect_null(p.mem);
}

Test(profile, bad_files_name_the_line)
{
	static const struct { const char *text; const char *err; } bad[] = {
		{ "", "line 1: empty" },
		{ "hello\n", "line 1: not an enormoustext profile" },
		{ "enormoustext-profile 2\ngranule 4096\n", "line 1: a profile of another version" },
		{ "enormoustext-profile\n", "line 1: not an enormoustext profile" },
		{ "enormoustext-profile 1\n", "line 2: no \"granule\" line" },
		{ "enormoustext-profile 1\ngranule 4095\n", "line 2: expected \"granule N\"" },
		{ "enormoustext-profile 1\ngranule 32\n", "line 2: expected \"granule N\"" },
		{ "enormoustext-profile 1\ngranule 4096\n1000 1\n", "line 3: a count before any" },
		{ "enormoustext-profile 1\ngranule 4096\nobject xyz /p\n", "line 3: a build-id" },
		{ "enormoustext-profile 1\ngranule 4096\nobject\n", "line 3: a build-id" },
		{ "enormoustext-profile 1\ngranule 4096\nobject ab /p\nobject AB /q\n", "line 4: the same build-id twice" },
		{ "enormoustext-profile 1\ngranule 4096\nobject ab /p\n2000 1\n1000 1\n", "line 5: addresses not increasing" },
		{ "enormoustext-profile 1\ngranule 4096\nobject ab /p\n1001 1\n", "line 4: an address that does not start" },
		{ "enormoustext-profile 1\ngranule 4096\nobject ab /p\n1000 x\n", "line 4: expected \"VADDR COUNT\"" },
		{ "enormoustext-profile 1\ngranule 4096\nobject ab /p\n1000 1 2\n", "line 4: expected \"VADDR COUNT\"" },
		{ "enormoustext-profile 1\ngranule 4096\nobject ab /p\n1000 99999999999999999999\n", "line 4: expected" },
		{ "enormoustext-profile 1\ngranule 4096\nobject ab /p\n1000 18446744073709551615\n2000 1\n",
		  "line 5: counts too large" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct et_profile p;
		int r = parse(&p, bad[i].text);
		cr_expect_lt(r, 0, "case %zu parsed", i);
		cr_expect(!strncmp(p.err, bad[i].err, strlen(bad[i].err)), "case %zu: \"%s\", expected \"%s...\"", i,
		          p.err, bad[i].err);
		cr_expect_null(p.mem, "case %zu: memory kept after an error", i);
	}
	/* a NUL byte inside */
	static const char nul[] = "enormoustext-profile 1\ngranule 4096\nobject ab /p\n10\0000 1\n";
	struct et_profile p;
	cr_expect_lt(et_profile_parse(&p, nul, sizeof nul - 1), 0);
	cr_expect_str_eq(p.err, "line 4: a NUL byte");
}

Test(profile, load_missing_and_not_regular)
{
	struct et_profile p;
	cr_expect_eq(et_profile_load(&p, "/nonexistent/profile"), -ENOENT);
	cr_expect(strlen(p.err) > 0);
	cr_expect_lt(et_profile_load(&p, "/"), 0);
	cr_expect_str_eq(p.err, "not a regular file");
	char dir[PATH_MAX], path[PATH_MAX + 8];
	ut_tmpdir(dir, sizeof dir);
	ut_write(dir, "p", good);
	snprintf(path, sizeof path, "%s/p", dir);
	cr_expect_eq(et_profile_load(&p, path), 0, "%s", p.err);
	cr_expect_eq(p.nobjs, 2);
	et_profile_free(&p);
}

/* Byte flips, truncations and insertions of a good file: each one parses or
 * is refused with a line number; the tables stay inside their bounds. */
Test(profile, mutations_never_crash)
{
	size_t len = sizeof good - 1;
	char buf[sizeof good + 16];
	unsigned seed = 12345;
	int ok = 0, refused = 0;
	for (int i = 0; i < 20000; i++) {
		memcpy(buf, good, len);
		size_t n = len;
		seed = seed * 1103515245u + 12345u;
		int kind = (int)((seed >> 16) % 3);
		size_t at = (seed >> 8) % len;
		if (kind == 0)
			buf[at] = (char)(seed >> 3);
		else if (kind == 1)
			n = at;
		else {
			memmove(buf + at + 1, buf + at, len - at);
			buf[at] = "0 \n#x\t\r"[(seed >> 5) % 7];
			n = len + 1;
		}
		struct et_profile p;
		if (et_profile_parse(&p, buf, n) == 0) {
			ok++;
			for (size_t k = 0; k < p.nobjs; k++) {
				cr_assert_leq(p.objs[k].first + p.objs[k].n, p.nents);
				(void)et_profile_heat(&p, &p.objs[k], 0, UINT64_MAX);
			}
			et_profile_free(&p);
		} else {
			refused++;
			cr_assert(!strncmp(p.err, "line ", 5), "refused without a line: \"%s\"", p.err);
		}
	}
	cr_expect_gt(ok, 0);
	cr_expect_gt(refused, 0);
}
