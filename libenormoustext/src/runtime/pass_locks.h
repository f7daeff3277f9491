/*
 * runtime/pass_locks.h — the pass lock and the table lock (pass_locks.c),
 * for the passes (pass.c, pass_one.c).  THE LOCK ORDER is in pass_locks.c.
 */
#ifndef ET_RUNTIME_PASS_LOCKS_H
#define ET_RUNTIME_PASS_LOCKS_H

#include "core/base.h"

/* The pass lock, waited for with no bound: the start-up pass, the worker. */
ET_HIDDEN void et_pass_locks_wait(void);
/* The pass lock if it is free and nobody waits for it (after dlopen). */
ET_HIDDEN bool et_pass_locks_try(void);
/* Is either lock taken (or being taken, or let go) now?  For the
 * deferral's tick, on the program's only thread: it waits for neither. */
ET_HIDDEN bool et_pass_locks_busy(void);
/* The pass lock within 10 s: the API's refresh and range. */
ET_HIDDEN bool et_pass_locks_wait_bounded(void);
/* The pass lock after dlopen with no worker: waited for unless whoever
 * holds it is stuck waiting for the loader's lock (which the caller may
 * hold). */
ET_HIDDEN bool et_pass_locks_wait_polite(void);
ET_HIDDEN void et_pass_locks_release(void);
/* Does this thread hold the pass lock? */
ET_HIDDEN bool et_pass_locks_mine(void);

/* The table lock: held for a moment, never while waiting for another. */
ET_HIDDEN void et_pass_locks_table_hold(void);
ET_HIDDEN void et_pass_locks_table_release(void);
ET_HIDDEN bool et_pass_locks_table_mine(void);

/* In a forked child: both locks fresh where another thread held one at
 * the fork; true if one was. */
ET_HIDDEN bool et_pass_locks_fork_child(void);

#endif
