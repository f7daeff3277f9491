/*
 * core/plan.c — the plan stage: from executable segments to PMD windows,
 * and (with a profile) which of them are hot.
 *
 * Owns: et_plan_windows, et_plan_pads (pure functions of segment lists),
 * et_plan_object (one object's windows, padding included),
 * et_plan_classify (ENORMOUSTEXT_INCLUDE/EXCLUDE), et_plan_hot (the hot
 * windows of a profile).
 * May call: util (scratch memory), log, profile lookups.
 * Never: touches the memory it plans for, reads smaps or the kernel; no
 * globals — so that all of it is unit-tested on synthetic objects.
 *
 * Windows from segments.  A window is [w, w + pmd) with w a multiple of
 * pmd and the whole window inside one segment: a partial window at either
 * end would cover bytes that are not this segment's text (those are
 * et_plan_pads' business).
 */
#include "core/plan.h"

#include "core/log.h"
#include "core/profile.h"
#include "core/run.h"
#include "core/util.h"

#include <string.h>

size_t et_plan_windows(const struct et_segment *segs, size_t nsegs, uint64_t pmd,
                       uint32_t object, struct et_window *out, size_t cap)
{
	size_t n = 0;
	if (pmd == 0 || (pmd & (pmd - 1)) != 0)
		return 0;
	for (size_t s = 0; s < nsegs; s++) {
		uint64_t start = segs[s].start, end = segs[s].end;
		if (end <= start)
			continue;
		/* Round up without overflow: start near UINT64_MAX has no window. */
		if (start > UINT64_MAX - (pmd - 1))
			continue;
		uint64_t w = (start + pmd - 1) & ~(pmd - 1);
		for (; w <= end && end - w >= pmd; w += pmd) {
			if (n < cap) {
				struct et_window *x = &out[n];
				*x = (struct et_window){ 0 };
				x->addr = w;
				x->object = object;
				x->seg = (uint32_t)s;
				x->backend = ET_BACKEND_NONE;
			}
			n++;
			if (w > UINT64_MAX - pmd)
				break;
		}
	}
	return n;
}

/*
 * Padded windows (the kernel hugetext feature's pad_threshold): a text
 * segment's first and last windows are usually partial.  When the text in
 * one holds more than `threshold` bytes, plan the whole window anyway; the
 * remapper then fills the rest with zeros, and only if that rest is free
 * address space (checked against the mappings, not here).  A segment that
 * fits inside one window gives one padded window, not two.
 */
size_t et_plan_pads(const struct et_segment *segs, size_t nsegs, uint64_t pmd,
                    uint64_t threshold, uint32_t object, struct et_window *out, size_t cap)
{
	size_t n = 0;
	if (threshold == 0 || pmd == 0 || (pmd & (pmd - 1)) != 0)
		return 0;
	for (size_t s = 0; s < nsegs; s++) {
		uint64_t start = segs[s].start, end = segs[s].end;
		if (end <= start)
			continue;
		uint64_t w[2], lo[2], hi[2];
		int k = 0;
		uint64_t w1 = start & ~(pmd - 1);
		uint64_t w2 = (end - 1) & ~(pmd - 1);     /* window of the last byte */
		/* first window: partial when the text starts inside it, or ends
		 * inside it (then it is the only window) */
		if (start != w1 || w1 == w2) {
			w[k] = w1;
			lo[k] = start;
			hi[k] = (w1 == w2) ? end : w1 + pmd;
			k++;
		}
		/* last window: partial when the text ends inside it */
		if (w2 != w1 && (end & (pmd - 1)) != 0) {
			w[k] = w2;
			lo[k] = w2;
			hi[k] = end;
			k++;
		}
		for (int i = 0; i < k; i++) {
			/* a window must not wrap around the address space */
			if (w[i] > UINT64_MAX - (pmd - 1) || hi[i] - lo[i] <= threshold ||
			    hi[i] - lo[i] >= pmd)
				continue;
			if (n < cap) {
				struct et_window *x = &out[n];
				*x = (struct et_window){ 0 };
				x->addr = w[i];
				x->object = object;
				x->seg = (uint32_t)s;
				x->backend = ET_BACKEND_NONE;
				x->pad = true;
				x->copy_lo = lo[i];
				x->copy_hi = hi[i];
			}
			n++;
		}
	}
	return n;
}

/* Object-level decisions that need the path. */
void et_plan_classify(const struct et_run *run, struct et_object *o)
{
	if (o->skip != ET_R_NONE)
		return;
	if (run->opt.include && !et_glob_list_match(run->opt.include, o->path))
		o->skip = ET_R_NOT_INCLUDED;
	else if (run->opt.exclude && et_glob_list_match(run->opt.exclude, o->path))
		o->skip = ET_R_EXCLUDED;
}

struct heat {
	uint64_t samples;
	uint32_t win;
};

