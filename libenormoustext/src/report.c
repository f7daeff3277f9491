/*
 * report.c — telling what was done: the summary and per-object log lines
 * (ENORMOUSTEXT_VERBOSE) and the JSON report (ENORMOUSTEXT_REPORT).  Only
 * what smaps confirmed is called huge.  Formats into stack buffers and
 * writes through outfile.c: a file is written beside its final name and
 * renamed into place, so a reader never sees half a report; a device or a
 * FIFO is written as it is (never replaced), a link followed.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Arrays, not pointers: no load-time relocations (see options.c). */
static const char reason_texts[ET_R__COUNT][72] = {
	[ET_R_NONE] = "",
	[ET_R_OFF] = "turned off (ENORMOUSTEXT=0)",
	[ET_R_SECURE] = "secure-execution process (setuid/setgid/capabilities): nothing done",
	[ET_R_VDSO] = "the vdso",
	[ET_R_SELF] = "libenormoustext itself",
	[ET_R_TEXTREL] = "has text relocations",
	[ET_R_EXCLUDED] = "excluded by ENORMOUSTEXT_EXCLUDE",
	[ET_R_NOT_INCLUDED] = "not matched by ENORMOUSTEXT_INCLUDE",
	[ET_R_MIN_BYTES] = "less eligible text than ENORMOUSTEXT_MIN_BYTES",
	[ET_R_NO_WINDOW] = "no whole huge-page window inside its text",
	[ET_R_NOT_READABLE] = "text segment is not plain read+execute",
	[ET_R_MAPPING] = "the window is not one private read+execute file mapping",
	[ET_R_ALREADY_HUGE] = "already huge (file-backed)",
	[ET_R_NO_BACKEND] = "no backend can get huge pages here",
	[ET_R_NOMEM] = "could not map the replacement",
	[ET_R_NOT_HUGE] = "the copy did not land on a huge page",
	[ET_R_MREMAP] = "mremap refused the swap",
	[ET_R_UNVERIFIED] = "smaps did not confirm it huge",
	[ET_R_SCRATCH] = "could not get working memory",
	[ET_R_PATCHED] = "the text was changed in memory (breakpoint or uprobe)",
	[ET_R_LOCKED] = "the text is locked in memory (mlock)",
	[ET_R_NOT_CONGRUENT] = "address and file offset differ modulo the huge page size",
	[ET_R_FILE_SMALL] = "the page cache holds this part of the file in small pages",
	[ET_R_FILE_CHANGED] = "the file at the object's path is not the one mapped",
	[ET_R_PAD_NOT_FREE] = "the rest of the partial window is not free",
	[ET_R_COLD] = "cold: not among the hot windows of ENORMOUSTEXT_PROFILE",
	[ET_R_NOT_PROFILED] = "not in ENORMOUSTEXT_PROFILE (ENORMOUSTEXT_PROFILE_STRICT)",
	[ET_R_PROFILE] = "ENORMOUSTEXT_PROFILE cannot be used: nothing moved",
	[ET_R_MEMCG] = "memcg: a copy would bring the memory cgroup near its limit",
	[ET_R_SMAPS] = "could not read /proc/self/smaps",
	[ET_R_FORKED] = "forked while another thread ran a pass: this child lists nothing",
	[ET_R_RLIMIT_AS] = "RLIMIT_AS leaves too little address space: nothing done",
	[ET_R_PMD_TOO_LARGE] = "huge pages larger than 32 MiB: too large for text, nothing done",
};

const char *et_reason_text(enum et_reason r)
{
	return (unsigned)r < ET_R__COUNT ? reason_texts[r] : "?";
}

/* "162", "1.4", "0.2": MiB with one decimal below 10 MiB. */
static const char *mib(char *buf, size_t cap, uint64_t bytes)
{
	uint64_t tenths = (bytes * 10 + (1u << 19)) >> 20;
	if (bytes > 0 && tenths == 0) {
		snprintf(buf, cap, "<0.1");
		return buf;
	}
	if (tenths >= 100 || tenths % 10 == 0)
		snprintf(buf, cap, "%llu", (unsigned long long)((tenths + 5) / 10));
	else
		snprintf(buf, cap, "%llu.%llu", (unsigned long long)(tenths / 10),
		         (unsigned long long)(tenths % 10));
	return buf;
}

