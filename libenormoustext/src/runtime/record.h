/*
 * runtime/record.h — ENORMOUSTEXT_RECORD: sampling where this process
 * executes, beside the pipeline (it moves nothing); the profile is written
 * when the process exits.
 */
#ifndef ET_RUNTIME_RECORD_H
#define ET_RUNTIME_RECORD_H

#include "core/base.h"

/* Sample this process: for a profile written to path_template at exit
 * (ENORMOUSTEXT_RECORD), or with NULL, kept in memory for
 * et_record_take_profile (ENORMOUSTEXT_HOT=auto). */
ET_HIDDEN void et_record_start(const char *path_template);
struct et_profile;
/* ENORMOUSTEXT_HOT=auto: sampling stops, and its samples so far become a
 * profile of the objects loaded now (the format's writer and parser);
 * *samples says how many.  0, or -errno (-ENODATA: not sampling). */
ET_HIDDEN int et_record_take_profile(struct et_profile *p, size_t *samples);
ET_HIDDEN void et_record_forget(void);   /* in a forked child: not its samples */
/* The timer fallback's hooks (interpose/signals.c): whether new threads
 * need a timer; first thing on such a new thread; a SIGPROF disposition
 * the program sets. */
ET_HIDDEN bool et_record_threads_sampled(void);
ET_HIDDEN void et_record_thread_begins(void);
ET_HIDDEN void et_record_sigprof_change(const void *handler);
/* Is SIGPROF's disposition the recorder's handler (the program never set
 * one)?  Then the wrappers answer the program as if it were SIG_DFL, as it
 * would be without the library. */
ET_HIDDEN bool et_record_sigprof_hidden(void);

#endif
