/*
 * runtime/pipeline.h — one pass of the pipeline (see pipeline.c).
 */
#ifndef ET_RUNTIME_PIPELINE_H
#define ET_RUNTIME_PIPELINE_H

#include "core/run.h"

/* Plan, check, remap, verify and summarise the objects of `run` into
 * them; reads the PMD size (once) and the policy (each pass). */
ET_HIDDEN void et_pipeline_run(struct et_run *run);

#endif
