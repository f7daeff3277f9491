/*
 * record.h — what `enormoustext record` (record.c) shares with its part in
 * record_library.c: the recording with the library's own timers, where
 * perf_event_open is refused.
 */
#ifndef ET_TOOL_RECORD_H
#define ET_TOOL_RECORD_H

#include "tool.h"
#include "profiles.h"

/* The output opened before COMMAND ran, dropped: what is at its path stays
 * as it was (t may be NULL, or not open: a FIFO that had no reader). */
void et_record_out_drop(struct et_tool_out *t);

/* In the child, after execvp failed: say why, tell the parent (through the
 * close-on-exec pipe fd: nothing is written there), exit 127 or 126 as a
 * shell does. */
void et_record_exec_failed(const char *cmd, int fd) __attribute__((noreturn));

/* What the library's recording merged, for --json. */
struct et_record_merged {
	bool ok;                           /* merged into out: stats and processes hold */
	struct et_tool_merge_stats stats;
	size_t processes;                  /* the processes' profiles merged */
};

/* Run COMMAND with the library preloaded, recording itself
 * (ENORMOUSTEXT_RECORD: a CPU-time timer and SIGPROF where perf_event_open
 * is refused, with errno why) and moving nothing (ENORMOUSTEXT=0, unless
 * set); each process that runs the library writes its own profile into a
 * private directory, and the profiles are merged into out (t: out opened
 * already, taken over).  COMMAND's exit status, or ET_EXIT_BAD. */
int et_record_with_library(char **cmd, const char *out, int why, struct et_tool_out *t,
                           struct et_record_merged *m);

#endif
