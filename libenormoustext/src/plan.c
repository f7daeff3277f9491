/*
 * plan.c — the planner: from executable segments to PMD windows.
 *
 * A pure function (no kernel, no globals) so that it is unit-tested on
 * synthetic segment lists.  A window is [w, w + pmd) with w a multiple of
 * pmd and the whole window inside one segment: a partial window at either
 * end would cover bytes that are not this segment's text (those are
 * et_plan_pads' business).
 */
#include "internal.h"

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