static const char *page_label(char *buf, size_t cap, uint64_t pmd)
{
	if (pmd >= (1u << 20))
		snprintf(buf, cap, "%llu MiB", (unsigned long long)(pmd >> 20));
	else
		snprintf(buf, cap, "%llu KiB", (unsigned long long)(pmd >> 10));
	return buf;
}

void et_report_objects(const struct et_run *run, size_t first, size_t n)
{
	char a[32], b[32], pg[32], eb[24];
	if (!et_log_enabled(2))
		return;
	for (size_t i = first; i < first + n && i < run->nobjs; i++) {
		const struct et_object *o = &run->objs[i];
		const char *name = o->path[0] ? o->path : "(unnamed)";
		if (o->skip != ET_R_NONE) {
			et_log(2, "%s: left alone: %s%s%s", name, et_reason_text(o->skip),
			       o->skip_detail ? ": " : "", o->skip_detail ? o->skip_detail : "");
		} else if (o->nwindows == 0) {
			et_log(2, "%s: left small: no whole %s window in %s MiB of text", name,
			       page_label(pg, sizeof pg, run->si.pmd_size), mib(a, sizeof a, o->text_bytes));
		} else if (o->windows_huge == o->nwindows) {
			char z[32], pd[32];
			et_log(2, "%s: %s of %s MiB text huge (%s), %u window(s), %s MiB zero-copy, "
			       "%s MiB padding, %.1f ms", name,
			       mib(a, sizeof a, o->huge_bytes), mib(b, sizeof b, o->text_bytes),
			       et_backend_name(o->backend), o->nwindows, mib(z, sizeof z, o->zero_copy_bytes),
			       mib(pd, sizeof pd, o->padded_bytes), (double)o->elapsed_ns / 1e6);
		} else {
			/* Something stayed small: say why, with errno where there is one. */
			et_log(2, "%s: %s of %s MiB text huge (%s), %u of %u window(s) left small: %s%s%s%s%s",
			       name, mib(a, sizeof a, o->huge_bytes), mib(b, sizeof b, o->text_bytes),
			       et_backend_name(o->backend), o->nwindows - o->windows_huge, o->nwindows,
			       et_reason_text(o->reason), o->skip_detail ? ": " : "",
			       o->skip_detail ? o->skip_detail : "", o->err ? ": " : "",
			       o->err ? et_errno_text(o->err, eb) : "");
		}
	}
}

void et_report_log(const struct et_run *run)
{
	char a[32], b[32], pg[32];
	if (!run->ran) {
		if (run->reason != ET_R_SECURE)
			et_log(2, "%s", et_reason_text(run->reason));
		return;
	}
	struct enormoustext_stats st = { .size = sizeof st };
	enormoustext_get_stats(&st);
	et_report_objects(run, 0, run->nobjs);
	char extra[96] = "", z[32], pd[32];
	if (st.zero_copy_bytes || st.padded_bytes)
		snprintf(extra, sizeof extra, " [%s MiB zero-copy, %s MiB padding]",
		         mib(z, sizeof z, st.zero_copy_bytes), mib(pd, sizeof pd, st.padded_bytes));
	et_log(1, "%u object%s, %s MiB of %s MiB text on %s pages (%s)%s, %llu ms%s%s",
	       st.objects_huge, st.objects_huge == 1 ? "" : "s", mib(a, sizeof a, st.huge_bytes),
	       mib(b, sizeof b, st.text_bytes), page_label(pg, sizeof pg, run->si.pmd_size),
	       st.backend, extra, (unsigned long long)(st.elapsed_ns / 1000000),
	       st.reason[0] ? "; " : "", st.reason);
}

/* ---------------------------------------------------------------- JSON */

