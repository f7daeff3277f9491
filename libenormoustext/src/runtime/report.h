/*
 * runtime/report.h — the report stage: the windows' outcome summed into
 * their objects, the summary and per-object log lines
 * (ENORMOUSTEXT_VERBOSE), the JSON report (ENORMOUSTEXT_REPORT).
 */
#ifndef ET_RUNTIME_REPORT_H
#define ET_RUNTIME_REPORT_H

#include "core/run.h"
#include "enormoustext.h"

/* Sum what each window became into its object (figures, reasons, kinds). */
ET_HIDDEN void et_report_summarise(struct et_run *run);
/* The process's figures, as enormoustext_get_stats gives them (the API
 * calls this on its snapshot of the table, the summary line too). */
ET_HIDDEN void et_report_stats(const struct et_run *run, struct enormoustext_stats *st);
ET_HIDDEN void et_report_log(const struct et_run *run, const struct enormoustext_stats *st);
/* Per-object lines (ENORMOUSTEXT_VERBOSE=2) for objects [first, first+n). */
ET_HIDDEN void et_report_objects(const struct et_run *run, size_t first, size_t n);
ET_HIDDEN int et_report_json(const struct et_run *run, const char *path);
/* ENORMOUSTEXT_REPORT written (et_report_json), and a failure logged here:
 * one line naming the path and why (the type refused, or errno), at
 * ENORMOUSTEXT_VERBOSE=1 only for a FIFO with no reader. */
ET_HIDDEN void et_report_write(const struct et_run *run);
/* Add the functions in the pass's moved windows to /tmp/perf-PID.map
 * (perfmap.c; through outfile.c, the first pass of a process replacing what
 * is there).  Returns how many; a failure is logged there, naming the file
 * and why, and 0 returned. */
ET_HIDDEN int et_perfmap_write(const struct et_run *run);

#endif
