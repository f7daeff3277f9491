/*
 * runtime/remap_round.h — one round of the remap stage (remap_round.c),
 * and which windows a backend can take.
 */
#ifndef ET_RUNTIME_REMAP_ROUND_H
#define ET_RUNTIME_REMAP_ROUND_H

#include "core/run.h"

/* Can backend b make this window huge?  The file backend maps the file
 * itself, so it needs the whole window to be file text at an offset
 * congruent to its address; padded windows need a copy. */
static inline bool et_remap_suits(const struct et_window *w, enum et_backend b)
{
	if (b != ET_BACKEND_FILE)
		return true;
	return !w->pad && w->inode != 0 && w->congruent;
}

static inline bool et_remap_pending(const struct et_window *w, enum et_backend b)
{
	return w->candidate && !w->remapped && et_remap_suits(w, b);
}

/* Backend b over the k pending windows of run (et_remap_pending): staged,
 * checked, swapped where huge, the rest released with their reasons.
 * pool_left: hugetlb pages left, counted down. */
ET_HIDDEN void et_remap_round(struct et_run *run, enum et_backend b, size_t k, long *pool_left);

#endif
