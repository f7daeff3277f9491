/*
 * test_report.c — the JSON report (et_report_json) from a synthetic run:
 * per-object figures and reasons, escaping, %p in the path, atomic
 * replacement, and failures that leave nothing behind.  A small JSON
 * syntax checker validates every file the library writes.
 *
 * The process-wide part of the report comes from enormoustext_get_stats,
 * i.e. the library's own (empty: ENORMOUSTEXT=0) run; only its shape is
 * checked here.
 */
#include "unit_util.h"

#include "core/run.h"
#include "runtime/report.h"

#include <ctype.h>

/* A bug that loops forever fails its test instead of hanging the run; a
 * failed test leaves no temporary directory behind. */
TestSuite(json_checker, .timeout = 30, .fini = ut_cleanup);
TestSuite(report, .timeout = 30, .fini = ut_cleanup);

/* ------------------------------------------------------------ JSON syntax */

struct jp {
	const char *p, *e;
	const char *err;
};

static void jp_ws(struct jp *j)
{
	while (j->p < j->e && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

static bool jp_value(struct jp *j, int depth);

static bool jp_fail(struct jp *j, const char *why)
{
	if (!j->err)
		j->err = why;
	return false;
}

static bool jp_string(struct jp *j)
{
	if (j->p >= j->e || *j->p != '"')
		return jp_fail(j, "expected string");
	j->p++;
	while (j->p < j->e && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;
		if (c < 0x20)
			return jp_fail(j, "raw control character (or NUL) in a string");
		if (c == '\\') {
			j->p++;
			if (j->p >= j->e)
				return jp_fail(j, "truncated escape");
			if (*j->p == 'u') {
				for (int k = 1; k <= 4; k++)
					if (j->p + k >= j->e || !isxdigit((unsigned char)j->p[k]))
						return jp_fail(j, "bad \\u escape");
				j->p += 4;
			} else if (!strchr("\"\\/bfnrt", *j->p)) {
				return jp_fail(j, "bad escape");
			}
		}
		j->p++;
	}
	if (j->p >= j->e)
		return jp_fail(j, "unterminated string");
	j->p++;
	return true;
}

static bool jp_number(struct jp *j)
{
	const char *s = j->p;
	if (j->p < j->e && *j->p == '-')
		j->p++;
	if (j->p >= j->e || !isdigit((unsigned char)*j->p))
		return jp_fail(j, "bad number");
	if (*j->p == '0' && j->p + 1 < j->e && isdigit((unsigned char)j->p[1]))
		return jp_fail(j, "leading zero");
	while (j->p < j->e && isdigit((unsigned char)*j->p))
		j->p++;
	if (j->p < j->e && *j->p == '.') {
		j->p++;
		if (j->p >= j->e || !isdigit((unsigned char)*j->p))
			return jp_fail(j, "bad fraction");
		while (j->p < j->e && isdigit((unsigned char)*j->p))
			j->p++;
	}
	if (j->p < j->e && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->e && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->e || !isdigit((unsigned char)*j->p))
			return jp_fail(j, "bad exponent");
		while (j->p < j->e && isdigit((unsigned char)*j->p))
			j->p++;
	}
	return j->p > s;
}

static bool jp_word(struct jp *j, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(j->e - j->p) < n || memcmp(j->p, w, n))
		return jp_fail(j, "bad literal");
	j->p += n;
	return true;
}

static bool jp_value(struct jp *j, int depth)
{
	if (depth > 32)
		return jp_fail(j, "too deep");
	jp_ws(j);
	if (j->p >= j->e)
		return jp_fail(j, "unexpected end");
	char c = *j->p;
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		j->p++;
		jp_ws(j);
		if (j->p < j->e && *j->p == close) {
			j->p++;
			return true;
		}
		for (;;) {
			jp_ws(j);
			if (c == '{') {
				if (!jp_string(j))
					return false;
				jp_ws(j);
				if (j->p >= j->e || *j->p != ':')
					return jp_fail(j, "expected ':'");
				j->p++;
			}
			if (!jp_value(j, depth + 1))
				return false;
			jp_ws(j);
			if (j->p < j->e && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->e && *j->p == close) {
				j->p++;
				return true;
			}
			return jp_fail(j, "expected ',' or a closing bracket");
		}
	}
	if (c == '"')
		return jp_string(j);
	if (c == 't')
		return jp_word(j, "true");
	if (c == 'f')
		return jp_word(j, "false");
	if (c == 'n')
		return jp_word(j, "null");
	return jp_number(j);
}

