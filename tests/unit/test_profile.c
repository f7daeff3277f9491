/*
 * test_profile.c — the profile parser (et_profile_parse) on good and bad
 * files, and et_profile_heat; then many mutations of a good file: each
 * parses, or is refused with "line N: ...", and nothing crashes; then a
 * fleet-sized profile (200,000 objects): the same results as a small one
 * (counts, lookups of every object, heat, duplicates refused by line).
 */
#include "unit_util.h"

#include "core/profile.h"

#include <stdarg.h>
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

/* ---------------------------------------------------------------- scale */

/* A growing text buffer for the generated profiles. */
struct gen {
	char *buf;
	size_t len, cap;
	size_t lines;               /* lines written so far */
};

static void gen_printf(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gen_printf(struct gen *g, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
		va_end(ap);
		cr_assert_geq(n, 0);
		if ((size_t)n < g->cap - g->len) {
			g->len += (size_t)n;
			for (int i = 0; i < n; i++)
				g->lines += g->buf[g->len - (size_t)n + (size_t)i] == '\n';
			return;
		}
		g->cap = g->cap ? 2 * g->cap : 1 << 20;
		g->buf = realloc(g->buf, g->cap);
		cr_assert_not_null(g->buf);
	}
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Object i's build-id, lower case: 20 bytes, every fourth 8 bytes (lld's
 * --build-id=fast); distinct for distinct i (splitmix64 is a bijection). */
static void scale_bid(size_t i, char out[41])
{
	uint64_t s = i * 0x2545f4914f6cdd1dull + 1;
	uint64_t a = splitmix64(&s), b = splitmix64(&s), c = splitmix64(&s);
	if (i % 4 == 3)
		snprintf(out, 41, "%016llx", (unsigned long long)a);
	else
		snprintf(out, 41, "%016llx%016llx%08x", (unsigned long long)a, (unsigned long long)b, (unsigned)(uint32_t)c);
}

#define SCALE_N 200000

/* SCALE_N objects; object i has i % 4 counts (0: loaded, never run) at
 * 0x200000 + k * 0x3000, count i + k; every tenth written in upper case
 * (the parser folds it); comments and blank lines between. */
static void scale_profile(struct gen *g)
{
	memset(g, 0, sizeof *g);
	gen_printf(g, "enormoustext-profile 1\ngranule 4096\n");
	for (size_t i = 0; i < SCALE_N; i++) {
		char bid[41];
		scale_bid(i, bid);
		if (i % 10 == 0)
			for (char *c = bid; *c; c++)
				if (*c >= 'a' && *c <= 'f')
					*c = (char)(*c - 'a' + 'A');
		if (i % 1000 == 0)
			gen_printf(g, "# block %zu\n\n", i / 1000);
		gen_printf(g, "object %s /fleet/build-%zu/libgen%zu.so\n", bid, i % 97, i);
		for (size_t k = 0; k < i % 4; k++)
			gen_printf(g, "%llx %zu\n", 0x200000ull + k * 0x3000, i + k);
	}
}

Test(profile, scale_200k_objects)
{
	struct gen g;
	scale_profile(&g);
	struct et_profile p;
	cr_assert_eq(et_profile_parse(&p, g.buf, g.len), 0, "%s", p.err);
	cr_assert_eq(p.nobjs, SCALE_N);
	/* entries: 0 + 1 + 2 + 3 for each four objects */
	cr_expect_eq(p.nents, (size_t)SCALE_N / 4 * 6);
	cr_expect_eq(p.granule, 4096);
	/* every object is found, by its lower-case build-id, in file order */
	size_t wrong = 0;
	for (size_t i = 0; i < SCALE_N; i++) {
		char bid[41];
		scale_bid(i, bid);
		const struct et_prof_obj *o = et_profile_find(&p, bid);
		if (o != &p.objs[i] || strcmp(o->build_id, bid) || o->n != i % 4)
			wrong++;
	}
	cr_expect_eq(wrong, 0, "%zu of %d objects not found as themselves", wrong, SCALE_N);
	/* a few in detail: paths, totals, heat over a window */
	static const size_t pick[] = { 0, 1, 3, 99999, 100002, SCALE_N - 1 };
	for (size_t j = 0; j < sizeof pick / sizeof *pick; j++) {
		size_t i = pick[j];
		char bid[41], path[64];
		scale_bid(i, bid);
		const struct et_prof_obj *o = et_profile_find(&p, bid);
		cr_assert_not_null(o, "object %zu (%s) not found", i, bid);
		snprintf(path, sizeof path, "/fleet/build-%zu/libgen%zu.so", i % 97, i);
		cr_expect_str_eq(et_profile_path(&p, o), path);
		uint64_t want = 0;
		for (size_t k = 0; k < i % 4; k++)
			want += i + k;
		cr_expect_eq(o->total, want, "object %zu: total %llu", i, (unsigned long long)o->total);
		cr_expect_eq(et_profile_heat(&p, o, 0x200000, 0x400000), want, "object %zu", i);
		cr_expect_eq(et_profile_heat(&p, o, 0x203000, 0x204000), i % 4 >= 2 ? i + 1 : 0, "object %zu", i);
	}
	/* not there: unknown, a prefix of a known one, upper case (the
	 * parser stores lower case), too long, empty */
	char bid[41], up[41];
	scale_bid(5, bid);
	cr_expect_null(et_profile_find(&p, "00000000000000000000000000000000deadbeef"));
	char prefix[41];
	snprintf(prefix, sizeof prefix, "%.20s", bid);
	cr_expect_null(et_profile_find(&p, prefix));
	strcpy(up, bid);
	for (char *c = up; *c; c++)
		if (*c >= 'a' && *c <= 'f')
			*c = (char)(*c - 'a' + 'A');
	cr_expect_null(et_profile_find(&p, up), "%s", up);
	char longer[64];
	snprintf(longer, sizeof longer, "%s00", bid);
	cr_expect_null(et_profile_find(&p, longer));
	cr_expect_null(et_profile_find(&p, ""));
	cr_expect_null(et_profile_find(&p, NULL));
	et_profile_free(&p);
	cr_expect_null(p.mem);
	cr_expect_null(et_profile_find(&p, bid), "a freed profile finds nothing");
	free(g.buf);
}

