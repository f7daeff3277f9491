/*
 * attrib.h — samples to profile counts: what `record` and `profile import`
 * share.  A sample is an address in a process (or an offset in a file);
 * the mappings the recording saw say which file holds it and where; the
 * file's program headers turn the file offset into an address in the
 * object's own ELF address space (what a profile stores); its build-id is
 * the key.  The counts, per (object, 64-byte granule), are written by
 * core/profile.c's writer.
 *
 * One set of tables per command run (the command runs once): et_attr_*
 * state is this file's, static.
 */
#ifndef ET_TOOL_ATTRIB_H
#define ET_TOOL_ATTRIB_H

#include "tool.h"

/* The files of a mapping are looked for as named, and, for a build-id the
 * file there no longer has, in perf's build-id cache ($PERF_BUILDID_DIR,
 * else ~/.debug: .build-id/XX/REST/elf).  live: a sample that no recorded
 * mapping covers may look in /proc/PID/maps (`record`, whose processes run
 * now; never an import, whose pids are another time's). */
void et_attr_init(bool live);
/* A new input: the mappings so far are forgotten (its pids are its own);
 * files and counts stay. */
void et_attr_new_source(void);

/* A mapping of pid: [addr, addr + len) holds path from file offset pgoff;
 * build_id (hex) when the recording said (NULL: the file's own).  A path
 * that does not start with '/' (anonymous memory, [vdso], the kernel) is
 * no file: its samples count as outside any file. */
void et_attr_map(uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff, const char *path,
                 const char *build_id);
/* n samples at ip in pid (pid ~0u: a mapping of every process, the kernel). */
void et_attr_sample(uint32_t pid, uint64_t ip, uint64_t n);

/* The file (path, build_id): an index for et_attr_offset (build_id NULL or
 * "": the file's own). */
int et_attr_file(const char *path, const char *build_id);
/* n samples at file offset off of file f. */
void et_attr_offset(int f, uint64_t off, uint64_t n);
/* n samples known to be outside any file (an address no mapping has). */
void et_attr_outside(uint64_t n);

struct et_attr_totals {
	uint64_t samples;       /* all of them */
	uint64_t outside;       /* in no file (anonymous, the kernel, the vdso) */
	uint64_t unfound;       /* in files not found here (by path or build-id) */
	uint64_t unplaced;      /* at offsets no PT_LOAD of their file holds */
	size_t files_unfound;   /* files with samples not found here */
	size_t objects;         /* objects the profile holds (after et_attr_write) */
};
void et_attr_totals(struct et_attr_totals *t);
/* "N samples (K outside any file)", and ", M left out" when some were
 * (see et_attr_say_unfound), into buf. */
void et_attr_summary(char *buf, size_t cap);
/* One line for each file with samples that was not found here (at most
 * four, then how many more), on stderr. */
void et_attr_say_unfound(void);

/* Writes the profile into t (opened here when t->f is NULL, then out
 * names it; stdout when out is NULL and t is NULL), closed and freed here
 * (t is malloc'd); comment
 * on its third line.  Objects whose samples could not be placed (their
 * file not found) are left out; the others that had none are written
 * without counts (the profile knows them: their text stays cold).  0, or
 * -1 after one line saying why. */
int et_attr_write(struct et_tool_out *t, const char *out, const char *comment);

#endif
