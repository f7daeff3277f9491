/*
 * test_options.c — the environment, as data: et_options_parse with a fake
 * getenv (a table) and a warn callback that records every call; the value
 * parsers (size, bool, backend); the glob lists; the option table itself.
 */
#include "unit_util.h"

#include "core/hostconf.h"
#include "core/options.h"

#include <fnmatch.h>
#include <stdint.h>

/* A bug that loops forever fails its test instead of hanging the run; a
 * failed test leaves no temporary directory behind. */
TestSuite(options, .timeout = 30, .fini = ut_cleanup);
TestSuite(parse_size, .timeout = 30, .fini = ut_cleanup);
TestSuite(parse_bool, .timeout = 30, .fini = ut_cleanup);
TestSuite(parse_backend, .timeout = 30, .fini = ut_cleanup);
TestSuite(glob_list, .timeout = 30, .fini = ut_cleanup);
TestSuite(hostconf, .timeout = 30, .fini = ut_cleanup);

/* ------------------------------------------------------------ fake env */

struct kv {
	const char *name, *value;
};

struct warning {
	char name[64], value[128], accepts[128];
};

struct fake {
	const struct kv *env;
	size_t nenv;
	const char *queried[32];
	int nq;
	struct warning w[32];
	int nw;
};

static const char *fake_get(const char *name, void *ctx)
{
	struct fake *f = ctx;
	if (f->nq < 32)
		f->queried[f->nq++] = name;
	for (size_t i = 0; i < f->nenv; i++)
		if (!strcmp(f->env[i].name, name))
			return f->env[i].value;
	return NULL;
}

static void fake_warn(const char *name, const char *value, const char *accepts, void *ctx)
{
	struct fake *f = ctx;
	cr_assert(f->nw < 32, "too many warnings");
	struct warning *w = &f->w[f->nw++];
	snprintf(w->name, sizeof w->name, "%s", name ? name : "(null)");
	snprintf(w->value, sizeof w->value, "%s", value ? value : "(null)");
	snprintf(w->accepts, sizeof w->accepts, "%s", accepts ? accepts : "(null)");
}

/* Parse with the given environment; the options start as garbage so that a
 * default the parser forgot to set shows. */
static int parse(struct et_options *o, struct fake *f, const struct kv *env, size_t nenv)
{
	memset(f, 0, sizeof *f);
	f->env = env;
	f->nenv = nenv;
	memset(o, 0xA5, sizeof *o);
	return et_options_parse(o, fake_get, fake_warn, f);
}

static const char *accepts_of(const char *name)
{
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return t[i].accepts;
	cr_assert_fail("no option named %s", name);
	return NULL;
}

static void expect_defaults_except(const struct et_options *o, const char *which)
{
	if (strcmp(which, "ENORMOUSTEXT"))
		cr_expect(o->enabled, "enabled default is true");
	if (strcmp(which, "ENORMOUSTEXT_VERBOSE")) {
		cr_expect_eq(o->verbose, 0);
		cr_expect(!o->verbose_set);
	}
	if (strcmp(which, "ENORMOUSTEXT_BACKEND"))
		cr_expect_eq(o->backend, ET_BACKEND_AUTO);
	if (strcmp(which, "ENORMOUSTEXT_INCLUDE"))
		cr_expect_null(o->include);
	if (strcmp(which, "ENORMOUSTEXT_EXCLUDE"))
		cr_expect_null(o->exclude);
	if (strcmp(which, "ENORMOUSTEXT_MIN_BYTES"))
		cr_expect_eq(o->min_bytes, 0);
	if (strcmp(which, "ENORMOUSTEXT_REPORT"))
		cr_expect_null(o->report);
	if (strcmp(which, "ENORMOUSTEXT_PAD_THRESHOLD"))
		cr_expect_eq(o->pad_threshold, 4096, "pad_threshold default is 4096");
	if (strcmp(which, "ENORMOUSTEXT_PROFILE"))
		cr_expect_null(o->profile);
	if (strcmp(which, "ENORMOUSTEXT_HOT_COVERAGE"))
		cr_expect_eq(o->hot_coverage, 95, "hot_coverage default is 95");
	if (strcmp(which, "ENORMOUSTEXT_HOT_BUDGET"))
		cr_expect_eq(o->hot_budget, 0);
	if (strcmp(which, "ENORMOUSTEXT_RECORD"))
		cr_expect_null(o->record);
}

Test(options, defaults_when_nothing_set)
{
	struct et_options o;
	struct fake f;
	cr_assert_eq(parse(&o, &f, NULL, 0), 0);
	cr_expect_eq(f.nw, 0);
	expect_defaults_except(&o, "");
	cr_expect(o.enabled);
	cr_expect_eq(o.verbose, 0);
	cr_expect_eq(o.backend, ET_BACKEND_AUTO);
}

Test(options, every_table_variable_is_read_once)
{
	struct et_options o;
	struct fake f;
	parse(&o, &f, NULL, 0);
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	cr_assert_eq(n, ET_OPT__COUNT);
	cr_assert_eq((size_t)f.nq, n, "getenv called %d times for %zu options", f.nq, n);
	for (size_t i = 0; i < n; i++) {
		int seen = 0;
		for (int q = 0; q < f.nq; q++)
			seen += !strcmp(f.queried[q], t[i].name);
		cr_expect_eq(seen, 1, "%s looked up %d times", t[i].name, seen);
	}
}

