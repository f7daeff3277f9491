/*
 * import.h — `enormoustext profile import` (import.c) and its readers:
 * perf.data (perfdata.c), pprof profile.proto (pprof.c, built with
 * protobuf-c and zlib), `perf script` text; and `record
 * --from-perf-script`, which is the same text import.
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
};

/* `profile import ...` (argv[0] "import"). */
int et_cmd_profile_import(int argc, char **argv);
/* `record -o out --from-perf-script in`. */
int et_tool_import_perf_script(const char *in, const char *out);

#ifdef ET_TOOL_PPROF
/* A pprof profile (decompressed) into the counts (attrib.h): 0, or -1
 * after one line naming name and what is wrong. */
int et_pprof_import(const char *name, const uint8_t *buf, size_t len, struct et_import_filter *f);
#endif

#endif
