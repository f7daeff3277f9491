/*
 * runtime/verify.h — the verify stage: each planned window checked against
 * the mappings before anything moves, and what is huge confirmed from
 * smaps after.
 */
#ifndef ET_RUNTIME_VERIFY_H
#define ET_RUNTIME_VERIFY_H

#include "core/run.h"
#include "core/smaps.h"

/* Before the swap: may window w move?  Sets w->candidate, or w->reason;
 * fills what the file backend needs.  sm may be NULL (smaps unreadable:
 * nothing may move). */
ET_HIDDEN void et_verify_window(struct et_run *run, struct et_window *w, const struct et_smaps *sm);
/* Before the swap: windows the kernel already maps huge from the file need
 * nothing from us (they leave the candidates, backend file). */
ET_HIDDEN void et_verify_file_huge(struct et_run *run, const struct et_smaps *sm);
/* After the swap: confirm from smaps what is huge; fills windows' `huge`. */
ET_HIDDEN void et_verify(struct et_run *run);

#endif
