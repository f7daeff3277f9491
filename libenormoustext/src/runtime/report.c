/*
 * runtime/report.c — telling what was done.
 *
 * Owns: the windows' outcome summed into their objects
 * (et_report_summarise) and the process (et_report_stats, what the API
 * gives), the summary and per-object log lines (ENORMOUSTEXT_VERBOSE), and
 * what the JSON report (ENORMOUSTEXT_REPORT) says.  Only what smaps
 * confirmed is called huge.
 * May call: core (json: how JSON is written; outfile: how the file is
 * written — beside its name and renamed into place, so a reader never
 * sees half a report; a device or a FIFO as it is; a link followed; log,
 * options, reason, util).
 * Never: allocates with malloc or uses a stdio stream (text goes into stack
 * buffers: it runs on the constructor's path); writes JSON or a file by
 * hand.
 */
#include "runtime/report.h"

#include "core/json.h"
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
	/* in the object itself where they fit: a mapping kept for the
	 * process's life is address space a program that lowered RLIMIT_AS
	 * after start-up counted on (the deferred pass runs after that) */
	char *out = o->kinds;
	if (!out && (size_t)counted + 1 <= sizeof o->kinds_inline)
		out = o->kinds_inline;
	if (!out) {
		o->kinds = out = et_scratch_alloc((size_t)counted + 1);
		o->kinds_len = o->kinds ? (size_t)counted + 1 : 0;
		if (!o->kinds)
			return;
	}
	uint32_t n = 0;
	for (uint32_t k = 0; k < o->nwindows && n < counted; k++) {
		const struct et_window *w = &run->wins[o->first_window + k];
		if (w->pad && !w->huge && ((!w->candidate && w->reason != ET_R_PACED) || w->reason == ET_R_PAD_NOT_FREE))
			continue;
		out[n++] = !w->huge ? '.' : w->backend == ET_BACKEND_FILE ? 'z'
		         : w->pad ? 'p' : w->backend == ET_BACKEND_HUGETLB ? 'h' : 'c';
	}
	out[n] = '\0';
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
			if (w->pad && !w->huge && ((!w->candidate && w->reason != ET_R_PACED) ||
			                           w->reason == ET_R_PAD_NOT_FREE))
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
	bool min_bytes = false;
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
		min_bytes |= o->skip == ET_R_MIN_BYTES;
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
	/* nothing eligible: the windows were left for ENORMOUSTEXT_MIN_BYTES,
	 * where an object had any, else there were none */
	if (!r && run->ran && st.eligible_bytes == 0)
		r = min_bytes ? et_reason_text(ET_R_MIN_BYTES) : "no whole huge-page window in any object's text";
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
	/* Verbosity 1 speaks for the processes where something moved or could
	 * have (a window stayed small: the line says why); one with no whole
	 * window of text, or only objects below ENORMOUSTEXT_MIN_BYTES, says
	 * nothing below 2. */
	int level = st.huge_bytes || st.eligible_bytes || run->reason != ET_R_NONE ? 1 : 2;
	/* "M of N objects": those with a huge window of those looked at. */
	et_log(level, "%u of %u object%s, %s MiB of %s MiB text on %s pages (%s)%s, %llu ms%s%s",
	       st.objects_huge, st.objects, st.objects == 1 ? "" : "s", mib(a, sizeof a, st.huge_bytes),
	       mib(b, sizeof b, st.text_bytes), page_label(pg, sizeof pg, run->si.pmd_size),
	       st.backend, extra, (unsigned long long)(st.elapsed_ns / 1000000),
	       st.reason[0] ? "; " : "", st.reason);
}

/* ---------------------------------------------------------------- JSON */

