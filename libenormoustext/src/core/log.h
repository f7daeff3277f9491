/*
 * core/log.h — one-line messages to stderr, "enormoustext: " prefix.
 */
#ifndef ET_CORE_LOG_H
#define ET_CORE_LOG_H

#include "core/base.h"

#include <stdarg.h>

/* Level 0 = warnings (shown unless the user set ENORMOUSTEXT_VERBOSE=0),
 * 1 = summary, 2 = per object, 3 = debug.  One line, "enormoustext: " prefix,
 * written with a single write(2) to stderr; errno is preserved. */
ET_HIDDEN void et_log_setup(int verbose, bool silenced);
ET_HIDDEN bool et_log_enabled(int level);
ET_HIDDEN void et_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Where a line goes: get() gives the descriptor (2, or -1 to drop the
 * line), done(fd) is called after the write.  For a thread with a
 * descriptor table of its own (runtime/defer.c); unset, lines go to 2. */
ET_HIDDEN void et_log_route(int (*get)(void), void (*done)(int));
/* errno as text, without strerror (see log.c); buf is used for rare codes. */
ET_HIDDEN const char *et_errno_text(int e, char buf[24]);
#endif
