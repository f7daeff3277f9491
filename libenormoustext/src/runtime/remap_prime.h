/*
 * runtime/remap_prime.h — ENORMOUSTEXT_PRIME (remap_prime.c): copied
 * windows read back huge from their files, then swapped in zero-copy.
 */
#ifndef ET_RUNTIME_REMAP_PRIME_H
#define ET_RUNTIME_REMAP_PRIME_H

#include "core/run.h"

/* Why a window may not be read back (by default), or ET_PB_OK. */
enum et_prime_block { ET_PB_OK, ET_PB_REMOTE, ET_PB_DIRTY, ET_PB_UNKNOWN, ET_PB_MAPPED, ET_PB_MAPPED_UNKNOWN };

/* May window w of the file open at fd be read back with no one else's
 * I/O?  (Not yet whether another process maps its pages.) */
ET_HIDDEN enum et_prime_block et_remap_prime_blocked(const struct et_run *run, int fd, const struct et_window *w);
/* After the rounds: the copied windows of congruent files read back huge
 * and swapped in, where they can be; the others stay copies.  pool_left:
 * hugetlb pages left. */
ET_HIDDEN void et_remap_prime(struct et_run *run, long *pool_left);

#endif
