/*
 * runtime/record.h — ENORMOUSTEXT_RECORD: sampling where this process
 * executes, beside the pipeline (it moves nothing); the profile is written
 * when the process exits.
 */
#ifndef ET_RUNTIME_RECORD_H
#define ET_RUNTIME_RECORD_H

#include "core/base.h"

ET_HIDDEN void et_record_start(const char *path_template);
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