/* Whole buffer is one JSON value (with surrounding whitespace). */
static bool json_valid(const char *buf, size_t len, size_t *at, const char **why)
{
	struct jp j = { buf, buf + len, NULL };
	bool ok = jp_value(&j, 0);
	if (ok) {
		jp_ws(&j);
		if (j.p != j.e)
			ok = jp_fail(&j, "trailing bytes after the value");
	}
	*at = (size_t)(j.p - buf);
	*why = j.err ? j.err : "";
	return ok;
}

Test(json_checker, self_test)
{
	size_t at;
	const char *why;
	const char *good[] = { "{}", "[]", "{\"a\": [1, -2.5e3, \"x\\u00e9\\n\", true, false, null]}", " 0 " };
	const char *bad[] = { "", "{", "{\"a\" 1}", "[1,]", "{\"a\":1,}", "\"\x01\"", "01", "[1] x",
	                      "{\"a\": tru}", "\"\\x\"" };
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		cr_expect(json_valid(good[i], strlen(good[i]), &at, &why), "%s: %s at %zu", good[i], why, at);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		cr_expect(!json_valid(bad[i], strlen(bad[i]), &at, &why), "accepted %s", bad[i]);
	const char nul[] = "{\"a\": \"x\0y\"}";
	cr_expect(!json_valid(nul, sizeof nul - 1, &at, &why), "accepted a NUL inside a string");
	const char nul2[] = "{\"a\": 1,\0 \"b\": 2}";
	cr_expect(!json_valid(nul2, sizeof nul2 - 1, &at, &why), "accepted a NUL between members");
}

/* ------------------------------------------------------------ the run */

#define H (2 * UT_MIB)

static const char weird_path[] = "/opt/we\"ird\\dir/lib %p.so";
static const char weird_json[] = "\"/opt/we\\\"ird\\\\dir/lib %p.so\"";
static const char ctl_path[] = "/usr/lib/ti\tny\n.so";
static const char ctl_json[] = "\"/usr/lib/ti\\u0009ny\\u000a.so\"";

struct fixture {
	struct et_object objs[4];
	struct et_window wins[6];
	struct et_run run;
};

