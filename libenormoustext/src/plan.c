/*
 * plan.c — the planner: from executable segments to PMD windows.
 *
 * A pure function (no kernel, no globals) so that it is unit-tested on
 * synthetic segment lists.  A window is [w, w + pmd) with w a multiple of
 * pmd and the whole window inside one segment: a partial window at either
 * end would cover bytes that are not this segment's text.
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
