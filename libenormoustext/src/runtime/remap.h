/*
 * runtime/remap.h — the remap stage: stage a huge replacement of each
 * candidate window and swap it in with one mremap.
 */
#ifndef ET_RUNTIME_REMAP_H
#define ET_RUNTIME_REMAP_H

#include "core/run.h"

/* Stage, verify and swap every planned window (see remap.c). */
ET_HIDDEN void et_remap_all(struct et_run *run, const enum et_backend *chain, int nchain);

#endif
