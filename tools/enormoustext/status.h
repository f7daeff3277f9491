/*
 * tools/enormoustext/status.h — what `status` has read and probed, shared
 * by status.c (which reads, probes and prints it) and explain.c (which
 * turns it into advice: `status --explain`).
 */
#ifndef ET_TOOL_STATUS_H
#define ET_TOOL_STATUS_H

#include "tool.h"
#include "core/memcg.h"

#include <limits.h>
#include <sys/mman.h>

/* the advice the probes (status.c) and the sentences (explain.c) name,
 * where an older <sys/mman.h> lacks them */
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE 15
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define HUGETLB_DIR "/sys/kernel/mm/hugepages"

struct probe {
	int works;             /* -1 not run, 0 no, 1 yes */
	char detail[320];
};

struct file_probe {
	struct probe p;
	int fresh;             /* -1 not run, 0/1: freshly written file mapped huge */
	char dir[PATH_MAX];
	char fs[32];
	bool same_fs;
};

struct size_entry {
	uint64_t size;
	char enabled[32], shmem[32];    /* mTHP: anonymous and shmem policy */
	long total, free, resv, surplus; /* hugetlb */
};

struct status {
	const char *root;
	bool real;
	struct et_sysinfo si;
	bool thp_available;
	char enabled[64], defrag[64], shmem[64];
	long kh_defrag, kh_scan, kh_sleep, kh_alloc_sleep, kh_ptes_none, kh_collapsed, kh_full;
	int kh_running;                  /* -1 unknown */
	struct size_entry mthp[32], pools[8];
	size_t nmthp, npools;
	struct probe thp, collapse;
	struct file_probe file;
	enum et_backend chain[4];
	int nchain;
	const char *why;
	/* for --explain */
	char kernel[64];                 /* uname -r (ROOT/proc/sys/kernel/osrelease under --root) */
	int kmajor, kminor;              /* -1 unknown */
	uint64_t mem_total;              /* MemTotal, 0 unknown */
	struct et_memcg memcg;
};

/* The name of a statfs f_type ("ext4", ...; else its number, in buf). */
const char *et_status_fs_name(long type, char *buf, size_t cap);
/* "2 MiB" */
const char *et_status_mib(uint64_t H, char *buf, size_t cap);
/* The order auto tries, and why, as one line (status's own text). */
void et_status_auto_reason(const struct status *s, char *out, size_t cap);
/* `status --explain [PROGRAM]`: sentences, each from a fact of s (and of
 * PROGRAM, its libraries and their page cache); into j when not NULL (the
 * "explain" member of status's object), else as text on stdout.
 * ET_EXIT_OK, or ET_EXIT_BAD after one line when PROGRAM cannot be read. */
int et_status_explain(const struct status *s, const char *program, struct et_json *j);

#endif


