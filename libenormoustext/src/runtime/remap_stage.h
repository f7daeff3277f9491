/*
 * runtime/remap_stage.h — steps 1 to 3 of the remap stage for one window
 * (remap_stage.c): its replacement prepared in its slot.
 */
#ifndef ET_RUNTIME_REMAP_STAGE_H
#define ET_RUNTIME_REMAP_STAGE_H

#include "core/run.h"
#include "runtime/remap_file.h"

/* Steps 1 to 3 for window w, whose slot (w->slot, H-aligned, reserved) is
 * its replacement's place, with backend b.  Sets w->staged, or the reason;
 * on failure the slot is left as whatever it became (the round unmaps it,
 * unless w->slot_lost).  pool_left: hugetlb pages left; fc: the round's
 * file cache. */
ET_HIDDEN void et_remap_stage_one(struct et_run *run, struct et_window *w, uint64_t H, enum et_backend b,
                                  long *pool_left, struct et_file_cache *fc);

#endif
