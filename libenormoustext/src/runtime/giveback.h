/*
 * runtime/giveback.h — copies that give way to the program's own memory
 * in a memory cgroup with a limit (giveback.c).  All three act only on the
 * deferred worker, and are cheap elsewhere.
 */
#ifndef ET_RUNTIME_GIVEBACK_H
#define ET_RUNTIME_GIVEBACK_H

#include "core/base.h"

/* After a pass: watch if the process holds copies in a limited cgroup. */
ET_HIDDEN void et_giveback_arm(void);
/* When the next look is due (CLOCK_MONOTONIC ns), 0: not watching. */
ET_HIDDEN uint64_t et_giveback_due(void);
/* A look, when due: near the limit, every copy is given back. */
ET_HIDDEN void et_giveback_tick(void);

#endif
