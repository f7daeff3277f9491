/*
 * stat.h — what `enormoustext stat` (stat.c) knows of each process, for
 * stat_print.c, which says it: stat.c parses the command line and reads
 * the processes' smaps into a pset, stat_print.c writes it as text, JSON
 * or Prometheus metrics.
 */
#ifndef ET_TOOL_STAT_H
#define ET_TOOL_STAT_H

#include "tool.h"

enum vclass { V_FILE, V_PSEUDO, V_ANON };

struct sobj {
	const char *path;       /* in the smaps string pool, or a literal */
	uint64_t inode;
	enum vclass cls;
	uint64_t text, copied, anon, file, shmem, hugetlb;
	unsigned maps;
};

struct sproc {
	long pid;
	char comm[64];
	struct sobj *objs;
	size_t nobjs, cap;
	uint64_t text, copied, anon, file, shmem, hugetlb;
};

struct stat_opts {
	bool json, summary, all, prometheus;
	const char *proc, *output;
};

/* Every process read is kept until all are (to be sorted, and, with
 * --prometheus, each family's samples written together): its figures,
 * and its objects with their paths copied out of the smaps pool.  With
 * --prometheus, only the objects with at least one huge page of text
 * (smaller ones cannot have a huge page: they count in the process's
 * figures only, which keeps the series few), merged by path (one series
 * per label set). */
struct pset {
	struct sproc *v;
	size_t n, cap;
	size_t unreadable;
};

/* The figures read, on out: the processes of set (sorted first with --all:
 * by huge bytes, largest first), as o asks; list: more than one process
 * was asked (a JSON array). */
void et_stat_print(FILE *out, struct pset *set, const struct stat_opts *o, bool list);

#endif
