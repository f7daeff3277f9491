/*
 * runtime/remap_swap.h — step 5 of the remap stage, THE SWAP
 * (remap_swap.c): the staged windows of a round moved onto the live text.
 */
#ifndef ET_RUNTIME_REMAP_SWAP_H
#define ET_RUNTIME_REMAP_SWAP_H

#include "core/run.h"

struct et_swap_ctx {
	struct et_run *run;
	uint64_t H;
	enum et_backend b;
	int pagemap;       /* /proc/self/pagemap, or -1 */
	bool any;
};

/* For et_loader_locked(et_remap_swap_locked, &ctx): every window of
 * ctx->run with a staged slot is swapped in with backend ctx->b (remapped
 * set), or keeps its text with a reason. */
ET_HIDDEN void et_remap_swap_locked(void *arg, unsigned long long adds, unsigned long long subs);

#endif
