/*
 * runtime/pipeline.h — one pass of the pipeline (see pipeline.c).
 */
#ifndef ET_RUNTIME_PIPELINE_H
#define ET_RUNTIME_PIPELINE_H

#include "core/run.h"

/* Plan, check, remap, verify and summarise the objects of `run` into
 * them; reads the PMD size (once) and the policy (each pass). */
ET_HIDDEN void et_pipeline_run(struct et_run *run);
/* ENORMOUSTEXT_DEFER_RATE: no object is paced any more; the windows the
 * pieces moved need not be remembered. */
ET_HIDDEN void et_pipeline_moved_forget(void);
struct et_profile;
/* ENORMOUSTEXT_HOT=auto: the profile the process's own samples made (kept;
 * it is the pipeline's from now on), used as ENORMOUSTEXT_PROFILE's is. */
ET_HIDDEN void et_pipeline_use_profile(const struct et_profile *p);

#endif