static void make_run(struct fixture *f)
{
	memset(f, 0, sizeof *f);
	struct et_run *r = &f->run;
	r->opt.enabled = true;
	r->opt.backend = ET_BACKEND_THP;
	r->si = (struct et_sysinfo){ .pmd_size = H, .pmd_size_read = true, .thp = ET_THP_MADVISE,
	                             .defrag = ET_DEFRAG_DEFER_MADVISE, .hugetlb_free = 3, .hugetlb_total = 5 };
	r->objs = f->objs;
	r->nobjs = 4;
	r->wins = f->wins;
	r->nwins = 6;
	r->ran = true;

	/* 0: a big library, two windows huge, two left small for two reasons. */
	struct et_object *o = &f->objs[0];
	strcpy(o->path, "/usr/lib/libbig.so");
	strcpy(o->build_id, "0123456789abcdef0123456789abcdef01234567");
	o->segs[0] = (struct et_segment){ 0x7f0000001000, 0x7f0000801000, 0x1000, PF_R_FLAG | PF_X_FLAG };
	o->segs[1] = (struct et_segment){ 0x7f0001000000, 0x7f0001200000, 0xa00000, PF_R_FLAG | PF_X_FLAG };
	o->nsegs = 2;
	o->first_window = 0;
	o->nwindows = 4;
	o->windows_huge = 2;
	o->text_bytes = 10 * UT_MIB;
	o->eligible_bytes = 4 * H;
	o->remapped_bytes = 3 * H;
	o->huge_bytes = 2 * H;
	o->elapsed_ns = 12345;
	o->backend = ET_BACKEND_THP;
	o->reason = ET_R_NOT_HUGE;
	const uint64_t a0[] = { 0x7f0000200000, 0x7f0000400000, 0x7f0000600000, 0x7f0001000000 };
	for (int k = 0; k < 4; k++) {
		f->wins[k] = (struct et_window){ .addr = a0[k], .object = 0, .seg = k < 3 ? 0 : 1,
		                                 .prot = 5, .backend = ET_BACKEND_NONE };
	}
	f->wins[0].huge = f->wins[1].huge = f->wins[0].remapped = f->wins[1].remapped = true;
	f->wins[0].backend = f->wins[1].backend = ET_BACKEND_THP;
	f->wins[2].remapped = true;
	f->wins[2].reason = ET_R_NOT_HUGE;
	f->wins[3].reason = ET_R_MREMAP;
	f->wins[3].err = 1;
	/* What the pipeline's summary keeps of the windows in the object. */
	o->reason_mask = (1ull << ET_R_NOT_HUGE) | (1ull << ET_R_MREMAP);
	o->err = 1;

	/* 1: a path that needs escaping; both windows refused for the same reason. */
	o = &f->objs[1];
	strcpy(o->path, weird_path);
	o->segs[0] = (struct et_segment){ 0x400000, 0x800000, 0, PF_R_FLAG | PF_X_FLAG };
	o->nsegs = 1;
	o->first_window = 4;
	o->nwindows = 2;
	o->text_bytes = 4 * UT_MIB;
	o->eligible_bytes = 2 * H;
	o->backend = ET_BACKEND_NONE;
	o->reason = ET_R_MAPPING;
	f->wins[4] = (struct et_window){ .addr = 0x400000, .object = 1, .reason = ET_R_MAPPING,
	                                 .backend = ET_BACKEND_NONE };
	f->wins[5] = (struct et_window){ .addr = 0x600000, .object = 1, .reason = ET_R_MAPPING,
	                                 .backend = ET_BACKEND_NONE };
	o->reason_mask = 1ull << ET_R_MAPPING;

	/* 2: the vdso, skipped. */
	o = &f->objs[2];
	strcpy(o->path, "[vdso]");
	o->segs[0] = (struct et_segment){ 0x7fff00000000, 0x7fff00001000, 0, PF_R_FLAG | PF_X_FLAG };
	o->nsegs = 1;
	o->skip = ET_R_VDSO;
	o->reason = ET_R_VDSO;
	o->backend = ET_BACKEND_NONE;
	o->first_window = 6;

	/* 3: considered, but no whole window; control characters in the path. */
	o = &f->objs[3];
	strcpy(o->path, ctl_path);
	o->segs[0] = (struct et_segment){ 0x500000, 0x580000, 0, PF_R_FLAG | PF_X_FLAG };
	o->nsegs = 1;
	o->text_bytes = 0x80000;
	o->backend = ET_BACKEND_NONE;
	o->first_window = 6;
}

/* Write the report for f into dir/name; return the text read back. */
static char *write_report(const struct fixture *f, const char *dir, const char *name, size_t *len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int r = et_report_json(&f->run, path);
	cr_assert_eq(r, 0, "et_report_json(%s) = %d (%s)", path, r, strerror(-r));
	char *text = ut_read(path, len);
	cr_assert_not_null(text, "%s not written", path);
	return text;
}

/* The object entry from its path (as JSON) up to its closing "]}". */
static const char *object_entry(const char *text, size_t len, const char *json_path, size_t *elen)
{
	char key[600];
	snprintf(key, sizeof key, "%s, \"build_id\": ", json_path);
	const char *s = memmem(text, len, key, strlen(key));
	cr_assert_not_null(s, "no object entry %s", key);
	const char *e = memmem(s, len - (size_t)(s - text), "]}", 2);
	cr_assert_not_null(e, "object entry %s not closed", key);
	*elen = (size_t)(e + 2 - s);
	return s;
}

static void expect_in(const char *s, size_t n, const char *what, const char *ctx)
{
	cr_expect_not_null(memmem(s, n, what, strlen(what)), "%s: missing %s in: %.*s", ctx, what, (int)n, s);
}

