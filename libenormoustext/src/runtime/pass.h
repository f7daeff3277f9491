/*
 * runtime/pass.h — the object table and the passes over it (pass.c), as
 * the rest of the runtime sees them: the constructor starts them, the API
 * reads the table and asks for passes, the interposed loader functions
 * report what the loader did.
 */
#ifndef ET_RUNTIME_PASS_H
#define ET_RUNTIME_PASS_H

#include "core/run.h"

/* The process's run.  The constructor (init.c) fills its options and
 * process-level facts before the first pass; afterwards only passes and
 * readers (et_pass_read) touch it. */
ET_HIDDEN struct et_run *et_pass_state(void);
/* A quick start-up: nothing to move now; the checks wait for a dlopen. */
ET_HIDDEN void et_pass_start_quick(void);
/* Room in the table for nobjs objects, now: for a pass that runs later
 * (ENORMOUSTEXT_DEFER), whose table would otherwise be address space
 * taken after the program may have lowered RLIMIT_AS to what it had. */
ET_HIDDEN void et_pass_reserve(size_t nobjs);
/* The start-up pass over every loaded object (waits for the lock). */
ET_HIDDEN void et_pass_start(void);
/* Run the passes asked for after dlopen/dlclose (the deferred worker). */
ET_HIDDEN void et_pass_serve(void);
/* ENORMOUSTEXT_PRIME, on the worker: when the next try of priming copied
 * windows is due (CLOCK_MONOTONIC ns; 0: none), and the try itself. */
ET_HIDDEN uint64_t et_pass_prime_due(void);
ET_HIDDEN void et_pass_prime_later(void);
/* ENORMOUSTEXT_DEFER_RATE, on the worker: the pieces left, paced. */
ET_HIDDEN void et_pass_pace(void);
/* fn(run, arg) with the table held still: a snapshot for the API.  A pass
 * that was asked for runs first, never while the table is held. */
ET_HIDDEN void et_pass_read(void (*fn)(const struct et_run *, void *), void *arg);
/* enormoustext_refresh and enormoustext_remap_range (include/enormoustext.h). */
ET_HIDDEN int et_pass_refresh(void);
ET_HIDDEN int et_pass_range(const void *start, size_t len);

/* What the loader did (interpose/dlopen.c, after it returned): */
/* dlopen returned a handle: a pass over what is new. */
ET_HIDDEN void et_after_dlopen(void);
/* dlopen failed: as et_after_dlopen, but nothing that could reset the
 * loader's error text (dlerror) before the caller reads it. */
ET_HIDDEN void et_after_failed_dlopen(void);
/* Before a dlopen that goes to the loader untouched: what it loads is
 * moved by the next pass. */
ET_HIDDEN void et_after_untracked_dlopen(void);
/* dlmopen: the objects of that namespace (head of its link maps). */
struct link_map;
ET_HIDDEN void et_after_dlmopen(const struct link_map *head);
/* dlclose: objects gone leave the table (at the next pass). */
ET_HIDDEN void et_after_dlclose(void);

#endif
