/*
 * report.c — telling what was done: the summary and per-object log lines
 * (ENORMOUSTEXT_VERBOSE) and the JSON report (ENORMOUSTEXT_REPORT).  Only
 * what smaps confirmed is called huge.  Formats into stack buffers and
 * writes through outfile.c: a file is written beside its final name and
 * renamed into place, so a reader never sees half a report; a device or a
 * FIFO is written as it is (never replaced), a link followed.
 */
#include "runtime/report.h"

#include "core/log.h"
#include "core/outfile.h"
#include "core/util.h"


#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ summary */

/* What each counted window became, for the report: z zero-copy, c copied,
 * h copied to the hugetlb pool, p padded copy, . left small.  Not for the
 * test-only range passes, whose object does not outlive them. */
static void record_kinds(const struct et_run *run, struct et_object *o, uint32_t counted)
{
	if (run->again || counted == 0)
		return;
	if (o->kinds && o->kinds_len < (size_t)counted + 1) {
		et_scratch_free(o->kinds, o->kinds_len);
		o->kinds = NULL;
	}
	if (!o->kinds) {
		o->kinds = et_scratch_alloc((size_t)counted + 1);
		o->kinds_len = o->kinds ? (size_t)counted + 1 : 0;
		if (!o->kinds)
			return;
	}
	uint32_t n = 0;
	for (uint32_t k = 0; k < o->nwindows && n < counted; k++) {
		const struct et_window *w = &run->wins[o->first_window + k];
		if (w->pad && !w->huge && (!w->candidate || w->reason == ET_R_PAD_NOT_FREE))
			continue;
		o->kinds[n++] = !w->huge ? '.' : w->backend == ET_BACKEND_FILE ? 'z'
		              : w->pad ? 'p' : w->backend == ET_BACKEND_HUGETLB ? 'h' : 'c';
	}
	o->kinds[n] = '\0';
}

void et_report_summarise(struct et_run *run)
{
	const uint64_t H = run->si.pmd_size;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		unsigned used[ET_BACKEND__COUNT] = { 0 };
		o->remapped_bytes = o->huge_bytes = o->zero_copy_bytes = o->padded_bytes = 0;
		o->eligible_bytes = 0;
		o->windows_huge = 0;
		o->reason = o->skip;
		o->reason_mask = 0;
		o->err = 0;
		uint32_t counted = 0;
		for (uint32_t k = 0; k < o->nwindows; k++) {
			const struct et_window *w = &run->wins[o->first_window + k];
			/* A padded window is a bonus: one that could not be had (the
			 * rest of the window not free) is not a window left small. */
			if (w->pad && !w->huge && (!w->candidate || w->reason == ET_R_PAD_NOT_FREE))
				continue;
			counted++;
			/* a padded window's text is the part of its segment inside it */
			const struct et_segment *sg = &o->segs[w->seg];
			uint64_t text = H;
			if (w->pad) {
				uint64_t a = sg->start > w->addr ? sg->start : w->addr;
				uint64_t e = sg->end < w->addr + H ? sg->end : w->addr + H;
				text = e - a;
			}
			o->eligible_bytes += text;
			if (w->remapped)
				o->remapped_bytes += text;
			if (w->huge) {
				o->huge_bytes += text;
				o->windows_huge++;
				used[w->backend]++;
				if (w->backend == ET_BACKEND_FILE)
					o->zero_copy_bytes += H;
				if (w->pad)
					o->padded_bytes += H - text;
			} else {
				if (o->reason == ET_R_NONE)
					o->reason = w->reason;
				if (w->reason != ET_R_NONE)
					o->reason_mask |= 1ull << w->reason;
				if (!o->err)
					o->err = w->err;
			}
		}
		if (o->skip == ET_R_NONE) {
			record_kinds(run, o, counted);
			o->nwindows = counted;
		}
		o->backend = ET_BACKEND_NONE;
		unsigned best = 0;
		for (int b = 0; b < ET_BACKEND__COUNT; b++)
			if (used[b] > best) {
				best = used[b];
				o->backend = (enum et_backend)b;
			}
	}
}

/* The process's figures from the object table: every object counts, so
 * that the per-object figures add up; the reason is the process's, else
 * the first reason a window stayed small. */
void et_report_stats(const struct et_run *run, struct enormoustext_stats *out)
{
	struct enormoustext_stats st;
	memset(&st, 0, sizeof st);
	st.size = out->size;
	st.ran = run->ran;
	st.pmd_size = run->si.pmd_size;
	st.elapsed_ns = run->elapsed_ns;
	unsigned used[ET_BACKEND__COUNT] = { 0 };
	const char *r = NULL, *detail = run->reason_detail;
	if (run->reason != ET_R_NONE)
		r = et_reason_text(run->reason);
	for (size_t i = 0; i < run->nobjs; i++) {
		/* Every object the API lists, so that per-object figures add up. */
		const struct et_object *o = &run->objs[i];
		st.objects++;
		st.text_bytes += o->text_bytes;
		st.eligible_bytes += o->skip == ET_R_NONE ? o->eligible_bytes : 0;
		st.remapped_bytes += o->remapped_bytes;
		st.huge_bytes += o->huge_bytes;
		st.zero_copy_bytes += o->zero_copy_bytes;
		st.padded_bytes += o->padded_bytes;
		if (o->huge_bytes)
			st.objects_huge++;
		used[o->backend] += o->windows_huge;
		/* Else the first reason a window stayed small. */
		if (!r && o->skip == ET_R_NONE && o->reason != ET_R_NONE && o->reason != ET_R_MIN_BYTES)
			r = et_reason_text(o->reason);
	}
	enum et_backend best = ET_BACKEND_NONE;
	for (int b = 0, m = 0; b < ET_BACKEND__COUNT; b++)
		if ((int)used[b] > m) {
			m = (int)used[b];
			best = (enum et_backend)b;
		}
	et_strlcpy(st.backend, et_backend_name(best), sizeof st.backend);
	if (run->quick) {
		st.text_bytes = run->quick_text;
		r = "no loaded object has a text segment as large as one huge page";
	}
	if (!r && run->ran && st.eligible_bytes == 0)
		r = "no whole huge-page window in any object's text";
	if (r) {
		if (detail)
			snprintf(st.reason, sizeof st.reason, "%s: %s", r, detail);
		else
			et_strlcpy(st.reason, r, sizeof st.reason);
	}
	*out = st;
}


/* ---------------------------------------------------------------- log */

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

void et_report_log(const struct et_run *run, const struct enormoustext_stats *stp)
{
	char a[32], b[32], pg[32];
	if (!run->ran) {
		if (run->reason != ET_R_SECURE)
			et_log(2, "%s", et_reason_text(run->reason));
		return;
	}
	const struct enormoustext_stats st = *stp;
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
	et_report_stats(run, &st);
	jw_fmt(&j, "{\n  \"version\": \"%s\",\n  \"pid\": %ld,\n  \"ran\": %s,\n",
	       ENORMOUSTEXT_VERSION_STRING, (long)getpid(), run->ran ? "true" : "false");
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