/* Keep the hottest windows: those covering ENORMOUSTEXT_HOT_COVERAGE percent
 * of the samples in the windows this pass could move (of the objects the
 * profile has), within ENORMOUSTEXT_HOT_BUDGET bytes.  Samples elsewhere (a
 * library too small for a window, a part of a window that cannot be
 * padded) do not count: no choice of windows could cover them.  The others are not moved ("cold").
 * Objects the profile does not have follow the normal rules; a profile of
 * another build of an object's path is not used for it (one warning). */
void et_plan_hot(struct et_run *run, const struct et_profile *prof)
{
	const uint64_t H = run->si.pmd_size;
	size_t n = 0;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		if (o->skip != ET_R_NONE || !o->nwindows)
			continue;
		const struct et_prof_obj *po = et_profile_find(prof, o->build_id);
		if (!po) {
			for (size_t k = 0; k < prof->nobjs; k++)
				if (!strcmp(et_profile_path(prof, &prof->objs[k]), o->path))
					et_log(0, "ENORMOUSTEXT_PROFILE=%s: recorded for another build of %s: not used for it",
					       run->opt.profile, o->path);
			if (run->opt.profile_strict)
				for (uint32_t k = 0; k < o->nwindows; k++) {
					struct et_window *w = &run->wins[o->first_window + k];
					if (w->candidate) {
						w->candidate = false;
						w->reason = ET_R_NOT_PROFILED;
					}
				}
			continue;
		}
		for (uint32_t k = 0; k < o->nwindows; k++)
			if (run->wins[o->first_window + k].candidate)
				n++;
	}
	if (n == 0)
		return;
	size_t len = n * sizeof(struct heat);
	struct heat *h = et_scratch_alloc(len);
	if (!h)
		return;
	size_t m = 0;
	uint64_t total = 0;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		if (o->skip != ET_R_NONE || !o->nwindows)
			continue;
		const struct et_prof_obj *po = et_profile_find(prof, o->build_id);
		if (!po)
			continue;
		for (uint32_t k = 0; k < o->nwindows; k++) {
			struct et_window *w = &run->wins[o->first_window + k];
			if (!w->candidate)
				continue;
			uint64_t lo = w->pad ? w->copy_lo : w->addr, hi = w->pad ? w->copy_hi : w->addr + H;
			h[m].samples = et_profile_heat(prof, po, lo - o->base, hi - o->base);
			h[m].win = o->first_window + k;
			total = total > UINT64_MAX - h[m].samples ? UINT64_MAX : total + h[m].samples;
			m++;
		}
	}
	/* hottest first (insertion sort: a process has hundreds of windows at most) */
	for (size_t i = 1; i < m; i++) {
		struct heat x = h[i];
		size_t j = i;
		while (j > 0 && h[j - 1].samples < x.samples) {
			h[j] = h[j - 1];
			j--;
		}
		h[j] = x;
	}
	unsigned __int128 want = (unsigned __int128)total * run->opt.hot_coverage;
	unsigned __int128 got = 0;
	uint64_t bytes = 0;
	for (size_t i = 0; i < m; i++) {
		struct et_window *w = &run->wins[h[i].win];
		bool keep = h[i].samples > 0 && got * 100 < want &&
		            (!run->opt.hot_budget || bytes + H <= run->opt.hot_budget);
		w->heat = h[i].samples;
		w->heat_known = true;
		if (keep) {
			got += h[i].samples;
			bytes += H;
		} else {
			w->candidate = false;
			w->reason = ET_R_COLD;
		}
	}
	et_log(3, "profile: %llu of %zu window(s) hot, %llu of %llu samples",
	       (unsigned long long)(bytes / H), m, (unsigned long long)got, (unsigned long long)total);
	et_scratch_free(h, len);
}

/* The windows of one object in address order, segment by segment: a
 * padded first window, the whole windows, a padded last window.  With
 * out == NULL, only counts. */
size_t et_plan_object(const struct et_run *run, const struct et_object *o, uint32_t idx,
                      struct et_window *out)
{
	const uint64_t H = run->si.pmd_size;
	/* padding needs a copy: not with the file backend alone */
	uint64_t thr = run->opt.backend == ET_BACKEND_FILE || run->again ? 0 : run->opt.pad_threshold;
	size_t n = 0;
	for (uint32_t s = 0; s < o->nsegs; s++) {
		struct et_window pads[2];
		size_t np = et_plan_pads(&o->segs[s], 1, H, thr, idx, pads, 2);
		size_t nf = et_plan_windows(&o->segs[s], 1, H, idx, NULL, 0);
		if (!out) {
			n += np + nf;
			continue;
		}
		size_t first = n, p = 0;
		if (p < np && (pads[p].addr < o->segs[s].start || nf == 0))
			out[n++] = pads[p++];
		et_plan_windows(&o->segs[s], 1, H, idx, out + n, nf);
		n += nf;
		while (p < np)
			out[n++] = pads[p++];
		for (size_t k = first; k < n; k++)
			out[k].seg = s;
	}
	return n;
}
