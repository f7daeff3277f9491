/*
 * perfdata.h — a reader of perf.data files (as `perf record` writes them,
 * to a file or to a pipe), for `profile import`: the events, their sample
 * layouts, the build-ids perf stored, and the records that say where code
 * was (MMAP, MMAP2), who ran (COMM, FORK) and where it ran (SAMPLE).
 *
 * The file is untrusted: every read is checked against the buffer, a
 * malformed or truncated file is one message (what is wrong, at which
 * byte), never a read outside it.  Depends on libc only (the fuzz target
 * links it alone).
 */
#ifndef ET_TOOL_PERFDATA_H
#define ET_TOOL_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum et_pd_kind { ET_PD_MMAP, ET_PD_SAMPLE, ET_PD_COMM, ET_PD_FORK };

/* One record, in time order (perf's per-CPU buffers are written in rounds:
 * the file's order is not the time order when the samples carry a time). */
struct et_pd_event {
	enum et_pd_kind kind;
	uint32_t pid, tid;             /* ~0u: every process (the kernel's maps) */
	uint32_t ppid, ptid;           /* FORK: the parent */
	uint64_t ip;                   /* SAMPLE */
	uint16_t cpumode;              /* SAMPLE: PERF_RECORD_MISC_CPUMODE_MASK bits */
	uint64_t addr, len, pgoff;     /* MMAP */
	bool exec;                     /* MMAP: executable */
	const char *name;              /* MMAP: the path; COMM: the name (NUL-ended) */
	const uint8_t *build_id;       /* MMAP2 that carries one, else NULL */
	size_t build_id_len;
};

/* An entry of the HEADER_BUILD_ID feature (or a pipe's HEADER_BUILD_ID
 * record): the build-id perf found for a file it saw samples in. */
struct et_pd_buildid {
	int32_t pid;
	uint16_t cpumode;
	const uint8_t *id;
	size_t len;
	const char *path;
};

struct et_pd_info {
	size_t nattrs;                 /* events */
	uint64_t records, samples;     /* records in the data, samples among them */
	uint64_t lost;                 /* samples the kernel said it lost */
	bool pipe;                     /* written to a pipe (perf record -o -) */
};

struct et_pd_ops {
	void *ctx;
	void (*buildid)(void *ctx, const struct et_pd_buildid *b);   /* all before any event */
	void (*event)(void *ctx, const struct et_pd_event *e);
};

/* Does buf start as a perf.data does ("PERFILE2", either byte order)? */
bool et_perfdata_is(const void *buf, size_t len);
/* Reads the perf.data in buf: ops->buildid for every stored build-id, then
 * ops->event for every record of those kinds, in time order.  0; or -1
 * with err set (what is wrong, and where).  Allocates its index of the
 * records (freed before it returns). */
int et_perfdata_read(const void *buf, size_t len, const struct et_pd_ops *ops, struct et_pd_info *info,
                     char *err, size_t errcap);

#endif
