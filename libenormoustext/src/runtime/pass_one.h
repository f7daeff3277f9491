/*
 * runtime/pass_one.h — one pass over the loader's objects into the
 * process's table (pass_one.c), and what it leaves for the next: for
 * pass.c, which decides when passes run.
 */
#ifndef ET_RUNTIME_PASS_ONE_H
#define ET_RUNTIME_PASS_ONE_H

#include "core/run.h"

/* Priming is tried again later at most this many times (pass_one.c). */
#define ET_PRIME_TRIES 3u

/* One pass over the objects the loader has (a dlmopen namespace's alone
 * when ns_head is not NULL) into run's table; with the pass lock held.
 * Returns how many objects were new. */
struct link_map;
ET_HIDDEN size_t et_pass_one_run(struct et_run *run, const struct link_map *ns_head);
/* Room in run's table for `more` objects; 0 or -ENOMEM.  Table lock held. */
ET_HIDDEN int et_pass_one_reserve(struct et_run *run, size_t more);
/* The quick start-up: the loader's counts read now (one walk). */
ET_HIDDEN void et_pass_one_counts_read(void);
/* The next pass over the process's namespace is not skipped on the
 * loader's counts. */
ET_HIDDEN void et_pass_one_counts_forget(void);
/* ENORMOUSTEXT_DEFER_RATE: is an object in the table paced, and how many
 * windows the passes moved since the last look (taken: counted again from
 * 0). */
ET_HIDDEN bool et_pass_one_paced_left(void);
ET_HIDDEN uint64_t et_pass_one_pieces_taken(void);
/* ENORMOUSTEXT_PRIME: when the next try of priming is due
 * (CLOCK_MONOTONIC ns, 0: none), and that none is. */
ET_HIDDEN uint64_t et_pass_one_prime_due(void);
ET_HIDDEN void et_pass_one_prime_due_clear(void);

#endif