/* The report into out (opened here); 0 or -errno, out telling why.  The
 * layout: the process's figures a line each, then one line per object. */
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
	char buf[4096];
	struct et_sink sink;
	et_out_sink(&sink, out, buf, sizeof buf);
	struct et_json j;
	et_json_begin(&j, &sink);

	struct enormoustext_stats st = { .size = sizeof st };
	et_report_stats(run, &st);
	et_json_obj(&j, NULL);
	et_json_str(&j, "version", ENORMOUSTEXT_VERSION_STRING);
	et_json_i64(&j, "pid", (long)getpid());
	et_json_bool(&j, "ran", run->ran);
	et_json_str(&j, "reason", st.reason);
	et_json_u64(&j, "pmd_size", run->si.pmd_size);
	et_json_str(&j, "thp_enabled", et_thp_mode_name(run->si.thp));
	et_json_str(&j, "thp_defrag", et_defrag_mode_name(run->si.defrag));
	et_json_bool(&j, "thp_disabled_for_process", run->si.thp_disabled_process);
	et_json_i64(&j, "hugetlb_free", run->si.hugetlb_free);
	et_json_str(&j, "backend_requested", et_backend_name(run->opt.backend));
	et_json_str(&j, "backend", st.backend);
	et_json_u64(&j, "objects_huge", st.objects_huge);
	et_json_u64(&j, "text_bytes", st.text_bytes);
	et_json_u64(&j, "eligible_bytes", st.eligible_bytes);
	et_json_u64(&j, "remapped_bytes", st.remapped_bytes);
	et_json_u64(&j, "huge_bytes", st.huge_bytes);
	et_json_u64(&j, "zero_copy_bytes", st.zero_copy_bytes);
	et_json_u64(&j, "padded_bytes", st.padded_bytes);
	et_json_u64(&j, "elapsed_ns", st.elapsed_ns);
	et_json_u64(&j, "cpu_ns", __atomic_load_n(&run->cpu_ns, __ATOMIC_RELAXED));
	et_json_arr(&j, "objects");
	for (size_t i = 0; i < run->nobjs; i++) {
		const struct et_object *o = &run->objs[i];
		uint64_t lo = 0, hi = 0;
		for (uint32_t s = 0; s < o->nsegs; s++) {
			if (!lo || o->segs[s].start < lo) lo = o->segs[s].start;
			if (o->segs[s].end > hi) hi = o->segs[s].end;
		}
		et_json_obj_flat(&j, NULL);
		et_json_str(&j, "path", o->path);
		et_json_str(&j, "build_id", o->build_id);
		et_json_hex(&j, "text_start", lo);
		et_json_hex(&j, "text_end", hi);
		et_json_u64(&j, "text_bytes", o->text_bytes);
		et_json_u64(&j, "windows", o->nwindows);
		et_json_u64(&j, "windows_huge", o->windows_huge);
		et_json_u64(&j, "eligible_bytes", o->eligible_bytes);
		et_json_u64(&j, "remapped_bytes", o->remapped_bytes);
		et_json_u64(&j, "huge_bytes", o->huge_bytes);
		et_json_u64(&j, "zero_copy_bytes", o->zero_copy_bytes);
		et_json_u64(&j, "padded_bytes", o->padded_bytes);
		et_json_str(&j, "backend", et_backend_name(o->backend));
		et_json_u64(&j, "time_ns", o->elapsed_ns);
		/* What each window became: z zero-copy (the file, huge), c copied,
		 * h copied to the hugetlb pool, p padded copy, . left small. */
		if (o->kinds || o->kinds_inline[0])
			et_json_str(&j, "window_kinds", o->kinds ? o->kinds : o->kinds_inline);
		/* Every distinct reason: the object's own, then its windows'. */
		et_json_arr(&j, "reasons");
		uint64_t mask = o->reason_mask;
		if (o->skip != ET_R_NONE) {
			et_json_str(&j, NULL, et_reason_text(o->skip));
			mask &= ~(1ull << o->skip);
		} else if (o->nwindows == 0) {
			et_json_str(&j, NULL, et_reason_text(ET_R_NO_WINDOW));
		}
		for (int r = 1; r < ET_R__COUNT; r++)
			if (mask & (1ull << r))
				et_json_str(&j, NULL, et_reason_text((enum et_reason)r));
		et_json_arr_end(&j);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_obj_end(&j);
	et_json_end(&j);
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