struct jw {
	struct et_out *out;
	size_t n;
	char buf[4096];
};

static void jw_flush(struct jw *j)
{
	if (j->n)
		et_out_write(j->out, j->buf, j->n);   /* an error stays in out->err */
	j->n = 0;
}

static void jw_raw(struct jw *j, const char *s, size_t n)
{
	while (n > 0) {
		if (j->n == sizeof j->buf)
			jw_flush(j);
		size_t c = sizeof j->buf - j->n;
		if (c > n)
			c = n;
		memcpy(j->buf + j->n, s, c);
		j->n += c;
		s += c;
		n -= c;
	}
}

/* A string literal, its length counted by the compiler. */
#define jw_lit(j, s) jw_raw((j), "" s, sizeof(s) - 1)

static void jw_fmt(struct jw *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jw_fmt(struct jw *j, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (k > 0)
		jw_raw(j, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

static void jw_str(struct jw *j, const char *s)
{
	jw_raw(j, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			jw_raw(j, e, 2);
		} else if (c < 0x20) {
			jw_fmt(j, "\\u%04x", c);
		} else {
			jw_raw(j, (const char *)&c, 1);
		}
	}
	jw_raw(j, "\"", 1);
}

/* Expand %p to the process id (several processes of a preloaded tree can
 * then share one ENORMOUSTEXT_REPORT value). */
int et_expand_path(const char *in, char *out, size_t cap)
{
	size_t n = 0;
	for (; *in; in++) {
		char num[24];
		const char *add = in;
		size_t len = 1;
		if (in[0] == '%' && in[1] == 'p') {
			len = (size_t)snprintf(num, sizeof num, "%ld", (long)getpid());
			add = num;
			in++;
		}
		if (n + len + 1 > cap)
			return -ENAMETOOLONG;
		memcpy(out + n, add, len);
		n += len;
	}
	out[n] = '\0';
	return 0;
}

/* The report into out (opened here); 0 or -errno, out telling why. */
static int report_json(const struct et_run *run, const char *path_in, struct et_out *out)
{
	char path[1024];
	memset(out, 0, offsetof(struct et_out, path));
	out->fd = -1;
	int e = et_expand_path(path_in, path, sizeof path);
	if (e)
		return e;
	e = et_out_open(out, path, 0);
	if (e)
		return e;
	struct jw j = { .out = out, .n = 0 };

	struct enormoustext_stats st = { .size = sizeof st };
	enormoustext_get_stats(&st);
	jw_fmt(&j, "{\n  \"version\": \"%s\",\n  \"pid\": %ld,\n  \"ran\": %s,\n",
	       enormoustext_version(), (long)getpid(), run->ran ? "true" : "false");
	jw_lit(&j, "  \"reason\": ");
	jw_str(&j, st.reason);
	jw_fmt(&j, ",\n  \"pmd_size\": %llu,\n  \"thp_enabled\": \"%s\",\n  \"thp_defrag\": \"%s\",\n"
	           "  \"thp_disabled_for_process\": %s,\n  \"hugetlb_free\": %ld,\n"
	           "  \"backend_requested\": \"%s\",\n  \"backend\": \"%s\",\n",
	       (unsigned long long)run->si.pmd_size, et_thp_mode_name(run->si.thp),
	       et_defrag_mode_name(run->si.defrag), run->si.thp_disabled_process ? "true" : "false",
	       run->si.hugetlb_free, et_backend_name(run->opt.backend), st.backend);
	jw_fmt(&j, "  \"objects_huge\": %u,\n  \"text_bytes\": %llu,\n  \"eligible_bytes\": %llu,\n"
	           "  \"remapped_bytes\": %llu,\n  \"huge_bytes\": %llu,\n  \"zero_copy_bytes\": %llu,\n"
	           "  \"padded_bytes\": %llu,\n  \"elapsed_ns\": %llu,\n  \"objects\": [",
	       st.objects_huge, (unsigned long long)st.text_bytes, (unsigned long long)st.eligible_bytes,
	       (unsigned long long)st.remapped_bytes, (unsigned long long)st.huge_bytes,
	       (unsigned long long)st.zero_copy_bytes, (unsigned long long)st.padded_bytes,
	       (unsigned long long)st.elapsed_ns);
	for (size_t i = 0; i < run->nobjs; i++) {
		const struct et_object *o = &run->objs[i];
		if (i)
			jw_lit(&j, ",");
		jw_lit(&j, "\n    {\"path\": ");
		jw_str(&j, o->path);
		jw_lit(&j, ", \"build_id\": ");
		jw_str(&j, o->build_id);
		uint64_t lo = 0, hi = 0;
		for (uint32_t s = 0; s < o->nsegs; s++) {
			if (!lo || o->segs[s].start < lo) lo = o->segs[s].start;
			if (o->segs[s].end > hi) hi = o->segs[s].end;
		}
		jw_fmt(&j, ", \"text_start\": \"0x%llx\", \"text_end\": \"0x%llx\", \"text_bytes\": %llu,"
		           " \"windows\": %u, \"windows_huge\": %u, \"eligible_bytes\": %llu,"
		           " \"remapped_bytes\": %llu, \"huge_bytes\": %llu, \"zero_copy_bytes\": %llu,"
		           " \"padded_bytes\": %llu, \"backend\": \"%s\", \"time_ns\": %llu, ",
		       (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)o->text_bytes,
		       o->nwindows, o->windows_huge, (unsigned long long)o->eligible_bytes,
		       (unsigned long long)o->remapped_bytes, (unsigned long long)o->huge_bytes,
		       (unsigned long long)o->zero_copy_bytes, (unsigned long long)o->padded_bytes,
		       et_backend_name(o->backend), (unsigned long long)o->elapsed_ns);
		/* What each window became: z zero-copy (the file, huge), c copied,
		 * h copied to the hugetlb pool, p padded copy, . left small. */
		if (o->kinds) {
			jw_lit(&j, "\"window_kinds\": ");
			jw_str(&j, o->kinds);
			jw_lit(&j, ", ");
		}
		jw_lit(&j, "\"reasons\": [");
		/* Every distinct reason: the object's own, then its windows'. */
		uint64_t mask = o->reason_mask;
		bool first = true;
		if (o->skip != ET_R_NONE) {
			jw_str(&j, et_reason_text(o->skip));
			mask &= ~(1ull << o->skip);
			first = false;
		} else if (o->nwindows == 0) {
			jw_str(&j, et_reason_text(ET_R_NO_WINDOW));
			first = false;
		}
		for (int r = 1; r < ET_R__COUNT; r++) {
			if (!(mask & (1ull << r)))
				continue;
			if (!first)
				jw_lit(&j, ", ");
			jw_str(&j, et_reason_text((enum et_reason)r));
			first = false;
		}
		jw_lit(&j, "]}");
	}
	jw_lit(&j, "\n  ]\n}\n");
	jw_flush(&j);
	return et_out_commit(out);
}

/* A FIFO with no reader at the path is no failure (nobody wants the
 * report now): one line at ENORMOUSTEXT_VERBOSE=1, and 0. */
int et_report_json(const struct et_run *run, const char *path)
{
	struct et_out out;
	int e = report_json(run, path, &out);
	if (e && out.skipped) {
		et_log(1, "ENORMOUSTEXT_REPORT=%s: %s: the report is not written", path, out.type);
		return 0;
	}
	return e;
}

void et_report_write(const struct et_run *run)
{
	struct et_out out;
	const char *path = run->opt.report;
	int e = report_json(run, path, &out);
	char eb[24], why[160];
	if (!e)
		return;
	if (out.skipped)
		et_log(1, "ENORMOUSTEXT_REPORT=%s: %s: the report is not written", path, out.type);
	else
		et_log(0, "ENORMOUSTEXT_REPORT=%s: cannot write the report: %s", path,
		       et_out_why(&out, why, sizeof why) ? why : et_out_errno_text(-e, eb));
}