Test(report, per_object_figures)
{
	struct fixture f;
	make_run(&f);
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	size_t len, n;
	char *text = write_report(&f, dir, "r.json", &len);

	const char *o = object_entry(text, len, "\"/usr/lib/libbig.so\"", &n);
	expect_in(o, n, "\"build_id\": \"0123456789abcdef0123456789abcdef01234567\"", "libbig");
	expect_in(o, n, "\"text_start\": \"0x7f0000001000\"", "libbig");
	expect_in(o, n, "\"text_end\": \"0x7f0001200000\"", "libbig");
	expect_in(o, n, "\"text_bytes\": 10485760", "libbig");
	expect_in(o, n, "\"windows\": 4,", "libbig");
	expect_in(o, n, "\"windows_huge\": 2,", "libbig");
	expect_in(o, n, "\"eligible_bytes\": 8388608", "libbig");
	expect_in(o, n, "\"remapped_bytes\": 6291456", "libbig");
	expect_in(o, n, "\"huge_bytes\": 4194304", "libbig");
	expect_in(o, n, "\"backend\": \"thp\"", "libbig");
	expect_in(o, n, "\"time_ns\": 12345", "libbig");
	char reasons[512];
	snprintf(reasons, sizeof reasons, "\"reasons\": [\"%s\", \"%s\"]", et_reason_text(ET_R_NOT_HUGE),
	         et_reason_text(ET_R_MREMAP));
	expect_in(o, n, reasons, "libbig");

	o = object_entry(text, len, weird_json, &n);
	expect_in(o, n, "\"build_id\": \"\"", "weird");
	expect_in(o, n, "\"text_start\": \"0x400000\"", "weird");
	expect_in(o, n, "\"windows\": 2,", "weird");
	expect_in(o, n, "\"windows_huge\": 0,", "weird");
	expect_in(o, n, "\"huge_bytes\": 0,", "weird");
	expect_in(o, n, "\"backend\": \"none\"", "weird");
	/* Two windows with one reason: the reason once. */
	snprintf(reasons, sizeof reasons, "\"reasons\": [\"%s\"]", et_reason_text(ET_R_MAPPING));
	expect_in(o, n, reasons, "weird");

	o = object_entry(text, len, "\"[vdso]\"", &n);
	snprintf(reasons, sizeof reasons, "\"reasons\": [\"%s\"]", et_reason_text(ET_R_VDSO));
	expect_in(o, n, reasons, "vdso");
	expect_in(o, n, "\"windows\": 0,", "vdso");

	o = object_entry(text, len, ctl_json, &n);
	snprintf(reasons, sizeof reasons, "\"reasons\": [\"%s\"]", et_reason_text(ET_R_NO_WINDOW));
	expect_in(o, n, reasons, "tiny");
	expect_in(o, n, "\"text_bytes\": 524288", "tiny");

	/* Object order is the table's. */
	const char *p0 = memmem(text, len, "libbig.so", 9);
	const char *p1 = memmem(text, len, "we\\\"ird", 7);
	const char *p2 = memmem(text, len, "[vdso]", 6);
	const char *p3 = memmem(text, len, "ti\\u0009ny", 10);
	cr_assert(p0 && p1 && p2 && p3);
	cr_expect(p0 < p1 && p1 < p2 && p2 < p3, "objects out of order");
	free(text);
	ut_rmtree(dir);
}

Test(report, process_fields)
{
	struct fixture f;
	make_run(&f);
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	size_t len;
	char *text = write_report(&f, dir, "r.json", &len);
	char want[128];
	snprintf(want, sizeof want, "\"version\": \"%s\"", enormoustext_version());
	expect_in(text, len, want, "top");
	snprintf(want, sizeof want, "\"pid\": %ld,", (long)getpid());
	expect_in(text, len, want, "top");
	expect_in(text, len, "\"ran\": true", "top");
	expect_in(text, len, "\"pmd_size\": 2097152,", "top");
	expect_in(text, len, "\"thp_enabled\": \"madvise\"", "top");
	expect_in(text, len, "\"thp_defrag\": \"defer+madvise\"", "top");
	expect_in(text, len, "\"thp_disabled_for_process\": false", "top");
	expect_in(text, len, "\"hugetlb_free\": 3,", "top");
	expect_in(text, len, "\"backend_requested\": \"thp\"", "top");
	expect_in(text, len, "\"objects\": [", "top");
	free(text);

	f.run.ran = false;
	f.run.si.thp = ET_THP_NEVER;
	f.run.si.thp_disabled_process = true;
	f.run.si.hugetlb_free = -1;
	f.run.opt.backend = ET_BACKEND_COLLAPSE;
	text = write_report(&f, dir, "r2.json", &len);
	expect_in(text, len, "\"ran\": false", "top");
	expect_in(text, len, "\"thp_enabled\": \"never\"", "top");
	expect_in(text, len, "\"thp_disabled_for_process\": true", "top");
	expect_in(text, len, "\"hugetlb_free\": -1,", "top");
	expect_in(text, len, "\"backend_requested\": \"collapse\"", "top");
	free(text);
	ut_rmtree(dir);
}

