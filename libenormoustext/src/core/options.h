/*
 * core/options.h — the ENORMOUSTEXT_* variables: one table (options.c)
 * holds every name, default and what each accepts; the parsers turn the
 * environment into struct et_options.  Pure: no process state.
 */
#ifndef ET_CORE_OPTIONS_H
#define ET_CORE_OPTIONS_H

#include "core/base.h"

enum et_backend {
	ET_BACKEND_AUTO = 0,
	ET_BACKEND_FILE,     /* zero-copy: the file itself, mapped with 2 MiB entries */
	ET_BACKEND_THP,
	ET_BACKEND_COLLAPSE,
	ET_BACKEND_HUGETLB,
	ET_BACKEND_NONE,     /* internal: "none worked" */
	ET_BACKEND__COUNT
};

/* ENORMOUSTEXT_MODE: Alibaba Cloud Linux's text-on-huge-pages modes 1, 2 and 3
 * are these bits. */
enum { ET_MODE_TEXT = 1, ET_MODE_JIT = 2 };

enum et_option_id {
	ET_OPT_ENABLE = 0,   /* ENORMOUSTEXT */
	ET_OPT_VERBOSE,      /* ENORMOUSTEXT_VERBOSE */
	ET_OPT_BACKEND,      /* ENORMOUSTEXT_BACKEND */
	ET_OPT_INCLUDE,      /* ENORMOUSTEXT_INCLUDE */
	ET_OPT_EXCLUDE,      /* ENORMOUSTEXT_EXCLUDE */
	ET_OPT_MIN_BYTES,    /* ENORMOUSTEXT_MIN_BYTES */
	ET_OPT_REPORT,       /* ENORMOUSTEXT_REPORT */
	ET_OPT_PAD_THRESHOLD,/* ENORMOUSTEXT_PAD_THRESHOLD */
	ET_OPT_PERFMAP,
	ET_OPT_PRIME,        /* ENORMOUSTEXT_PRIME */
	ET_OPT_PROFILE,      /* ENORMOUSTEXT_PROFILE */
	ET_OPT_HOT_COVERAGE, /* ENORMOUSTEXT_HOT_COVERAGE */
	ET_OPT_HOT_BUDGET,   /* ENORMOUSTEXT_HOT_BUDGET */
	ET_OPT_PROFILE_STRICT,/* ENORMOUSTEXT_PROFILE_STRICT */
	ET_OPT_RECORD,       /* ENORMOUSTEXT_RECORD */      /* ENORMOUSTEXT_PERFMAP */
	ET_OPT_DEFER,        /* ENORMOUSTEXT_DEFER */
	ET_OPT_DEFER_RATE,   /* ENORMOUSTEXT_DEFER_RATE */
	ET_OPT_HOT,          /* ENORMOUSTEXT_HOT */
	ET_OPT_TOP_ONLY,     /* ENORMOUSTEXT_TOP_ONLY */
	ET_OPT_MODE,         /* ENORMOUSTEXT_MODE */
	ET_OPT_SECCOMP,      /* ENORMOUSTEXT_SECCOMP */
	ET_OPT_COPY_MIN,     /* ENORMOUSTEXT_COPY_MIN */
	ET_OPT_DEFER_ON,     /* ENORMOUSTEXT_DEFER_ON */
	ET_OPT__COUNT
};