/* A duplicate anywhere in a large file is still refused, with the line of
 * its second occurrence and the same text as before; an earlier error in
 * the file wins over it. */
Test(profile, scale_duplicates_refused)
{
	static const size_t dup_of[] = { 0, 7, 123456, SCALE_N - 1 };
	for (size_t j = 0; j < sizeof dup_of / sizeof *dup_of; j++) {
		struct gen g;
		scale_profile(&g);
		char bid[41], want[64];
		scale_bid(dup_of[j], bid);
		if (j % 2)   /* differing only in case is the same build-id */
			for (char *c = bid; *c; c++)
				if (*c >= 'a' && *c <= 'f')
					*c = (char)(*c - 'a' + 'A');
		size_t line = g.lines + 1;
		gen_printf(&g, "object %s /elsewhere/libdup.so\n1000 1\n", bid);
		scale_bid(dup_of[j] + 1, bid);
		gen_printf(&g, "object %s /elsewhere/libdup2.so\n", bid);   /* a second one after it */
		struct et_profile p;
		cr_expect_eq(et_profile_parse(&p, g.buf, g.len), -EINVAL, "a duplicate of object %zu parsed", dup_of[j]);
		snprintf(want, sizeof want, "line %zu: the same build-id twice", line);
		cr_expect_str_eq(p.err, want);
		cr_expect_null(p.mem);
		cr_expect_null(et_profile_find(&p, bid));
		free(g.buf);
	}
	/* an error before the duplicate is the one named */
	struct gen g;
	scale_profile(&g);
	size_t line = g.lines + 1;
	gen_printf(&g, "1000 many\n");
	char bid[41];
	scale_bid(42, bid);
	gen_printf(&g, "object %s /p\n", bid);
	struct et_profile p;
	cr_expect_eq(et_profile_parse(&p, g.buf, g.len), -EINVAL);
	char want[64];
	snprintf(want, sizeof want, "line %zu: expected \"VADDR COUNT\"", line);
	cr_expect(!strncmp(p.err, want, strlen(want)), "\"%s\", expected \"%s...\"", p.err, want);
	free(g.buf);
}

/* The most objects a profile may have (1,048,576) parse; one more is
 * refused at its line. */
Test(profile, scale_object_limit)
{
	struct gen g;
	memset(&g, 0, sizeof g);
	gen_printf(&g, "enormoustext-profile 1\ngranule 4096\n");
	for (size_t i = 0; i < 1048576; i++)
		gen_printf(&g, "object %06zx\n", i);
	struct et_profile p;
	cr_assert_eq(et_profile_parse(&p, g.buf, g.len), 0, "%s", p.err);
	cr_expect_eq(p.nobjs, 1048576);
	cr_expect_eq(et_profile_find(&p, "0fffff"), &p.objs[0xfffff]);
	cr_expect_eq(et_profile_find(&p, "000000"), &p.objs[0]);
	cr_expect_null(et_profile_find(&p, "100000"));
	et_profile_free(&p);
	size_t line = g.lines + 1;
	gen_printf(&g, "object 100000\n");
	cr_expect_eq(et_profile_parse(&p, g.buf, g.len), -EINVAL);
	char want[64];
	snprintf(want, sizeof want, "line %zu: more than 1048576 objects", line);
	cr_expect_str_eq(p.err, want);
	cr_expect_null(p.mem);
	free(g.buf);
}
