/*
 * import.h — what other tools recorded, read into a profile's counts
 * (import.c), for `profile import` and `record --from-perf-script`:
 * perf.data (perfdata.c), pprof profile.proto (pprof.c, built with
 * protobuf-c and zlib: pprof.h), `perf script` text.
 */
#ifndef ET_TOOL_IMPORT_H
#define ET_TOOL_IMPORT_H

#include "tool.h"

/* Which samples count: all, or those of one process, or of one command
 * name (a thread's comm, as the kernel keeps it: 15 characters). */
struct et_import_filter {
	bool pid_set;
	uint32_t pid;
	const char *comm;
	const char *value;            /* pprof: the sample type to count (NULL: the first "count") */
	uint64_t kept, dropped;       /* samples counted, samples filtered out */
	const char *kind;             /* the last FILE's format: "perf.data", "pprof", "perf script" */
};

/* One FILE ("-": standard input), told by its content (perf.data, pprof
 * gzip'd or not, `perf script` text), into the counts (attrib.h; the
 * caller has called et_attr_init); samples the kernel lost while
 * recording added to *lost.  0, or -1 after one line naming it. */
int et_tool_import_file(const char *name, struct et_import_filter *f, uint64_t *lost);
/* `record -o out --from-perf-script in`: the text into the counts, the
 * profile written to out, one line saying how many samples.  ET_EXIT_OK,
 * or ET_EXIT_BAD after one line saying why. */
int et_tool_import_perf_script(const char *in, const char *out);

#endif
