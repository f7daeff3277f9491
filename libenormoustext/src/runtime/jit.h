/*
 * runtime/jit.h — ENORMOUSTEXT_MODE=2 and 3: anonymous executable memory
 * (the code caches of JIT compilers) on huge pages, from inside the
 * process.  The wrappers of mmap and mprotect (interpose/mmap.c) test
 * et_jit_wants_*() — one load — and call here only when it says yes.
 */
#ifndef ET_RUNTIME_JIT_H
#define ET_RUNTIME_JIT_H

#include "core/base.h"
#include "core/options.h"

#include <sys/mman.h>
#include <sys/types.h>

/* The PMD size while this copy of the library handles JIT code, 0 when it
 * does not (mode 1, off, secure execution, another copy acts, before the
 * constructor).  Written once, by et_jit_start. */
extern ET_HIDDEN size_t et_jit_pmd;

typedef void *(*et_mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*et_mprotect_fn)(void *, size_t, int);

/* Worth a look: executable, or a reservation (PROT_NONE) big enough to
 * hold a window.  Anything else goes straight to libc. */
static inline bool et_jit_wants_mmap(size_t len, int prot)
{
	size_t h = __atomic_load_n(&et_jit_pmd, __ATOMIC_RELAXED);
	return h && ((prot & PROT_EXEC) || (prot == PROT_NONE && len >= h));
}

static inline bool et_jit_wants_mprotect(int prot)
{
	return (prot & PROT_EXEC) && __atomic_load_n(&et_jit_pmd, __ATOMIC_RELAXED);
}

/* The constructor's: arm the wrappers if the options ask for JIT code and
 * the system can do something with it (says why not at verbosity 1). */
ET_HIDDEN void et_jit_start(const struct et_options *o);

/* mmap and mprotect as the program asked, through `next` (libc's), with
 * the reservation aligned and the executable range advised/collapsed.
 * What the program sees — the result, the protections, the size, errno —
 * is what `next` alone would have given it (but a 2 MiB-aligned address). */
ET_HIDDEN void *et_jit_mmap(et_mmap_fn next, void *addr, size_t len, int prot, int flags, int fd,
                            off_t off);
ET_HIDDEN int et_jit_mprotect(et_mprotect_fn next, void *addr, size_t len, int prot);

/* The figures so far (for the report and tests). */
struct et_jit_stats {
	uint64_t ranges;        /* executable ranges seen (mmap, mprotect) */
	uint64_t exec_bytes;    /* their bytes */
	uint64_t aligned;       /* reservations placed 2 MiB-aligned */
	uint64_t collapsed;     /* windows put on a huge page with MADV_COLLAPSE */
	uint64_t failed_range;  /* ... refused: not one mapping, or nothing written there (EINVAL) */
	uint64_t failed_mem;    /* ... refused: no huge page to be had (ENOMEM, EAGAIN) */
	uint64_t failed_other;  /* ... refused otherwise */
};
ET_HIDDEN void et_jit_read(struct et_jit_stats *st);

#endif
