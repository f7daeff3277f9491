/*
 * core/sysinfo.h — the facts of the system that decide what can work: the
 * huge page (PMD) size, the THP policy, the hugetlb pool, and from them the
 * order in which `auto` tries the backends.  Reads sysfs (under a root a
 * test can replace); no process state.
 */
#ifndef ET_CORE_SYSINFO_H
#define ET_CORE_SYSINFO_H

#include "core/options.h"

enum et_thp_mode { ET_THP_UNKNOWN = 0, ET_THP_ALWAYS, ET_THP_MADVISE, ET_THP_NEVER };
enum et_defrag_mode {
	ET_DEFRAG_UNKNOWN = 0, ET_DEFRAG_ALWAYS, ET_DEFRAG_DEFER,
	ET_DEFRAG_DEFER_MADVISE, ET_DEFRAG_MADVISE, ET_DEFRAG_NEVER
};

struct et_sysinfo {
	uint64_t pmd_size;          /* hpage_pmd_size, 2 MiB if unreadable */
	bool pmd_size_read;
	enum et_thp_mode thp;
	enum et_defrag_mode defrag;
	bool thp_disabled_process;  /* PR_GET_THP_DISABLE */
	long hugetlb_free;          /* free pages of pmd_size in the pool, -1 unknown */
	long hugetlb_total;
	bool policy_read;           /* et_sysinfo_read_policy has run */
};

/* Read the system facts under `root` ("" or "/" for the real system, a
 * directory of the same shape for tests).  Never fails: unknown stays unknown. */
ET_HIDDEN void et_sysinfo_read(struct et_sysinfo *si, const char *root);
/* The two halves of et_sysinfo_read: the PMD size (resets *si first), and
 * the policy and pool (read only when there is something to move). */
ET_HIDDEN void et_sysinfo_read_pmd(struct et_sysinfo *si, const char *root);
ET_HIDDEN void et_sysinfo_read_policy(struct et_sysinfo *si, const char *root);
ET_HIDDEN const char *et_thp_mode_name(enum et_thp_mode m);
ET_HIDDEN const char *et_defrag_mode_name(enum et_defrag_mode m);

/* The order `auto` tries backends in, given the facts; returns the count
 * (0 when nothing can work) and, in *why, a reason when it is 0 or short. */
ET_HIDDEN int et_backend_chain(const struct et_sysinfo *si, enum et_backend requested,
                               enum et_backend out[4], const char **why);

/* A size no PMD can be smaller than on this architecture, known without a
 * system call (0 when there is no such knowledge). */
ET_HIDDEN uint64_t et_pmd_size_floor(void);
/* The largest PMD size the library works with: 32 MiB (arm64 with 16 KiB
 * pages).  Above it (arm64 with 64 KiB pages: 512 MiB) a window is larger
 * than nearly all program text and a padded or copied one would cost
 * hundreds of MiB: nothing is moved, and the report says why. */
#define ET_PMD_MAX (32ull << 20)
ET_HIDDEN bool et_pmd_size_usable(uint64_t pmd);

#endif