Test(options, enable_values)
{
	static const struct { const char *v; bool on; } cases[] = {
		{ "1", true }, { "0", false }, { "on", true }, { "off", false },
		{ "yes", true }, { "no", false }, { "true", true }, { "false", false },
		{ "ON", true }, { "Off", false }, { "TRUE", true }, { "No", false },
		{ "enable", true }, { "disabled", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct kv env[] = { { "ENORMOUSTEXT", cases[i].v } };
		struct et_options o;
		struct fake f;
		cr_expect_eq(parse(&o, &f, env, 1), 0, "ENORMOUSTEXT=%s", cases[i].v);
		cr_expect_eq(f.nw, 0, "ENORMOUSTEXT=%s warned", cases[i].v);
		cr_expect_eq(o.enabled, cases[i].on, "ENORMOUSTEXT=%s", cases[i].v);
		expect_defaults_except(&o, "ENORMOUSTEXT");
	}
}

Test(options, verbose_values)
{
	const char *vals[] = { "0", "1", "2", "3" };
	for (int i = 0; i < 4; i++) {
		struct kv env[] = { { "ENORMOUSTEXT_VERBOSE", vals[i] } };
		struct et_options o;
		struct fake f;
		cr_expect_eq(parse(&o, &f, env, 1), 0);
		cr_expect_eq(f.nw, 0);
		cr_expect_eq(o.verbose, i, "ENORMOUSTEXT_VERBOSE=%s gave %d", vals[i], o.verbose);
		cr_expect(o.verbose_set, "ENORMOUSTEXT_VERBOSE=%s: verbose_set", vals[i]);
		expect_defaults_except(&o, "ENORMOUSTEXT_VERBOSE");
	}
}

Test(options, backend_values)
{
	static const struct { const char *v; enum et_backend b; } cases[] = {
		{ "auto", ET_BACKEND_AUTO }, { "file", ET_BACKEND_FILE }, { "thp", ET_BACKEND_THP },
		{ "collapse", ET_BACKEND_COLLAPSE }, { "hugetlb", ET_BACKEND_HUGETLB },
		{ "THP", ET_BACKEND_THP }, { "HugeTLB", ET_BACKEND_HUGETLB },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct kv env[] = { { "ENORMOUSTEXT_BACKEND", cases[i].v } };
		struct et_options o;
		struct fake f;
		cr_expect_eq(parse(&o, &f, env, 1), 0);
		cr_expect_eq(f.nw, 0);
		cr_expect_eq(o.backend, cases[i].b, "ENORMOUSTEXT_BACKEND=%s gave %s", cases[i].v,
		             et_backend_name(o.backend));
		expect_defaults_except(&o, "ENORMOUSTEXT_BACKEND");
	}
}

Test(options, include_exclude_report_values)
{
	struct kv env[] = {
		{ "ENORMOUSTEXT_INCLUDE", "libmysqld*:*/bin/postgres" },
		{ "ENORMOUSTEXT_EXCLUDE", "libc.so*" },
		{ "ENORMOUSTEXT_REPORT", "/tmp/report-%p.json" },
	};
	struct et_options o;
	struct fake f;
	cr_expect_eq(parse(&o, &f, env, 3), 0);
	cr_expect_eq(f.nw, 0);
	cr_assert_not_null(o.include);
	cr_assert_not_null(o.exclude);
	cr_assert_not_null(o.report);
	cr_expect_str_eq(o.include, "libmysqld*:*/bin/postgres");
	cr_expect_str_eq(o.exclude, "libc.so*");
	cr_expect_str_eq(o.report, "/tmp/report-%p.json");
	/* Leading/trailing colons are fine as long as one glob is there. */
	struct kv env2[] = { { "ENORMOUSTEXT_EXCLUDE", ":libz*:" } };
	cr_expect_eq(parse(&o, &f, env2, 1), 0);
	cr_assert_not_null(o.exclude);
	cr_expect_str_eq(o.exclude, ":libz*:");
}

Test(options, empty_include_exclude_report_mean_unset)
{
	struct kv env[] = {
		{ "ENORMOUSTEXT_INCLUDE", "" },
		{ "ENORMOUSTEXT_EXCLUDE", "" },
		{ "ENORMOUSTEXT_REPORT", "" },
	};
	struct et_options o;
	struct fake f;
	cr_expect_eq(parse(&o, &f, env, 3), 0);
	cr_expect_eq(f.nw, 0);
	expect_defaults_except(&o, "");
}

Test(options, min_bytes_values)
{
	static const struct { const char *v; uint64_t n; } cases[] = {
		{ "0", 0 }, { "4096", 4096 }, { "2M", 2 * UT_MIB }, { "2m", 2 * UT_MIB },
		{ "64K", 64 * UT_KIB }, { "1G", UT_GIB }, { "3MiB", 3 * UT_MIB }, { "8KB", 8 * UT_KIB },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct kv env[] = { { "ENORMOUSTEXT_MIN_BYTES", cases[i].v } };
		struct et_options o;
		struct fake f;
		cr_expect_eq(parse(&o, &f, env, 1), 0);
		cr_expect_eq(f.nw, 0);
		cr_expect_eq(o.min_bytes, cases[i].n, "ENORMOUSTEXT_MIN_BYTES=%s gave %llu", cases[i].v,
		             (unsigned long long)o.min_bytes);
		expect_defaults_except(&o, "ENORMOUSTEXT_MIN_BYTES");
	}
}

Test(options, pad_threshold_values)
{
	static const struct { const char *v; uint64_t n; } cases[] = {
		{ "0", 0 }, { "4096", 4096 }, { "1", 1 }, { "64K", 64 * UT_KIB }, { "2M", 2 * UT_MIB },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct kv env[] = { { "ENORMOUSTEXT_PAD_THRESHOLD", cases[i].v } };
		struct et_options o;
		struct fake f;
		cr_expect_eq(parse(&o, &f, env, 1), 0);
		cr_expect_eq(f.nw, 0);
		cr_expect_eq(o.pad_threshold, cases[i].n, "ENORMOUSTEXT_PAD_THRESHOLD=%s gave %llu", cases[i].v,
		             (unsigned long long)o.pad_threshold);
		expect_defaults_except(&o, "ENORMOUSTEXT_PAD_THRESHOLD");
	}
}

Test(options, hot_coverage_values)
{
	static const struct { const char *v; unsigned n; } cases[] = {
		{ "95", 95 }, { "1", 1 }, { "100", 100 }, { "50%", 50 }, { "100%", 100 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct kv env[] = { { "ENORMOUSTEXT_HOT_COVERAGE", cases[i].v } };
		struct et_options o;
		struct fake f;
		cr_expect_eq(parse(&o, &f, env, 1), 0, "ENORMOUSTEXT_HOT_COVERAGE=%s", cases[i].v);
		cr_expect_eq(o.hot_coverage, cases[i].n, "ENORMOUSTEXT_HOT_COVERAGE=%s gave %u", cases[i].v, o.hot_coverage);
		expect_defaults_except(&o, "ENORMOUSTEXT_HOT_COVERAGE");
	}
}

/* Every bad value: exactly one warning, naming the variable, passing the
 * value and what the variable accepts; everything keeps its default. */
Test(options, each_bad_value_warns_once_and_keeps_default)
{
	static const struct kv bad[] = {
		{ "ENORMOUSTEXT", "maybe" },
		{ "ENORMOUSTEXT", "" },
		{ "ENORMOUSTEXT", "2" },
		{ "ENORMOUSTEXT", "yess" },
		{ "ENORMOUSTEXT_VERBOSE", "4" },
		{ "ENORMOUSTEXT_VERBOSE", "abc" },
		{ "ENORMOUSTEXT_VERBOSE", "-1" },
		{ "ENORMOUSTEXT_VERBOSE", "" },
		{ "ENORMOUSTEXT_VERBOSE", "1K" },
		{ "ENORMOUSTEXT_VERBOSE", "12" },
		{ "ENORMOUSTEXT_BACKEND", "bogus" },
		{ "ENORMOUSTEXT_BACKEND", "none" },
		{ "ENORMOUSTEXT_BACKEND", "" },
		{ "ENORMOUSTEXT_BACKEND", "thpx" },
		{ "ENORMOUSTEXT_MIN_BYTES", "12Q" },
		{ "ENORMOUSTEXT_MIN_BYTES", "" },
		{ "ENORMOUSTEXT_MIN_BYTES", "99999999999999999999999" },
		{ "ENORMOUSTEXT_MIN_BYTES", "17179869184G" },
		{ "ENORMOUSTEXT_MIN_BYTES", "-5" },
		{ "ENORMOUSTEXT_MIN_BYTES", "1.5M" },
		{ "ENORMOUSTEXT_MIN_BYTES", "0x1000" },
		{ "ENORMOUSTEXT_INCLUDE", ":::" },
		{ "ENORMOUSTEXT_INCLUDE", ":" },
		{ "ENORMOUSTEXT_EXCLUDE", "::" },
		{ "ENORMOUSTEXT_PAD_THRESHOLD", "-1" },
		{ "ENORMOUSTEXT_PAD_THRESHOLD", "never" },
		{ "ENORMOUSTEXT_PAD_THRESHOLD", "" },
		{ "ENORMOUSTEXT_PAD_THRESHOLD", "4096x" },
		{ "ENORMOUSTEXT_HOT_COVERAGE", "0" },
		{ "ENORMOUSTEXT_HOT_COVERAGE", "101" },
		{ "ENORMOUSTEXT_HOT_COVERAGE", "abc" },
		{ "ENORMOUSTEXT_HOT_COVERAGE", "" },
		{ "ENORMOUSTEXT_HOT_COVERAGE", "%" },
		{ "ENORMOUSTEXT_HOT_COVERAGE", "5K" },
		{ "ENORMOUSTEXT_HOT_BUDGET", "lots" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct et_options o;
		struct fake f;
		int r = parse(&o, &f, &bad[i], 1);
		cr_expect_eq(r, 1, "%s=\"%s\": returned %d", bad[i].name, bad[i].value, r);
		cr_expect_eq(f.nw, 1, "%s=\"%s\": %d warnings", bad[i].name, bad[i].value, f.nw);
		if (f.nw >= 1) {
			cr_expect_str_eq(f.w[0].name, bad[i].name);
			cr_expect_str_eq(f.w[0].value, bad[i].value);
			cr_expect_str_eq(f.w[0].accepts, accepts_of(bad[i].name));
		}
		expect_defaults_except(&o, "");
	}
}

Test(options, several_bad_values_give_several_warnings)
{
	struct kv env[] = {
		{ "ENORMOUSTEXT_MIN_BYTES", "12Q" },
		{ "ENORMOUSTEXT", "maybe" },
		{ "ENORMOUSTEXT_VERBOSE", "7" },
		{ "ENORMOUSTEXT_BACKEND", "bogus" },
		{ "ENORMOUSTEXT_INCLUDE", ":::" },
		{ "ENORMOUSTEXT_EXCLUDE", "libz*" },           /* valid */
		{ "ENORMOUSTEXT_REPORT", "/tmp/r.json" },       /* valid */
	};
	struct et_options o;
	struct fake f;
	cr_assert_eq(parse(&o, &f, env, 7), 5);
	cr_assert_eq(f.nw, 5);
	/* One warning per bad variable, each variable once, in table order. */
	const char *order[] = { "ENORMOUSTEXT", "ENORMOUSTEXT_VERBOSE", "ENORMOUSTEXT_BACKEND",
	                        "ENORMOUSTEXT_INCLUDE", "ENORMOUSTEXT_MIN_BYTES" };
	const char *values[] = { "maybe", "7", "bogus", ":::", "12Q" };
	for (int i = 0; i < 5; i++) {
		cr_expect_str_eq(f.w[i].name, order[i]);
		cr_expect_str_eq(f.w[i].value, values[i]);
	}
	/* The bad ones kept their defaults, the good ones were taken. */
	cr_expect(o.enabled);
	cr_expect_eq(o.verbose, 0);
	cr_expect(!o.verbose_set);
	cr_expect_eq(o.backend, ET_BACKEND_AUTO);
	cr_expect_null(o.include);
	cr_expect_eq(o.min_bytes, 0);
	cr_assert_not_null(o.exclude);
	cr_expect_str_eq(o.exclude, "libz*");
	cr_assert_not_null(o.report);
	cr_expect_str_eq(o.report, "/tmp/r.json");
}

Test(options, null_warn_callback_still_counts)
{
	struct kv env[] = { { "ENORMOUSTEXT", "maybe" }, { "ENORMOUSTEXT_BACKEND", "x" } };
	struct fake f = { .env = env, .nenv = 2 };
	struct et_options o;
	cr_expect_eq(et_options_parse(&o, fake_get, NULL, &f), 2);
	cr_expect(o.enabled);
	cr_expect_eq(o.backend, ET_BACKEND_AUTO);
}

Test(options, all_valid_at_once)
{
	struct kv env[] = {
		{ "ENORMOUSTEXT", "off" }, { "ENORMOUSTEXT_VERBOSE", "2" },
		{ "ENORMOUSTEXT_BACKEND", "collapse" }, { "ENORMOUSTEXT_INCLUDE", "a*" },
		{ "ENORMOUSTEXT_EXCLUDE", "b*" }, { "ENORMOUSTEXT_MIN_BYTES", "16M" },
		{ "ENORMOUSTEXT_REPORT", "r.json" },
	};
	struct et_options o;
	struct fake f;
	cr_assert_eq(parse(&o, &f, env, 7), 0);
	cr_expect_eq(f.nw, 0);
	cr_expect(!o.enabled);
	cr_expect_eq(o.verbose, 2);
	cr_expect(o.verbose_set);
	cr_expect_eq(o.backend, ET_BACKEND_COLLAPSE);
	cr_expect_str_eq(o.include, "a*");
	cr_expect_str_eq(o.exclude, "b*");
	cr_expect_eq(o.min_bytes, 16 * UT_MIB);
	cr_expect_str_eq(o.report, "r.json");
}

/* ------------------------------------------------------------ table */

Test(options, table_is_complete)
{
	size_t n = 0;
	const struct et_option_desc *t = et_option_table(&n);
	cr_assert_not_null(t);
	cr_assert_eq(n, ET_OPT__COUNT);
	cr_expect_eq(et_option_table(NULL), t);
	for (size_t i = 0; i < n; i++) {
		cr_assert_not_null(t[i].name, "entry %zu has no name", i);
		cr_expect(t[i].name[0], "entry %zu has an empty name", i);
		cr_expect_eq(strncmp(t[i].name, "ENORMOUSTEXT", 12), 0, "%s", t[i].name);
		cr_assert_not_null(t[i].accepts, "%s", t[i].name);
		cr_expect(t[i].accepts[0], "%s: empty accepts", t[i].name);
		cr_assert_not_null(t[i].help, "%s", t[i].name);
		cr_expect(t[i].help[0], "%s: empty help", t[i].name);
		cr_expect_not_null(t[i].def, "%s: NULL default", t[i].name);
		/* fixed-size arrays: a text as long as its array has no NUL */
		cr_expect_not_null(memchr(t[i].name, 0, sizeof t[i].name), "entry %zu: name not terminated", i);
		cr_expect_not_null(memchr(t[i].def, 0, sizeof t[i].def), "%.32s: default not terminated", t[i].name);
		cr_expect_not_null(memchr(t[i].accepts, 0, sizeof t[i].accepts), "%.32s: accepts not terminated",
		                   t[i].name);
		cr_expect_not_null(memchr(t[i].help, 0, sizeof t[i].help), "%.32s: help not terminated", t[i].name);
		for (size_t k = 0; k < i; k++)
			cr_expect_str_neq(t[i].name, t[k].name, "duplicate name");
	}
	/* The ids index the table the parser switches on. */
	cr_expect_str_eq(t[ET_OPT_ENABLE].name, "ENORMOUSTEXT");
	cr_expect_str_eq(t[ET_OPT_VERBOSE].name, "ENORMOUSTEXT_VERBOSE");
	cr_expect_str_eq(t[ET_OPT_BACKEND].name, "ENORMOUSTEXT_BACKEND");
	cr_expect_str_eq(t[ET_OPT_INCLUDE].name, "ENORMOUSTEXT_INCLUDE");
	cr_expect_str_eq(t[ET_OPT_EXCLUDE].name, "ENORMOUSTEXT_EXCLUDE");
	cr_expect_str_eq(t[ET_OPT_MIN_BYTES].name, "ENORMOUSTEXT_MIN_BYTES");
	cr_expect_str_eq(t[ET_OPT_REPORT].name, "ENORMOUSTEXT_REPORT");
	cr_expect_str_eq(t[ET_OPT_PAD_THRESHOLD].name, "ENORMOUSTEXT_PAD_THRESHOLD");
}

/* Feeding every documented default back as the value gives no warning and
 * the same options as setting nothing: the table and the parser agree. */
Test(options, table_defaults_match_parser_defaults)
{
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	struct kv env[ET_OPT__COUNT];
	for (size_t i = 0; i < n; i++)
		env[i] = (struct kv){ t[i].name, t[i].def };
	struct et_options o;
	struct fake f;
	cr_expect_eq(parse(&o, &f, env, n), 0);
	cr_expect_eq(f.nw, 0, "a default value warned: %s=%s", f.w[0].name, f.w[0].value);
	cr_expect(o.enabled);
	cr_expect_eq(o.verbose, 0);
	cr_expect_eq(o.backend, ET_BACKEND_AUTO);
	cr_expect_null(o.include);
	cr_expect_null(o.exclude);
	cr_expect_eq(o.min_bytes, 0);
	cr_expect_null(o.report);
	cr_expect_eq(o.pad_threshold, 4096);
}

/* ------------------------------------------------------------ parsers */

Test(parse_size, valid)
{
	static const struct { const char *s; uint64_t v; } cases[] = {
		{ "0", 0 }, { "1", 1 }, { "4096", 4096 }, { "007", 7 },
		{ "1K", UT_KIB }, { "1k", UT_KIB }, { "1KiB", UT_KIB }, { "1kib", UT_KIB }, { "1KB", UT_KIB },
		{ "2M", 2 * UT_MIB }, { "2MiB", 2 * UT_MIB }, { "2mb", 2 * UT_MIB },
		{ "3G", 3 * UT_GIB }, { "3GiB", 3 * UT_GIB }, { "0G", 0 },
		{ "16777216", 16 * UT_MIB },
		{ "17179869183G", ((UINT64_C(1) << 34) - 1) << 30 },        /* largest in G */
		{ "18014398509481983K", UINT64_MAX >> 10 << 10 },             /* largest in K */
		{ "18446744073709551609", UINT64_C(18446744073709551609) },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		uint64_t v = 0xdeadbeef;
		int r = et_parse_size(cases[i].s, &v);
		cr_expect_eq(r, 0, "\"%s\" returned %d", cases[i].s, r);
		cr_expect_eq(v, cases[i].v, "\"%s\" gave %llu, expected %llu", cases[i].s,
		             (unsigned long long)v, (unsigned long long)cases[i].v);
	}
}

/* UINT64_MAX itself and the few values just below it fit in a uint64_t and
 * must parse. */
Test(parse_size, largest_values)
{
	static const char *const s[] = { "18446744073709551615", "18446744073709551610" };
	static const uint64_t v[] = { UINT64_MAX, UINT64_MAX - 5 };
	for (int i = 0; i < 2; i++) {
		uint64_t out = 0;
		int r = et_parse_size(s[i], &out);
		cr_expect_eq(r, 0, "\"%s\" returned %d (%s)", s[i], r, strerror(-r));
		cr_expect_eq(out, v[i], "\"%s\" gave %llu", s[i], (unsigned long long)out);
	}
}

Test(parse_size, invalid_and_overflow)
{
	static const struct { const char *s; int err; } cases[] = {
		{ "", -EINVAL }, { "K", -EINVAL }, { "12Q", -EINVAL }, { "-1", -EINVAL },
		{ "+1", -EINVAL }, { " 1", -EINVAL }, { "1 ", -EINVAL }, { "1.5M", -EINVAL },
		{ "0x10", -EINVAL }, { "1T", -EINVAL }, { "1KK", -EINVAL }, { "1KiBx", -EINVAL },
		{ "1B", -EINVAL }, { "1iB", -EINVAL }, { "1Ki", -EINVAL },
		{ "18446744073709551616", -ERANGE },              /* 2^64 */
		{ "99999999999999999999999", -ERANGE },
		{ "17179869184G", -ERANGE },                      /* 2^34 G = 2^64 */
		{ "18014398509481984K", -ERANGE },                /* 2^54 K */
		{ "17592186044416M", -ERANGE },                   /* 2^44 M */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		uint64_t v = 0x1234;
		int r = et_parse_size(cases[i].s, &v);
		cr_expect_eq(r, cases[i].err, "\"%s\" returned %d, expected %d", cases[i].s, r,
		             cases[i].err);
		cr_expect_eq(v, 0x1234, "\"%s\" wrote the output on failure", cases[i].s);
	}
}

Test(parse_bool, values)
{
	static const char *const yes[] = { "1", "on", "yes", "true", "enable", "enabled", "ON", "Yes",
	                                   "TRUE", "Enabled" };
	static const char *const no[] = { "0", "off", "no", "false", "disable", "disabled", "OFF", "No",
	                                  "False", "DISABLE" };
	static const char *const bad[] = { "", "2", "y", "n", "yess", "of", "truefalse", " 1", "1 ",
	                                   "onn", "-1", "01" };
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
		bool b = false;
		cr_expect_eq(et_parse_bool(yes[i], &b), 0, "%s", yes[i]);
		cr_expect(b, "%s parsed as false", yes[i]);
	}
	for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
		bool b = true;
		cr_expect_eq(et_parse_bool(no[i], &b), 0, "%s", no[i]);
		cr_expect(!b, "%s parsed as true", no[i]);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		bool b = true;
		cr_expect_eq(et_parse_bool(bad[i], &b), -EINVAL, "\"%s\" accepted", bad[i]);
		cr_expect(b, "\"%s\" changed the output", bad[i]);
		b = false;
		et_parse_bool(bad[i], &b);
		cr_expect(!b, "\"%s\" changed the output", bad[i]);
	}
}

Test(parse_backend, names_round_trip)
{
	for (int b = ET_BACKEND_AUTO; b < ET_BACKEND_NONE; b++) {
		const char *name = et_backend_name((enum et_backend)b);
		cr_assert_not_null(name);
		enum et_backend out = ET_BACKEND_NONE;
		cr_expect_eq(et_parse_backend(name, &out), 0, "%s", name);
		cr_expect_eq(out, (enum et_backend)b, "%s", name);
	}
	cr_expect_str_eq(et_backend_name(ET_BACKEND_AUTO), "auto");
	cr_expect_str_eq(et_backend_name(ET_BACKEND_FILE), "file");
	cr_expect_str_eq(et_backend_name(ET_BACKEND_THP), "thp");
	cr_expect_str_eq(et_backend_name(ET_BACKEND_COLLAPSE), "collapse");
	cr_expect_str_eq(et_backend_name(ET_BACKEND_HUGETLB), "hugetlb");
	cr_expect_str_eq(et_backend_name(ET_BACKEND_NONE), "none");
	cr_expect_str_eq(et_backend_name(ET_BACKEND__COUNT), "?");
	cr_expect_str_eq(et_backend_name((enum et_backend)-1), "?");
}

Test(parse_backend, invalid)
{
	static const char *const bad[] = { "", "none", "bogus", "thp ", " thp", "hugetlbfs", "colapse",
	                                   "au", "autox" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		enum et_backend out = ET_BACKEND_HUGETLB;
		cr_expect_eq(et_parse_backend(bad[i], &out), -EINVAL, "\"%s\" accepted", bad[i]);
		cr_expect_eq(out, ET_BACKEND_HUGETLB, "\"%s\" changed the output", bad[i]);
	}
	enum et_backend out = ET_BACKEND_AUTO;
	cr_expect_eq(et_parse_backend("Collapse", &out), 0);
	cr_expect_eq(out, ET_BACKEND_COLLAPSE);
}

/* ------------------------------------------------------------ globs */

Test(glob_list, matches)
{
	static const struct { const char *globs, *path; bool match; } cases[] = {
		/* basename */
		{ "libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", true },
		{ "libc.so*", "/usr/lib/x86_64-linux-gnu/libc.so.6", true },
		{ "libc.so", "/usr/lib/x86_64-linux-gnu/libc.so.6", false },
		{ "lib?.so", "/opt/libz.so", true },
		{ "libfoo*", "/usr/lib/libbar.so", false },
		/* full path */
		{ "/usr/lib/*", "/usr/lib/libfoo.so", true },
		{ "/usr/lib/libfoo.so", "/usr/lib/libfoo.so", true },
		{ "/usr/lib/libfoo.so", "/opt/lib/libfoo.so", false },
		{ "*/bin/postgres", "/usr/lib/postgresql/16/bin/postgres", true },
		{ "/opt/*", "/usr/opt/x.so", false },
		/* several globs */
		{ "libfoo*:libbar*", "/usr/lib/libbar.so.1", true },
		{ "libfoo*:libbar*", "/usr/lib/libfoo.so.1", true },
		{ "libfoo*:libbar*", "/usr/lib/libbaz.so.1", false },
		{ "a:b:c:/x/y/z.so", "/x/y/z.so", true },
		/* empty elements are skipped, not "match everything" */
		{ "::libbar*::", "/usr/lib/libbar.so", true },
		{ "::libbar*::", "/usr/lib/libfoo.so", false },
		{ "", "/usr/lib/libfoo.so", false },
		{ ":::", "/usr/lib/libfoo.so", false },
		{ "libfoo.so:", "/usr/lib/libfoo.so", true },
		{ ":libfoo.so", "/usr/lib/libfoo.so", true },
		/* a path without a slash is its own basename */
		{ "libfoo.so", "libfoo.so", true },
		{ "*", "/anything/at/all", true },
		/* basename is the last component only */
		{ "libfoo.so", "/usr/lib/libfoo.so/other", false },
		/* classes */
		{ "lib[xyz].so", "/lib/liby.so", true },
		{ "lib[xyz].so", "/lib/liba.so", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		bool m = et_glob_list_match(cases[i].globs, cases[i].path);
		cr_expect_eq(m, cases[i].match, "globs \"%s\" on \"%s\": %s, expected %s", cases[i].globs,
		             cases[i].path, m ? "match" : "no match", cases[i].match ? "match" : "no match");
	}
}

Test(glob_list, overlong_element_is_skipped_not_truncated)
{
	/* An element longer than the internal buffer must not be matched as a
	 * truncated prefix (which could turn "xxxx...*" into a wider glob), and
	 * the elements after it still count. */
	char globs[1200];
	memset(globs, 'x', 700);
	globs[700] = '\0';
	strcat(globs, ":libz*");
	cr_expect(et_glob_list_match(globs, "/lib/libz.so.1"));
	cr_expect(!et_glob_list_match(globs, "/lib/libq.so"));
	char g2[800];
	memset(g2, 'x', 511);
	g2[511] = '*';
	g2[512] = '\0';
	cr_expect(!et_glob_list_match(g2, "/lib/xxxx"), "a truncated long glob matched");
	/* 511 bytes fit: a 510-x glob plus '*' matches a path of 510+ x's. */
	memset(g2, 'x', 510);
	g2[510] = '*';
	g2[511] = '\0';
	char p2[600] = "/";
	memset(p2 + 1, 'x', 520);
	p2[521] = '\0';
	cr_expect(et_glob_list_match(g2, p2));
}

/* The library's own matcher (core/options.c: written out, for the
 * start-up path) against libc's fnmatch(pattern, s, 0): hand-picked
 * corners, then 200,000 random patterns and strings over an alphabet made
 * of the language's own characters.  Patterns with classes ("[:") go to
 * fnmatch itself and are not drawn. */
static void expect_as_fnmatch(const char *pat, const char *s)
{
	bool want = fnmatch(pat, s, 0) == 0;
	bool got = et_glob_match(pat, strlen(pat), s);
	cr_expect_eq(got, want, "pattern \"%s\" on \"%s\": %d, fnmatch says %d", pat, s, got, want);
}

Test(glob_list, as_fnmatch)
{
	static const char *const corners[][2] = {
		{ "*", "" },         { "*", "/a/b" },      { "?", "/" },          { ".*", ".x" },
		{ "a*b*c", "abbc" }, { "a*b*c", "acb" },   { "[]]", "]" },        { "[!]]", "a" },
		{ "[!]]", "]" },     { "[^a]", "b" },      { "[a-]", "-" },       { "[]-a]", "^" },
		{ "[z-a]", "m" },    { "[a", "[a" },       { "[a", "a" },         { "[\\]]", "]" },
		{ "\\*", "*" },    { "\\*", "a" },     { "a\\", "a\\" },  { "[a-\\z]", "m" },
		{ "*[", "x[" },      { "[!a-c]*", "d/e" }, { "**x", "yx" },       { "[\\", "[\\" },
		{ "[*]", "*" },      { "*?", "" },         { "[a-c]-[x]", "b-x" }, { "lib*.so.[0-9]", "libz.so.1" },
	};
	for (size_t i = 0; i < sizeof corners / sizeof corners[0]; i++)
		expect_as_fnmatch(corners[i][0], corners[i][1]);

	static const char pat_alpha[] = "ab/.*?[]!^-\\";
	static const char str_alpha[] = "ab/.*?[]!^-\\c";
	uint64_t x = 0x9e3779b97f4a7c15u;
	int differ = 0;
	for (int round = 0; round < 200000 && differ < 20; round++) {
		char pat[12], str[10];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int pn = (int)(x % 11), sn = (int)((x >> 8) % 9);
		for (int i = 0; i < pn; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			pat[i] = pat_alpha[x % (sizeof pat_alpha - 1)];
		}
		pat[pn] = '\0';
		for (int i = 0; i < sn; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			str[i] = str_alpha[x % (sizeof str_alpha - 1)];
		}
		str[sn] = '\0';
		bool want = fnmatch(pat, str, 0) == 0;
		if (et_glob_match(pat, strlen(pat), str) != want) {
			differ++;
			cr_expect(false, "pattern \"%s\" on \"%s\": fnmatch says %d, the library %d", pat, str, want,
			          !want);
		}
	}
	/* a class goes to fnmatch itself */
	expect_as_fnmatch("[[:digit:]]*", "7up");
	expect_as_fnmatch("[[:digit:]]*", "up");
}

/* ------------------------------------------------ unknown variable names */

Test(options, known_names_are_the_table_and_the_commands)
{
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	char entry[64];
	for (size_t i = 0; i < n; i++) {
		snprintf(entry, sizeof entry, "%s=1", t[i].name);
		cr_expect(et_option_known(entry), "%s is a table variable", entry);
		snprintf(entry, sizeof entry, "%s", t[i].name);
		cr_expect(et_option_known(entry), "%s without a value is known too", entry);
	}
	cr_expect(et_option_known("ENORMOUSTEXT_LIB=/x.so"), "the command's own variable");
	cr_expect(!et_option_known("ENORMOUSTEXT_VERBOS=1"));
	cr_expect(!et_option_known("ENORMOUSTEXT_VERBOSEX=1"), "a longer name is not the option");
	cr_expect(!et_option_known("ENORMOUSTEXTX=1"));
	cr_expect(!et_option_known("ENORMOUSTEXT_verbose=1"), "names are case-sensitive");
}

Test(options, nearest_name_for_a_misspelling)
{
	cr_expect_str_eq(et_option_nearest("ENORMOUSTEXT_VERBOS"), "ENORMOUSTEXT_VERBOSE");
	cr_expect_str_eq(et_option_nearest("ENORMOUSTEXT_BAKCEND"), "ENORMOUSTEXT_BACKEND");
	cr_expect_str_eq(et_option_nearest("ENORMOUSTEXT_min_bytes"), "ENORMOUSTEXT_MIN_BYTES");
	cr_expect_str_eq(et_option_nearest("ENORMOUSTEXT_PROFILE_STRIC"), "ENORMOUSTEXT_PROFILE_STRICT");
	cr_expect_str_eq(et_option_nearest("ENORMOUSTEXT_HOT_COVERGE"), "ENORMOUSTEXT_HOT_COVERAGE");
	cr_expect_null(et_option_nearest("ENORMOUSTEXT_SITE_SETTING_11"), "nothing near: no suggestion");
	char longname[200];
	memset(longname, 'Q', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	cr_expect_null(et_option_nearest(longname), "a long name is cut, not overflowed");
}

/* ENORMOUSTEXT_DEFER: 0, or an integer with ms or s, at most a day. */
Test(options, parse_duration)
{
	uint64_t ns = 7;
	cr_expect_eq(et_parse_duration("0", &ns), 0);
	cr_expect_eq(ns, 0);
	cr_expect_eq(et_parse_duration("250ms", &ns), 0);
	cr_expect_eq(ns, 250000000ull);
	cr_expect_eq(et_parse_duration("3s", &ns), 0);
	cr_expect_eq(ns, 3000000000ull);
	cr_expect_eq(et_parse_duration("86400s", &ns), 0);
	cr_expect_eq(ns, 86400000000000ull);
	ns = 7;
	const char *bad[] = { "", "1", "ms", "s", "-1s", "1.5s", "10 ms", "1sec", "1m", "86401s",
	                      "86400001ms", "18446744073709551616s", "99999999999999999999ms", "0s0" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_expect_eq(et_parse_duration(bad[i], &ns), -EINVAL, "'%s' accepted", bad[i]);
	cr_expect_eq(ns, 7, "a refused value changed the result");
}

/* The table is the only place that holds a default: each one, given as the
 * variable's value, is accepted (no warning) and changes nothing — so the
 * parser's starting point is the table's — and et_options_defaults (what
 * the command reads, e.g. `check`'s pad threshold) gives the same. */
Test(options, the_table_holds_the_defaults)
{
	struct et_options none, dflt;
	struct fake f;
	cr_assert_eq(parse(&none, &f, NULL, 0), 0);
	memset(&dflt, 0xA5, sizeof dflt);
	et_options_defaults(&dflt);
	cr_expect_eq(memcmp(&none, &dflt, sizeof none), 0, "et_options_defaults differs from an empty environment");
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	for (size_t i = 0; i < n; i++) {
		struct kv env[1] = { { t[i].name, t[i].def } };
		struct et_options o;
		cr_expect_eq(parse(&o, &f, env, 1), 0, "%s=%s: the table's default is refused", t[i].name, t[i].def);
		o.verbose_set = false;    /* (given, not defaulted) */
		cr_expect_eq(memcmp(&o, &none, sizeof o), 0, "%s=%s (its default) is not what the parser starts from",
		             t[i].name, t[i].def);
	}
	uint64_t pad;
	cr_assert_eq(et_parse_size(t[ET_OPT_PAD_THRESHOLD].def, &pad), 0);
	cr_expect_eq(dflt.pad_threshold, pad);
}

/* ENORMOUSTEXT_DEFER_RATE (MiB/s, digits, 0..1,000,000), ENORMOUSTEXT_HOT
 * (auto, off) and ENORMOUSTEXT_TOP_ONLY (a boolean): what each accepts,
 * and a refused value warns and leaves the default. */
Test(options, rate_hot_top_only)
{
	struct et_options o;
	struct fake f;
	const struct kv good[] = { { "ENORMOUSTEXT_DEFER_RATE", "64" }, { "ENORMOUSTEXT_HOT", "auto" },
	                           { "ENORMOUSTEXT_TOP_ONLY", "yes" } };
	cr_expect_eq(parse(&o, &f, good, 3), 0);
	cr_expect_eq(o.defer_rate, 64ull << 20);
	cr_expect(o.hot_auto);
	cr_expect(o.top_only);
	cr_expect_eq(parse(&o, &f, NULL, 0), 0);
	cr_expect_eq(o.defer_rate, 0, "no limit by default");
	cr_expect(!o.hot_auto);
	cr_expect(!o.top_only);
	const char *bad_rate[] = { "", "-1", "1.5", "64M", "64 ", "1000001", "99999999999999999999" };
	for (size_t i = 0; i < sizeof bad_rate / sizeof bad_rate[0]; i++) {
		const struct kv e[] = { { "ENORMOUSTEXT_DEFER_RATE", bad_rate[i] } };
		cr_expect_eq(parse(&o, &f, e, 1), 1, "'%s' accepted", bad_rate[i]);
		cr_expect_eq(o.defer_rate, 0, "'%s' changed the rate", bad_rate[i]);
		cr_expect_str_eq(f.w[0].name, "ENORMOUSTEXT_DEFER_RATE");
	}
	const struct kv one_m[] = { { "ENORMOUSTEXT_DEFER_RATE", "1000000" } };
	cr_expect_eq(parse(&o, &f, one_m, 1), 0);
	cr_expect_eq(o.defer_rate, 1000000ull << 20);
	const char *bad_hot[] = { "AUTO", "on", "1", "auto " };
	for (size_t i = 0; i < sizeof bad_hot / sizeof bad_hot[0]; i++) {
		const struct kv e[] = { { "ENORMOUSTEXT_HOT", bad_hot[i] } };
		cr_expect_eq(parse(&o, &f, e, 1), 1, "'%s' accepted", bad_hot[i]);
		cr_expect(!o.hot_auto);
	}
	const struct kv bad_top[] = { { "ENORMOUSTEXT_TOP_ONLY", "2" } };
	cr_expect_eq(parse(&o, &f, bad_top, 1), 1);
	cr_expect(!o.top_only);
}

/* ------------------------------------------------------------ hostconf */

/* The host's settings file of `enable --all` (core/hostconf.c). */
Test(hostconf, settings_blanks_comments_and_the_last_of_two)
{
	char buf[] = "# enormoustext enable: a comment\n"
	             "\n"
	             "  ENORMOUSTEXT_MODE = 3  \n"
	             "programs=/usr/sbin/*:mariadbd\n"
	             "\texclude-programs=gdb\r\n"
	             "ENORMOUSTEXT_COPY_MIN=0\n"
	             "ENORMOUSTEXT_MODE=1";   /* no final newline; the last one wins */
	struct et_hostconf c;
	et_hostconf_parse(buf, &c);
	cr_assert_str_eq(c.val[ET_OPT_MODE], "1");
	cr_assert_str_eq(c.val[ET_OPT_COPY_MIN], "0");
	cr_assert_null(c.val[ET_OPT_VERBOSE]);
	cr_assert_str_eq(c.programs, "/usr/sbin/*:mariadbd");
	cr_assert_str_eq(c.exclude, "gdb");
	cr_assert_eq(c.bad_line, 0);
	cr_assert_eq(c.refused_line, 0);
	cr_assert_eq(c.nset, 4);
}

Test(hostconf, bad_and_refused_lines_are_not_used)
{
	char buf[] = "ENORMOUSTEXT_VERBOSE=1\n"
	             "ENORMOUSTEXT_REPORT=/tmp/every-process.json\n"   /* line 2: not the host's */
	             "just words\n"                                    /* line 3: no setting */
	             "ENORMOUSTEXT_VERBOS=2\n"                         /* not a variable */
	             "programs=\n"                                     /* empty globs */
	             "=3\n"
	             "ENORMOUSTEXT_RECORD=/tmp/p\n"
	             "ENORMOUSTEXT_TOP_ONLY=1\n";
	struct et_hostconf c;
	et_hostconf_parse(buf, &c);
	cr_assert_str_eq(c.val[ET_OPT_VERBOSE], "1");
	cr_assert_null(c.val[ET_OPT_REPORT]);
	cr_assert_null(c.val[ET_OPT_RECORD]);
	cr_assert_null(c.val[ET_OPT_TOP_ONLY]);
	cr_assert_null(c.programs);
	cr_assert_eq(c.refused_line, 2);
	cr_assert_eq(c.bad_line, 3);
	cr_assert_eq(c.nset, 1);
	cr_assert(!et_hostconf_settable(ET_OPT_REPORT));
	cr_assert(et_hostconf_settable(ET_OPT_MODE));
	cr_assert(!et_hostconf_settable(-1) && !et_hostconf_settable(ET_OPT__COUNT));
}

Test(hostconf, empty_file)
{
	char buf[] = "";
	struct et_hostconf c;
	et_hostconf_parse(buf, &c);
	cr_assert_eq(c.nset, 0);
	cr_assert_eq(c.bad_line, 0);
	cr_assert_null(c.programs);
}

/* The one rule for trusting the host-wide files (library and command). */
Test(hostconf, trust_rule)
{
	struct stat st = { .st_mode = S_IFREG | 0644, .st_uid = 0 };
	cr_assert_null(et_hostwide_untrusted(&st, false));
	cr_assert_str_eq(et_hostwide_untrusted(&st, true), "not a directory");
	st.st_mode = S_IFREG | 0664;
	cr_assert_str_eq(et_hostwide_untrusted(&st, false), "writable by group or others");
	st.st_mode = S_IFREG | 0646;
	cr_assert_str_eq(et_hostwide_untrusted(&st, false), "writable by group or others");
	st.st_mode = S_IFREG | 0644;
	st.st_uid = 1000;
	cr_assert_str_eq(et_hostwide_untrusted(&st, false), "not owned by root");
	st = (struct stat){ .st_mode = S_IFDIR | 0755, .st_uid = 0 };
	cr_assert_null(et_hostwide_untrusted(&st, true));
	cr_assert_str_eq(et_hostwide_untrusted(&st, false), "not a regular file");
}
