/*
 * pagecache.h — a file's text windows in the page cache (pagecache.c):
 * which are huge there, which are not, why; priming them.  For `prime`
 * and for `status --explain PROGRAM`.
 */
#ifndef ET_TOOL_PAGECACHE_H
#define ET_TOOL_PAGECACHE_H

#include "tool.h"

#include <sys/types.h>

enum et_tool_win_state {
	ET_WIN_HUGE_BEFORE,      /* already huge in the cache */
	ET_WIN_PRIMED,           /* huge now, by this run */
	ET_WIN_NOT_CACHED,       /* --check: not (wholly) in the cache */
	ET_WIN_SMALL,            /* --check: cached in small pages */
	ET_WIN_HELD,             /* small pages that a running process keeps mapped */
	ET_WIN_NO_FOLIOS,        /* read back, still small: no huge folios on this filesystem */
	ET_WIN_NO_ROOM,          /* read back small: no free huge page could be made (try later) */
	ET_WIN_WRITING,          /* the file is open for writing: left alone */
	ET_WIN_FAILED,           /* a system call failed (errno in err) */
};

struct et_tool_primed {
	const char *path;
	uint64_t text_off, text_len;        /* executable segment in the file */
	uint64_t windows;                   /* whole windows the text can use at run time */
	bool congruent;
	bool random_base;                   /* a PIE executable with p_align < H */
	uint64_t max_align;
	uint64_t n[ET_WIN_FAILED + 1];
	int err;                            /* errno of the first ET_WIN_FAILED */
	uint64_t collapsed;                 /* of the primed: collapsed in place (MADV_COLLAPSE) */
	pid_t pids[8];                      /* processes that map the file */
	int npids;
	bool more_pids;
};

/* The windows of path's text (those of H bytes a run-time mapping can
 * cover) and their state in the page cache, each one primed unless check
 * (see pagecache.c): 0, or -1 after one line naming path (it cannot be
 * read, is not ELF, is truncated or has no executable segment). */
int et_tool_prime_file(const char *path, uint64_t H, bool check, struct et_tool_primed *res);

/* Whether this kernel collapses file text in place (MADV_COLLAPSE on a
 * read-only, executable file mapping: CONFIG_READ_ONLY_THP_FOR_FS, or a
 * kernel whose page cache collapses large folios of any file): probed by
 * the first window primed, and remembered.  1 it does (priming uses it:
 * a window is made huge where it is, even while processes map its small
 * pages), 0 it does not (*err: the errno it gave; priming drops and reads
 * back), -1 not known yet. */
int et_tool_collapse_file_text(int *err);

/* `prime --check` of one file, as figures: windows of its text, and how
 * many are huge in the page cache now, not cached at all, cached small;
 * 0, or -1 after one line naming it. */
struct et_prime_state {
	uint64_t windows, huge, not_cached, small;
	bool congruent;
};
int et_tool_prime_state(const char *path, uint64_t H, struct et_prime_state *st);

#endif
