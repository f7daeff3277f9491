/*
 * runtime/loader.h — the loader's lock, as the library takes it
 * (loader.c): inside dl_iterate_phdr, briefly, never across a fork.
 */
#ifndef ET_RUNTIME_LOADER_H
#define ET_RUNTIME_LOADER_H

#include "core/base.h"

/* The loader's count of objects it has removed, as dl_iterate_phdr
 * reports it (dlpi_subs), or ET_LOADER_SUBS_UNKNOWN where it reports none. */
#define ET_LOADER_SUBS_UNKNOWN (~0ull)

/*
 * fn(arg, adds, subs) with the loader's lock held (glibc's
 * dl_load_write_lock, which dlclose also holds while it unmaps an object):
 * while fn runs, no object is unloaded.  adds and subs are the loader's
 * counts of objects added and removed so far (ET_LOADER_SUBS_UNKNOWN where
 * the loader gives none).  fn must be short (it delays every fork of the
 * process: see loader.c) and must not wait for anything a forking thread
 * may hold.  Nested calls (from inside fn) run fn at once.
 */
ET_HIDDEN void et_loader_locked(void (*fn)(void *arg, unsigned long long adds, unsigned long long subs),
                                void *arg);
/* dl_iterate_phdr itself, under the same rules: cb for every object.
 * (It does not register the fork handlers: the constructor's count of the
 * objects uses it, before any thread, in every process.) */
struct dl_phdr_info;
ET_HIDDEN void et_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
/* Has a thread been waiting more than ns for the loader's lock, to run a
 * callback of ours?  (Then the lock is held long by someone: maybe the
 * caller, from inside a dl_iterate_phdr callback of the program's.) */
ET_HIDDEN bool et_loader_stalled(uint64_t ns);
/* From now on, time each wait for the loader's lock (for
 * et_loader_stalled).  Until then none is: the constructor's count of the
 * objects, before any pass, reads no clock (its first call of one costs a
 * page of the vDSO in every process). */
ET_HIDDEN void et_loader_time_waits(void);
/* Before the lock can be taken in a process that may fork: the fork
 * handlers (once; cheap after). */
ET_HIDDEN void et_loader_fork_safe(void);

#endif