struct et_options {
	bool enabled;
	int verbose;               /* 0..3 */
	bool verbose_set;          /* ENORMOUSTEXT_VERBOSE given and valid */
	enum et_backend backend;
	const char *include;       /* colon-separated globs, NULL = everything */
	const char *exclude;       /* colon-separated globs, NULL = nothing */
	uint64_t min_bytes;
	uint64_t pad_threshold;    /* pad partial windows with more text than this; 0 never */
	const char *report;        /* path or NULL */
	bool perfmap;              /* write /tmp/perf-PID.map for moved text */
	bool prime;                /* copied windows: drop their small page cache, read back huge */
	bool prime_sync;           /* ... writing a file's dirty pages out first (PRIME=1; not auto) */
	const char *profile;       /* hot windows only, from this profile (NULL: all) */
	unsigned hot_coverage;     /* percent of the samples the chosen windows cover */
	uint64_t hot_budget;       /* at most this many bytes of windows (0: no limit) */
	bool profile_strict;       /* objects the profile does not have are left alone */
	const char *record;        /* write a profile of this process here at exit */
	uint64_t defer_ns;         /* start-up work on a worker after this long (0: in the constructor) */
	bool defer_main;           /* ENORMOUSTEXT_DEFER_ON=main: the deferred work on the program's own thread
	                              while it is single-threaded, not on a worker thread */
	uint64_t defer_rate;       /* the worker copies at most this many bytes a second (0: no limit) */
	bool hot_auto;             /* ENORMOUSTEXT_HOT=auto: sample during the deferral, move the hot windows */
	bool top_only;             /* this process only: the preload leaves LD_PRELOAD for its children */
	unsigned mode;             /* ET_MODE_TEXT | ET_MODE_JIT (modes 1, 2, 3) */
	bool seccomp_trust;        /* ENORMOUSTEXT_SECCOMP=trust: act under a seccomp filter */
	uint64_t copy_min;         /* a deferred pass copies a window only if this much of it has run (0: every one) */
};

/* How one option is described: the table in options.c is the only place
 * that knows names, defaults and what each accepts. */
struct et_option_desc {
	/* Arrays, not pointers: a table of pointers needs a relocation per
	 * entry when the library loads, in every process it is preloaded into. */
	char name[32];
	char def[8];               /* default, as text */
	char accepts[48];          /* for the warning: what the variable accepts */
	char help[72];
};

/* getenv-like lookup, so that tests can feed their own environment. */
typedef const char *(*et_getenv_fn)(const char *name, void *ctx);

/* Parse the options; each bad value calls warn(name, value, accepts) once and
 * leaves the default in place.  Returns the number of bad values. */
typedef void (*et_warn_fn)(const char *name, const char *value, const char *accepts, void *ctx);
ET_HIDDEN int et_options_parse(struct et_options *o, et_getenv_fn get, et_warn_fn warn, void *ctx);
/* The options with no variable set: the table's defaults (the only place
 * that holds them). */
ET_HIDDEN void et_options_defaults(struct et_options *o);
ET_HIDDEN const struct et_option_desc *et_option_table(size_t *count);
/* The variable the project's command reads for the library to preload
 * (`enormoustext run`, `record`): not an option of the library, but known
 * to it (et_option_known), so that exporting it draws no warning. */
#define ET_OPTION_LIB_VAR "ENORMOUSTEXT_LIB"
/* Is this environment entry ("NAME=value") one of the table's variables,
 * or one the project's command reads (ET_OPTION_LIB_VAR)? */
ET_HIDDEN bool et_option_known(const char *entry);
/* The table's name nearest to `name` (edit distance, case ignored), for a
 * warning; NULL when none is within a few letters. */
ET_HIDDEN const char *et_option_nearest(const char *name);
ET_HIDDEN int et_parse_size(const char *s, uint64_t *out);       /* K/M/G suffixes */
ET_HIDDEN int et_parse_bool(const char *s, bool *out);
/* "0", or an integer with "ms" or "s" (at most a day), in nanoseconds. */
ET_HIDDEN int et_parse_duration(const char *s, uint64_t *ns);
ET_HIDDEN const char *et_backend_name(enum et_backend b);
ET_HIDDEN int et_parse_backend(const char *s, enum et_backend *out);
/* fnmatch(pattern, s, 0) for the pattern's n bytes (core/options.c). */
ET_HIDDEN bool et_glob_match(const char *pattern, size_t n, const char *s);
/* Does `path` match one of the colon-separated globs (full path or basename)? */
ET_HIDDEN bool et_glob_list_match(const char *globs, const char *path);
#endif
