/*
 * collapse.h — what `enormoustext collapse` (collapse.c) knows of its
 * targets, shared by its three files: collapse.c parses the command line
 * and drives the rounds, collapse_act.c reads each process's mappings and
 * asks the kernel (process_madvise(MADV_COLLAPSE)), collapse_print.c says
 * what came of it (text or JSON).
 */
#ifndef ET_TOOL_COLLAPSE_H
#define ET_TOOL_COLLAPSE_H

#include "tool.h"

/* The same numbers on x86-64 and aarch64 (and every architecture with the
 * generic table); older headers lack them. */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif

enum rkind { K_FILE, K_ANON };

struct crange {
	uint64_t start, end;        /* the mapping, from smaps */
	uint64_t lo, hi;            /* its whole PMD windows */
	uint64_t offset, inode;
	char *what;                 /* the file, or "[anon:jit]" and the like */
	char *file;                 /* the file to read (--profile), NULL for anonymous */
	enum rkind kind;
	const char *left_out;       /* why it is not asked at all (NULL: asked) */
	uint8_t *ask;               /* per window: asked (the others are cold) */
	unsigned nwin, nasked, nfailed;
	uint64_t asked;             /* bytes of windows asked */
	uint64_t before, after, printed;   /* huge bytes of the mapping */
	int err;                    /* errno of the first window that failed, 0 none */
	bool seen;                  /* in this round's smaps */
	bool fresh;                 /* found this round */
	bool retry;                 /* --watch: ask again (the failure may pass) */
	bool done;                  /* asked (or left out) at least once */
};

struct cproc {
	long pid;
	int pidfd;
	char comm[64];
	struct crange *r;
	size_t n, cap;
	bool gone, denied, thp_disabled;
	bool said_gone;             /* --watch --json: its exit reported */
	int fatal;                  /* errno that stops every call for it (EPERM...) */
};

struct copts {
	bool jit, dry, json;
	const char *profile_path;
	struct et_profile prof;
	bool have_prof;
	double watch;               /* seconds, 0: once */
	uint64_t H;
	bool old_kernel;            /* before 6.1: no MADV_COLLAPSE in process_madvise */
	char release[65];
};

/* collapse_act.c */

/* The kernel's release (old_kernel) and its PMD size (H) into o. */
void et_collapse_kernel_facts(struct copts *o);
/* pidfd_open(2) of pid: the descriptor, or -1 with errno. */
int et_collapse_pidfd_open(long pid);
/* p's command name and whether THP is disabled for it. */
void et_collapse_read_comm(struct cproc *p);
/* One round for p: read its mappings, ask for what is new (or to retry),
 * read them again.  0, or -errno reading smaps (-ENOENT: it exited). */
int et_collapse_round(struct cproc *p, struct copts *o);
/* Asked for, and not as huge afterwards as asked. */
bool et_collapse_range_small(const struct crange *r);
void et_collapse_range_free(struct crange *r);

/* collapse_print.c */

/* The report of one round of every process (text, or one JSON object);
 * with --watch after the first round only what changed. */
void et_collapse_report(struct cproc *ps, size_t n, const struct copts *o, unsigned round);

#endif