Test(report, is_valid_json_without_nul_bytes)
{
	struct fixture f;
	make_run(&f);
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	size_t len;
	char *text = write_report(&f, dir, "r.json", &len);
	cr_expect_eq(strlen(text), len, "the report holds a NUL byte at offset %zu of %zu", strlen(text), len);
	size_t at;
	const char *why;
	bool ok = json_valid(text, len, &at, &why);
	cr_expect(ok, "invalid JSON at byte %zu (%s): ...%.40s", at, why, text + (at > 20 ? at - 20 : 0));
	cr_expect(len > 2 && text[0] == '{' && text[len - 2] == '}' && text[len - 1] == '\n');
	free(text);
	ut_rmtree(dir);
}

Test(report, no_objects_is_valid_json)
{
	struct fixture f;
	make_run(&f);
	f.run.nobjs = 0;
	f.run.nwins = 0;
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	size_t len, at;
	const char *why;
	char *text = write_report(&f, dir, "r.json", &len);
	cr_expect(json_valid(text, len, &at, &why), "invalid JSON at byte %zu (%s)", at, why);
	cr_expect_null(memmem(text, len, "\"path\"", 6));
	free(text);
	ut_rmtree(dir);
}

/* Enough objects to pass the writer's 4 KiB buffer many times. */
Test(report, many_objects)
{
	enum { N = 300 };
	struct et_object *objs = calloc(N, sizeof *objs);
	cr_assert_not_null(objs);
	for (int i = 0; i < N; i++) {
		snprintf(objs[i].path, sizeof objs[i].path, "/usr/lib/x86_64-linux-gnu/libobject-%03d.so", i);
		objs[i].segs[0] = (struct et_segment){ 0x10000000u + (uint64_t)i * 0x1000000u,
		                                       0x10000000u + (uint64_t)i * 0x1000000u + 0x100000u, 0,
		                                       PF_R_FLAG | PF_X_FLAG };
		objs[i].nsegs = 1;
		objs[i].text_bytes = 0x100000u + (uint64_t)i;
		objs[i].backend = ET_BACKEND_NONE;
	}
	struct et_run run = { .objs = objs, .nobjs = N, .ran = true,
	                      .si = { .pmd_size = H, .hugetlb_free = -1, .hugetlb_total = -1 } };
	char dir[PATH_MAX], path[PATH_MAX + 16];
	ut_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/many.json", dir);
	cr_assert_eq(et_report_json(&run, path), 0);
	size_t len, at;
	const char *why;
	char *text = ut_read(path, &len);
	cr_assert_not_null(text);
	cr_assert(len > 8 * 4096, "report only %zu bytes", len);
	cr_expect(json_valid(text, len, &at, &why), "invalid JSON at byte %zu (%s)", at, why);
	for (int i = 0; i < N; i++) {
		char want[160];
		snprintf(want, sizeof want,
		         "{\"path\": \"/usr/lib/x86_64-linux-gnu/libobject-%03d.so\", \"build_id\": \"\", "
		         "\"text_start\": \"0x%llx\"",
		         i, (unsigned long long)objs[i].segs[0].start);
		cr_assert_not_null(memmem(text, len, want, strlen(want)), "object %d missing or mangled", i);
		snprintf(want, sizeof want, "\"text_bytes\": %llu,", (unsigned long long)objs[i].text_bytes);
		cr_assert_not_null(memmem(text, len, want, strlen(want)), "object %d text_bytes", i);
	}
	free(text);
	free(objs);
	ut_rmtree(dir);
}

Test(report, percent_p_is_the_pid)
{
	struct fixture f;
	make_run(&f);
	char dir[PATH_MAX], in[PATH_MAX + 32], out[PATH_MAX + 64];
	ut_tmpdir(dir, sizeof dir);
	snprintf(in, sizeof in, "%s/report-%%p.json", dir);
	cr_assert_eq(et_report_json(&f.run, in), 0);
	snprintf(out, sizeof out, "%s/report-%ld.json", dir, (long)getpid());
	cr_expect_eq(access(out, R_OK), 0, "%s not written", out);
	cr_expect_neq(access(in, F_OK), 0, "the literal %%p name was written");
	cr_expect_eq(ut_count_entries(dir), 1, "leftover files in %s", dir);

	/* Twice in one name; a lone % stays. */
	snprintf(in, sizeof in, "%s/%%p-%%-%%p.json", dir);
	cr_assert_eq(et_report_json(&f.run, in), 0);
	snprintf(out, sizeof out, "%s/%ld-%%-%ld.json", dir, (long)getpid(), (long)getpid());
	cr_expect_eq(access(out, R_OK), 0, "%s not written", out);
	cr_expect_eq(ut_count_entries(dir), 2);
	/* %p in an object's path is not expanded. */
	size_t len;
	char *text = ut_read(out, &len);
	cr_assert_not_null(text);
	cr_expect_not_null(memmem(text, len, weird_json, strlen(weird_json)));
	free(text);
	ut_rmtree(dir);
}

