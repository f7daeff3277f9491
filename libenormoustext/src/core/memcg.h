/*
 * core/memcg.h — how much the process's memory cgroups still allow to be
 * copied: a program that fits without the library must fit with it.
 * Reads cgroup files (under a root a test can replace); no process state.
 */
#ifndef ET_CORE_MEMCG_H
#define ET_CORE_MEMCG_H

#include "core/plan.h"
/* memcg.c: how many bytes of anonymous copies the process's memory cgroups
 * still allow (a program that fits without the library
 * must fit with it).  Copies (thp, collapse) are charged to the group and,
 * without swap, cannot be reclaimed like the page-cache text they replace. */
#define ET_MEMCG_UNLIMITED UINT64_MAX

struct et_memcg {
	uint64_t budget;          /* bytes that may still be copied; ET_MEMCG_UNLIMITED: no limit */
	uint64_t limit, usage;    /* of the level that sets the budget (0, 0 when unlimited) */
	uint64_t margin;          /* kept back at that level (et_memcg_margin) */
	int version;              /* 1 or 2: the hierarchy of that level; 0 when unlimited */
	bool garbled;             /* that level's files could not be understood: budget 0 */
	bool hugetlb_charged;     /* cgroup2 memory_hugetlb_accounting: hugetlb pages count too */
	unsigned levels;          /* cgroup directories read, both hierarchies */
	char path[256];           /* that level's directory (without the root), may be cut short */
};

/* Read the process's memory cgroups under `root` ("" or "/" for the real
 * system; a directory of the same shape for tests: ROOT/proc/self/cgroup,
 * ROOT/proc/self/mountinfo, and the mount points it names under ROOT).
 * Never fails: what cannot be found is no limit.  No malloc, no stdio. */
ET_HIDDEN void et_memcg_read(struct et_memcg *m, const char *root);
/* What is kept back below a limit of `limit` bytes (see memcg.c). */
ET_HIDDEN uint64_t et_memcg_margin(uint64_t limit);
/* Of the windows in wins[0..n) marked held_back, the first `allowed` in
 * copy order (hottest first where heat_known, then the planner's order)
 * lose the mark; the others keep it.  Returns how many keep it.  Pure. */
ET_HIDDEN size_t et_memcg_keep_best(struct et_window *wins, size_t n, size_t allowed);

/* The bytes of the level m describes (et_memcg_read) that its limit
 * cannot reclaim without swap: anonymous memory (the library's copies
 * among it) and shared memory, from its memory.stat (v1: total_rss +
 * total_shmem; cgroup2: anon + shmem).  False when m has no limit or the
 * file cannot be read or understood.  No malloc, no stdio. */
ET_HIDDEN bool et_memcg_unreclaimable(const struct et_memcg *m, uint64_t *bytes);

#endif
