/*
 * progress.h — one line of progress on standard error while a subcommand
 * does something long (compare's pairs, record --pid, prime and check of
 * several files): "compare: pair 3 of 6, 4.2 s, ratio 1.012x", rewritten in
 * place with a carriage return, cut to the terminal's width, and erased at
 * the end, as curl, rsync --info=progress2 or apt draw theirs.  Only where
 * standard error is a terminal: into a pipe or a file, nothing is written.
 * While it is on, anything the command writes through stdio's stderr (or
 * stdout, on the same terminal) erases the line first (progress.c).
 */
#ifndef ET_TOOL_PROGRESS_H
#define ET_TOOL_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct et_progress {
	bool on;              /* standard error is a terminal: the line is drawn */
	const char *what;     /* the line's first word ("compare") */
	uint64_t t0_ns;       /* when the work started (CLOCK_MONOTONIC) */
	uint64_t drawn_ns;    /* when the line was last drawn (0: never) */
	size_t shown;         /* its width on the screen now (0: nothing shown) */
};

/* Start: the clock from now; on only when standard error is a terminal. */
void et_progress_start(struct et_progress *p, const char *what);
/* Seconds since et_progress_start. */
double et_progress_elapsed(const struct et_progress *p);
/* Draw "WHAT: TEXT" in place of the line shown, at most ten times a second
 * (each call with force, and the first, always). */
void et_progress_show(struct et_progress *p, bool force, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Erase the line (before anything else is written to the terminal); the
 * next et_progress_show draws it again. */
void et_progress_clear(struct et_progress *p);
/* Erase the line for good, and give stdio's stderr and stdout back:
 * nothing more is drawn.  Call it before the command's own output ends. */
void et_progress_end(struct et_progress *p);

#endif