Test(report, replaces_an_existing_file_whole)
{
	struct fixture f;
	make_run(&f);
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	/* A longer old file: the new report must not keep its tail. */
	char *junk = malloc(200000);
	cr_assert_not_null(junk);
	memset(junk, 'Z', 200000);
	ut_write_n(dir, "r.json", junk, 200000);
	free(junk);
	size_t len;
	char *text = write_report(&f, dir, "r.json", &len);
	cr_expect(len < 200000);
	cr_expect_null(memchr(text, 'Z', len), "old content left in the report");
	cr_expect_eq(ut_count_entries(dir), 1);
	free(text);
	ut_rmtree(dir);
}

Test(report, nonexistent_directory_fails_cleanly)
{
	struct fixture f;
	make_run(&f);
	char dir[PATH_MAX], path[PATH_MAX + 32], sub[PATH_MAX + 8];
	ut_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/nope/r-%%p.json", dir);
	int r = et_report_json(&f.run, path);
	cr_expect_eq(r, -ENOENT, "returned %d", r);
	snprintf(sub, sizeof sub, "%s/nope", dir);
	cr_expect_neq(access(sub, F_OK), 0, "the directory was created");
	cr_expect_eq(ut_count_entries(dir), 0, "something was left behind");
	ut_rmtree(dir);
}

/* The final name is a directory: the rename fails, the temporary goes. */
Test(report, rename_failure_leaves_nothing)
{
	struct fixture f;
	make_run(&f);
	char dir[PATH_MAX], path[PATH_MAX + 16];
	ut_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/taken", dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	int r = et_report_json(&f.run, path);
	cr_expect_lt(r, 0, "returned %d", r);
	cr_expect(r == -EISDIR || r == -ENOTEMPTY || r == -EEXIST, "returned %d (%s)", r, strerror(-r));
	cr_expect_eq(ut_count_entries(dir), 1, "a temporary was left behind");
	cr_expect_eq(ut_count_entries(path), 0);
	ut_rmtree(dir);
}

Test(report, overlong_path)
{
	struct fixture f;
	make_run(&f);
	char dir[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	char path[2048];
	int n = snprintf(path, sizeof path, "%s/", dir);
	memset(path + n, 'a', 1100);
	path[n + 1100] = '\0';
	cr_expect_eq(et_report_json(&f.run, path), -ENAMETOOLONG);
	/* Short enough as given, too long once %p is expanded. */
	n = snprintf(path, sizeof path, "%s/", dir);
	memset(path + n, 'b', 1021 - (size_t)n);
	strcpy(path + 1021, "%p");
	cr_expect_eq(strlen(path), 1023);
	cr_expect_eq(et_report_json(&f.run, path), -ENAMETOOLONG);
	cr_expect_eq(ut_count_entries(dir), 0);
	ut_rmtree(dir);
}

Test(report, reason_texts)
{
	for (int r = ET_R_NONE + 1; r < ET_R__COUNT; r++) {
		const char *t = et_reason_text((enum et_reason)r);
		cr_assert_not_null(t, "reason %d", r);
		cr_expect(t[0], "reason %d has no text", r);
		for (int k = ET_R_NONE + 1; k < r; k++)
			cr_expect_str_neq(t, et_reason_text((enum et_reason)k), "reasons %d and %d read the same", k, r);
	}
	cr_expect_str_eq(et_reason_text(ET_R_NONE), "");
	cr_expect_str_eq(et_reason_text(ET_R__COUNT), "?");
	cr_expect_not_null(strstr(et_reason_text(ET_R_EXCLUDED), "ENORMOUSTEXT_EXCLUDE"));
	cr_expect_not_null(strstr(et_reason_text(ET_R_MIN_BYTES), "ENORMOUSTEXT_MIN_BYTES"));
}
