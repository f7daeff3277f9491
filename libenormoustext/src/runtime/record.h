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
 * need a timer; a start routine and its argument wrapped for
 * et_record_thread_start (NULL: no memory, start it as it is); a SIGPROF
 * disposition the program sets. */
ET_HIDDEN bool et_record_threads_sampled(void);
ET_HIDDEN void *et_record_thread_wrap(void *(*fn)(void *), void *arg);
ET_HIDDEN void *et_record_thread_start(void *wrapped);
ET_HIDDEN void et_record_sigprof_change(const void *handler);

#endif
