/*
 * check_elf.h — the analysis behind `enormoustext check` (check_elf.c): can
 * the text of an ELF file go onto huge pages, how much of it, what would
 * make all of it.  For `check` and for `status --explain PROGRAM`.
 */
#ifndef ET_TOOL_CHECK_ELF_H
#define ET_TOOL_CHECK_ELF_H

#include "tool.h"

/* Why a file cannot be checked: a code, with a short name and a sentence
 * in one table (et_check_reason).  A caller that speaks of the failure in
 * its own words (status --explain) uses the code and the detail the
 * analysis wrote, never the text of check's error line. */
enum et_check_why {
	ET_CHECK_OK = 0,
	ET_CHECK_UNREADABLE,   /* cannot be opened, or a read failed */
	ET_CHECK_NOT_FILE,     /* a directory, FIFO or device */
	ET_CHECK_EMPTY,        /* no bytes at all */
	ET_CHECK_NOT_ELF,      /* no ELF magic */
	ET_CHECK_TRUNCATED,    /* a header or table past the end of the file */
	ET_CHECK_CORRUPT,      /* a header or table that no loader accepts */
	ET_CHECK_OBJECT,       /* a relocatable object file (.o) */
	ET_CHECK_CORE,         /* a core dump */
	ET_CHECK_NOTHING_LOADED, /* no program headers */
	ET_CHECK_CHANGED,      /* changed while it was read */
	ET_CHECK_NO_MEMORY,
	ET_CHECK_NWHY
};
struct et_check_reason {
	enum et_check_why code;
	const char *name;       /* short, for scripts: "truncated" */
	const char *sentence;   /* what it means, when no detail was written */
};
/* The table's entry for code (an unknown code: ET_CHECK_UNREADABLE's). */
const struct et_check_reason *et_check_reason(enum et_check_why code);
/* One failure: its code and the detail check's error line says after
 * "PATH: " ("truncated: the section header table at offset ..."). */
struct et_check_failure {
	enum et_check_why why;
	char words[512];
};

struct et_check_opts {
	uint64_t pmd_size;        /* H: huge page size to plan for */
	uint64_t page_size;       /* run-time page size (granularity of load bases) */
	uint64_t pad_threshold;   /* tails larger than this are worth padding */
	bool json;
	/* The linker scripts as this installation has them (the advice names
	 * them): for 2M pages, and for 32M (NULL: not found; the advice then
	 * says where they are installed). */
	const char *script_2m, *script_32m;
};

/* Analyse one ELF image held in memory (buf may be modified by libelf).
 * Writes the human-readable analysis to `out` (or one JSON value to `j`
 * when opts->json); on a bad or truncated file, writes nothing there and
 * one line naming `name` to `err`, and returns 1.  Returns 0 on success. */
int et_check_image(const char *name, void *buf, size_t len, const struct et_check_opts *opts,
                   FILE *out, struct et_json *j, FILE *err);
/* The same for a file on disk (read into private memory first). */
int et_check_path(const char *path, const struct et_check_opts *opts, FILE *out,
                  struct et_json *j, FILE *err);
/* What `check` finds in a file, as figures (for `status --explain`): 0, or
 * 1 with *fail set (its code and words; nothing is written anywhere). */
struct et_check_summary {
	uint64_t text_bytes;                 /* file bytes of the executable segments */
	uint64_t eligible_min, eligible_max; /* in whole windows, as glibc loads it */
	uint64_t eligible_aligned;           /* the same when loaded H-aligned */
	bool congruent;                      /* text address and file offset agree modulo H */
	bool file_backed;                    /* congruent and loaded aligned by p_align: can be mapped huge from the file */
	bool textrel, dso, pie;
	uint64_t pad_windows, pad_bytes;     /* tails the library pads at run time (copied) */
	unsigned machine, cls;
	char interp[256];
};
int et_check_summary(const char *path, const struct et_check_opts *opts,
                     struct et_check_summary *out, struct et_check_failure *fail);

#endif
