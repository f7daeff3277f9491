/*
 * internal.h — types and functions shared by the stages of the pipeline:
 *
 *   options ─▶ sysinfo ─▶ objects ─▶ plan ─▶ remap ─▶ verify (smaps) ─▶ report
 *
 * Every internal non-static name starts with `et_`.  Nothing here is
 * exported from the shared object (-fvisibility=hidden).
 *
 * Memory: the library may run before malloc is usable (or with a replaced
 * malloc), so nothing on these paths allocates with malloc; tables live in
 * anonymous mappings (et_scratch_*), text is formatted into stack buffers.
 */
#ifndef ET_INTERNAL_H
#define ET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdarg.h>

#include "enormoustext.h"

#define ET_HIDDEN __attribute__((visibility("hidden")))

/* ELF segment flags, without pulling <elf.h> into every file. */
#define PF_X_FLAG 0x1
#define PF_W_FLAG 0x2
#define PF_R_FLAG 0x4

/* ---------------------------------------------------------------- options */

enum et_backend {
	ET_BACKEND_AUTO = 0,
	ET_BACKEND_FILE,     /* zero-copy: the file itself, mapped with 2 MiB entries */
	ET_BACKEND_THP,
	ET_BACKEND_COLLAPSE,
	ET_BACKEND_HUGETLB,
	ET_BACKEND_NONE,     /* internal: "none worked" */
	ET_BACKEND__COUNT
};

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
	const char *profile;       /* hot windows only, from this profile (NULL: all) */
	unsigned hot_coverage;     /* percent of the samples the chosen windows cover */
	uint64_t hot_budget;       /* at most this many bytes of windows (0: no limit) */
	bool profile_strict;       /* objects the profile does not have are left alone */
	const char *record;        /* write a profile of this process here at exit */
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
ET_HIDDEN const struct et_option_desc *et_option_table(size_t *count);
/* Is this environment entry ("NAME=value") one of the table's variables,
 * or one the project's command reads (ENORMOUSTEXT_LIB)? */
ET_HIDDEN bool et_option_known(const char *entry);
/* The table's name nearest to `name` (edit distance, case ignored), for a
 * warning; NULL when none is within a few letters. */
ET_HIDDEN const char *et_option_nearest(const char *name);
ET_HIDDEN int et_parse_size(const char *s, uint64_t *out);       /* K/M/G suffixes */
ET_HIDDEN int et_parse_bool(const char *s, bool *out);
ET_HIDDEN const char *et_backend_name(enum et_backend b);
ET_HIDDEN int et_parse_backend(const char *s, enum et_backend *out);
/* Does `path` match one of the colon-separated globs (full path or basename)? */
ET_HIDDEN bool et_glob_list_match(const char *globs, const char *path);

/* --------------------------------------------------------------------- log */

/* Level 0 = warnings (shown unless the user set ENORMOUSTEXT_VERBOSE=0),
 * 1 = summary, 2 = per object, 3 = debug.  One line, "enormoustext: " prefix,
 * written with a single write(2) to stderr; errno is preserved. */
ET_HIDDEN void et_log_setup(int verbose, bool silenced);
ET_HIDDEN bool et_log_enabled(int level);
ET_HIDDEN void et_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* errno as text, without strerror (see log.c); buf is used for rare codes. */
ET_HIDDEN const char *et_errno_text(int e, char buf[24]);

/* ---------------------------------------------------------------- sysinfo */

enum et_thp_mode { ET_THP_UNKNOWN = 0, ET_THP_ALWAYS, ET_THP_MADVISE, ET_THP_NEVER };
enum et_defrag_mode {
	ET_DEFRAG_UNKNOWN = 0, ET_DEFRAG_ALWAYS, ET_DEFRAG_DEFER,
	ET_DEFRAG_DEFER_MADVISE, ET_DEFRAG_MADVISE, ET_DEFRAG_NEVER
};

struct et_sysinfo {
	uint64_t pmd_size;          /* hpage_pmd_size, 2 MiB if unreadable */
	bool pmd_size_read;
	enum et_thp_mode thp;
	enum et_defrag_mode defrag;
	bool thp_disabled_process;  /* PR_GET_THP_DISABLE */
	long hugetlb_free;          /* free pages of pmd_size in the pool, -1 unknown */
	long hugetlb_total;
	bool policy_read;           /* et_sysinfo_read_policy has run */
};

/* Read the system facts under `root` ("" or "/" for the real system, a
 * directory of the same shape for tests).  Never fails: unknown stays unknown. */
ET_HIDDEN void et_sysinfo_read(struct et_sysinfo *si, const char *root);
/* The two halves of et_sysinfo_read: the PMD size (resets *si first), and
 * the policy and pool (read only when there is something to move). */
ET_HIDDEN void et_sysinfo_read_pmd(struct et_sysinfo *si, const char *root);
ET_HIDDEN void et_sysinfo_read_policy(struct et_sysinfo *si, const char *root);
ET_HIDDEN const char *et_thp_mode_name(enum et_thp_mode m);
ET_HIDDEN const char *et_defrag_mode_name(enum et_defrag_mode m);

/* The order `auto` tries backends in, given the facts; returns the count
 * (0 when nothing can work) and, in *why, a reason when it is 0 or short. */
ET_HIDDEN int et_backend_chain(const struct et_sysinfo *si, enum et_backend requested,
                               enum et_backend out[4], const char **why);

/* Small helpers for reading one-line files without stdio. */
ET_HIDDEN long et_read_file(const char *path, char *buf, size_t cap);
/* Under a finite RLIMIT_AS, is there room to work without taking what the
 * program may need?  (util.c: the rule and its margin.) */
ET_HIDDEN bool et_as_headroom_ok(void);

/* ---------------------------------------------------------------- objects */

#define ET_MAX_SEGS 8

struct et_segment {
	uint64_t start;    /* run-time address of the executable PT_LOAD */
	uint64_t end;      /* start + p_memsz */
	uint64_t offset;   /* p_offset (file) */
	uint32_t flags;    /* PF_R/PF_W/PF_X */
};

enum et_reason {
	ET_R_NONE = 0,
	ET_R_OFF,             /* ENORMOUSTEXT=0 */
	ET_R_SECURE,          /* AT_SECURE */
	ET_R_VDSO,
	ET_R_SELF,
	ET_R_TEXTREL,
	ET_R_EXCLUDED,
	ET_R_NOT_INCLUDED,
	ET_R_MIN_BYTES,
	ET_R_NO_WINDOW,       /* no whole PMD window inside the text */
	ET_R_NOT_READABLE,    /* execute-only or writable text */
	ET_R_MAPPING,         /* the window is not one plain r-x mapping */
	ET_R_ALREADY_HUGE,    /* the kernel already maps it huge (file) */
	ET_R_NO_BACKEND,      /* no backend can work here (policy, pool) */
	ET_R_NOMEM,           /* replacement could not be mapped */
	ET_R_NOT_HUGE,        /* the replacement did not land on a huge page */
	ET_R_MREMAP,          /* the swap itself failed */
	ET_R_UNVERIFIED,      /* swapped but smaps did not confirm */
	ET_R_SCRATCH,         /* the library could not get working memory */
	ET_R_PATCHED,         /* the text was changed in memory (breakpoint, uprobe) */
	ET_R_LOCKED,          /* the text is mlock'ed */
	ET_R_NOT_CONGRUENT,   /* file backend: address and file offset differ modulo H */
	ET_R_FILE_SMALL,      /* file backend: the page cache holds the window in small pages */
	ET_R_FILE_CHANGED,    /* file backend: the file at the path is not the one mapped */
	ET_R_PAD_NOT_FREE,    /* padding: the rest of the window is not free address space */
	ET_R_COLD,            /* profile: not among the hot windows */
	ET_R_NOT_PROFILED,    /* profile (strict): the profile does not have this object */
	ET_R_PROFILE,         /* profile: unusable, so nothing is moved */
	ET_R_MEMCG,           /* a copy would bring the memory cgroup too near its limit */
	ET_R_SMAPS,           /* /proc/self/smaps could not be read (memory or access) */
	ET_R_FORKED,          /* forked while another thread ran a pass: the child's table is empty */
	ET_R_RLIMIT_AS,       /* RLIMIT_AS leaves too little address space to work in */
	ET_R_PMD_TOO_LARGE,   /* huge pages larger than ET_PMD_MAX (64 KiB-page arm64: 512 MiB) */
	ET_R__COUNT
};
/* reason_mask holds one bit per reason */
_Static_assert(ET_R__COUNT <= 64, "more reasons than reason_mask has bits");
ET_HIDDEN const char *et_reason_text(enum et_reason r);

struct et_object {
	char path[4096];              /* whole: include/exclude match on it */
	char build_id[41];
	uint64_t base;
	uint64_t phdr;                /* address of its program headers: with base, its identity */
	bool foreign;                 /* found through a dlmopen namespace's link maps */
	struct et_segment segs[ET_MAX_SEGS];
	uint32_t nsegs;
	bool is_main;
	uint64_t map_lo, map_hi;      /* page-rounded span of all its PT_LOAD segments */
	uint64_t pad_lo[2], pad_hi[2];/* padding we mapped outside that span (freed at dlclose) */
	enum et_reason skip;          /* object-level skip, ET_R_NONE = considered */
	const char *skip_detail;      /* extra text for the reason, may be NULL */
	/* filled by the stages */
	uint32_t first_window, nwindows, windows_huge;
	uint64_t text_bytes, eligible_bytes, remapped_bytes, huge_bytes, elapsed_ns;
	uint64_t zero_copy_bytes;     /* huge straight from the file: nothing copied */
	uint64_t padded_bytes;        /* zero fill added beyond the text in padded windows */
	char *kinds;                  /* per window, what it became (et_window_kind), NUL-ended;
	                                 a scratch mapping of kinds_len bytes, or NULL */
	size_t kinds_len;
	enum et_backend backend;      /* most used */
	enum et_reason reason;        /* why something stayed small (the first reason) */
	uint64_t reason_mask;         /* every reason a window stayed small (1 << reason) */
	int err;                      /* errno of the first window that failed, 0 if none */
};

/* Fill objs (at most cap) from dl_iterate_phdr; returns how many objects
 * there are (call with cap = 0 to count).  *max_seg (if not NULL) gets the
 * size of the largest executable segment of the objects not filled in,
 * *text_bytes (if not NULL) the sum of their executable segments. */
ET_HIDDEN size_t et_objects_collect(struct et_object *objs, size_t cap, uint64_t *max_seg,
                                     uint64_t *text_bytes);
/* The same from a namespace's list of link maps (dlmopen: dl_iterate_phdr
 * only shows the caller's namespace).  Needs each object's ELF header at its
 * load address; objects without one are left out. */
struct link_map;
ET_HIDDEN size_t et_objects_collect_linkmap(const struct link_map *head, struct et_object *objs,
                                            size_t cap);
/* Is the object (found through a link map) still loaded where it was? */
ET_HIDDEN bool et_object_still_mapped(const struct et_object *o);
/* A size no PMD can be smaller than on this architecture, known without a
 * system call (0 when there is no such knowledge). */
ET_HIDDEN uint64_t et_pmd_size_floor(void);
/* The largest PMD size the library works with: 32 MiB (arm64 with 16 KiB
 * pages).  Above it (arm64 with 64 KiB pages: 512 MiB) a window is larger
 * than nearly all program text and a padded or copied one would cost
 * hundreds of MiB: nothing is moved, and the report says why. */
#define ET_PMD_MAX (32ull << 20)
ET_HIDDEN bool et_pmd_size_usable(uint64_t pmd);

/* --------------------------------------------------------------------- plan */

struct et_window {
	uint64_t addr;          /* PMD-aligned start */
	uint32_t object;        /* index into the object table */
	uint32_t seg;           /* index of the segment in the object */
	uint32_t prot;          /* PROT_* of the text */
	enum et_backend backend;/* what worked (after remap) */
	enum et_reason reason;  /* why it stayed small */
	int err;                /* errno of the step that failed, 0 if none */
	bool candidate;         /* planned and allowed: the remapper may move it */
	bool staged;            /* replacement ready (during a round) */
	bool remapped;          /* swapped in */
	bool file_huge;         /* the kernel already maps it huge from the file */
	bool huge;              /* confirmed by smaps */
	uint64_t slot;          /* staging address during remap (0 = none) */
	bool slot_lost;         /* the slot's range stopped being ours (failed MAP_FIXED) */
	/* the file behind the window (from smaps), for the file backend */
	uint64_t file_off;      /* offset in the file of `addr` */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool congruent;         /* file_off is a multiple of H */
	/* a padded window: only [copy_lo, copy_hi) holds text mapped now; the
	 * rest of the window is free address space that the copy fills with
	 * zeros (DESIGN section 1, pad_threshold) */
	bool pad;
	uint64_t copy_lo, copy_hi;
	/* ENORMOUSTEXT_PRIME: a copied window read back from its file */
	bool repriming, held_back;
	enum et_backend prev_backend;
	uint64_t claim_lo[2], claim_hi[2];   /* free parts reserved before the swap */
	/* ENORMOUSTEXT_PROFILE: samples in the window (0 without a profile),
	 * so that a budget (memcg) can keep the hottest */
	uint64_t heat;
	bool heat_known;
};

/* The pure planner: every PMD window [w, w+pmd) that lies wholly inside one
 * of the segments, in address order of the input.  Writes at most `cap`
 * windows and returns how many there are in all (so a caller can size its
 * table with a first call where cap = 0). */
ET_HIDDEN size_t et_plan_windows(const struct et_segment *segs, size_t nsegs,
                                 uint64_t pmd, uint32_t object,
                                 struct et_window *out, size_t cap);

/* Padded windows (pure, like et_plan_windows): for each segment, its first
 * and last partial window when the text in it is more than `threshold`
 * bytes (0 = never).  Fills addr, object, seg, pad, copy_lo/hi (the text
 * part).  Returns how many there are; writes at most cap. */
ET_HIDDEN size_t et_plan_pads(const struct et_segment *segs, size_t nsegs, uint64_t pmd,
                              uint64_t threshold, uint32_t object,
                              struct et_window *out, size_t cap);

/* ---------------------------------------------------------------- profile */

struct et_prof_obj {
	char build_id[41];
	uint32_t path_off, path_len;   /* the path hint, in et_profile.paths */
	uint32_t first, n;             /* its entries in et_profile.ents */
	uint64_t total;                /* its samples */
};

struct et_prof_ent {
	uint64_t vaddr;                /* granule start, in the object's ELF address space */
	uint64_t count;
};

struct et_profile {
	void *mem;                     /* one scratch mapping holding the tables */
	size_t mem_len;
	struct et_prof_obj *objs;
	size_t nobjs;
	struct et_prof_ent *ents;
	size_t nents;
	char *paths;
	uint64_t granule;
	/* The build-ids, hashed (open addressing, linear probing, at most half
	 * full): each slot is the hash's upper 32 bits << 32 | object index + 1,
	 * 0 = empty.  In mem; nslots is a power of two (0: no table). */
	uint64_t *slots;
	size_t nslots;
	uint64_t seed;                 /* of the hash: per profile, not guessable */
	char err[128];                 /* why it was refused: "line N: ..." */
};

/* Parse a profile held in memory (profile.c); 0, or -errno with p->err set
 * and nothing allocated. */
ET_HIDDEN int et_profile_parse(struct et_profile *p, const char *text, size_t len);
ET_HIDDEN int et_profile_load(struct et_profile *p, const char *path);
ET_HIDDEN void et_profile_free(struct et_profile *p);
/* The object with this build-id (lower-case hex, as the parser stores it),
 * or NULL: O(1) expected, a hash lookup. */
ET_HIDDEN const struct et_prof_obj *et_profile_find(const struct et_profile *p, const char *build_id);
ET_HIDDEN const char *et_profile_path(const struct et_profile *p, const struct et_prof_obj *o);
/* Samples of o in [lo, hi) of its address space: O(log n + the entries in
 * the range), so disjoint ranges (windows) cost O(n + windows log n). */
ET_HIDDEN uint64_t et_profile_heat(const struct et_profile *p, const struct et_prof_obj *o,
                                   uint64_t lo, uint64_t hi);

/* ------------------------------------------------------------------ smaps */

struct et_vma {
	uint64_t start, end, offset, inode;
	uint32_t dev_major, dev_minor;   /* of the file, 0:0 for anonymous */
	uint32_t prot;          /* PROT_* from the perms column */
	bool shared;            /* 's' */
	uint32_t path_off;      /* offset of the path in the string pool, 0 = none */
	uint64_t anon_huge, file_pmd, shmem_pmd, hugetlb;  /* bytes */
	uint64_t anonymous;     /* Anonymous: private copies of file pages (patched text) */
	uint64_t locked;        /* Locked: mlock'ed bytes */
};

struct et_smaps {
	struct et_vma *vmas;
	size_t count, cap;
	char *pool;             /* path strings, pool[0] = '\0' */
	size_t pool_len, pool_cap;
	void *mem;              /* the scratch mapping holding both */
	size_t mem_len;
	bool dropping;          /* the last header did not fit: skip its fields */
	bool truncated;         /* some VMAs did not fit (et_smaps_read_fd fails) */
};

/* Parse smaps text from fd into sm (which owns a scratch mapping sized for
 * up to `cap` VMAs).  0 or -errno.  Callable on any smaps-formatted file. */
ET_HIDDEN int et_smaps_read_fd(struct et_smaps *sm, int fd);
ET_HIDDEN int et_smaps_read(struct et_smaps *sm, const char *path);
ET_HIDDEN void et_smaps_free(struct et_smaps *sm);
ET_HIDDEN const struct et_vma *et_smaps_find(const struct et_smaps *sm, uint64_t addr);
ET_HIDDEN const char *et_vma_path(const struct et_smaps *sm, const struct et_vma *v);
ET_HIDDEN uint64_t et_vma_huge_bytes(const struct et_vma *v);

/* ------------------------------------------------------------------ remap */

struct et_run {
	struct et_options opt;
	struct et_sysinfo si;
	struct et_object *objs;
	size_t nobjs;
	struct et_window *wins;
	size_t nwins;
	uint64_t t0_ns, elapsed_ns;
	enum et_reason reason;         /* process-level reason (off, secure, ...) */
	const char *reason_detail;
	bool ran;
	bool quick;                    /* stopped after counting: no object has a
	                                  segment as large as a huge page */
	bool quick_lazy;               /* ... and the checks for later passes wait
	                                  for the first dlopen */
	bool again;                    /* windows already moved may move again */
	unsigned passes;               /* passes run so far (0: start-up) */
	uint64_t quick_text;           /* text bytes seen by that count */
};

/* Stage, verify and swap every planned window (see remap.c). */
ET_HIDDEN void et_remap_all(struct et_run *run, const enum et_backend *chain, int nchain);
/* Confirm from smaps what is huge; fills windows' `huge` and objects' figures. */
ET_HIDDEN void et_verify(struct et_run *run);

/* ----------------------------------------------------------------- report */

ET_HIDDEN void et_report_log(const struct et_run *run);
/* Add the functions in the pass's moved windows to /tmp/perf-PID.map
 * (perfmap.c; through outfile.c, the first pass of a process replacing what
 * is there).  Returns how many; a failure is logged there, naming the file
 * and why, and 0 returned. */
ET_HIDDEN int et_perfmap_write(const struct et_run *run);
/* et_perfmap_symbols (the functions of an ELF file in given ranges, as
 * perf-map lines) is declared with struct et_out, at the end. */
/* Per-object lines (ENORMOUSTEXT_VERBOSE=2) for objects [first, first+n). */
ET_HIDDEN void et_report_objects(const struct et_run *run, size_t first, size_t n);

/* ---------------------------------------------------------------- dlhooks */

/* Called by the dlopen/dlmopen wrappers after the loader returned a handle. */
ET_HIDDEN void et_after_dlopen(void);
/* After a dlopen that failed: as et_after_dlopen, but nothing that could
 * reset the loader's error text (dlerror) before the caller reads it. */
ET_HIDDEN void et_after_failed_dlopen(void);
/* Before a dlopen that goes to the loader untouched (dlhooks.c): what it
 * loads is moved by the next pass. */
ET_HIDDEN void et_after_untracked_dlopen(void);
/* After dlmopen: the objects of that namespace (head of its link maps). */
ET_HIDDEN void et_after_dlmopen(const struct link_map *head);
/* After the real dlclose: objects gone leave the table (at the next pass). */
ET_HIDDEN void et_after_dlclose(void);
ET_HIDDEN int et_report_json(const struct et_run *run, const char *path);
/* "%p" in a path becomes the process id; 0 or -ENAMETOOLONG. */
ET_HIDDEN int et_expand_path(const char *in, char *out, size_t cap);

/* ------------------------------------------------------------- record */

/* ENORMOUSTEXT_RECORD (record.c): sample this process's threads from now
 * on; the profile is written when the process exits. */
ET_HIDDEN void et_record_start(const char *path_template);
ET_HIDDEN void et_record_forget(void);   /* in a forked child: not its samples */
/* The timer fallback's hooks (dlhooks.c): whether new threads need a timer;
 * a start routine and its argument wrapped for et_record_thread_start (NULL:
 * no memory, start it as it is); a SIGPROF disposition the program sets. */
ET_HIDDEN bool et_record_threads_sampled(void);
ET_HIDDEN void *et_record_thread_wrap(void *(*fn)(void *), void *arg);
ET_HIDDEN void *et_record_thread_start(void *wrapped);
ET_HIDDEN void et_record_sigprof_change(const void *handler);

/* ----------------------------------------------------------------- util */

ET_HIDDEN void *et_scratch_alloc(size_t len);
ET_HIDDEN void et_scratch_free(void *p, size_t len);
ET_HIDDEN uint64_t et_now_ns(void);
ET_HIDDEN size_t et_strlcpy(char *dst, const char *src, size_t cap);
/* A build-id (at most 20 bytes) in lower-case hex. */
ET_HIDDEN void et_hex_build_id(const unsigned char *d, size_t n, char out[41]);

/* ---------------------------------------------------------------- outfile */

/* Writing a file the user named (outfile.c; the library and the command):
 * a regular file or nothing there is written beside and renamed into place
 * (new files 0600; a replaced one keeps its mode), a character device or a
 * FIFO is written as it is (a FIFO with no reader is skipped), a symbolic
 * link is followed as `>` would, anything else is refused.  No malloc, no
 * stdio stream, errno kept for the caller. */
#include <limits.h>
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

enum et_out_mode { ET_OUT_CLOSED = 0, ET_OUT_REPLACE, ET_OUT_DIRECT };
#define ET_OUT_NOFOLLOW 1u     /* a symbolic link at the path is left alone, not followed */
#define ET_OUT_FILES_ONLY 2u   /* only a regular file (or nothing) there: devices and FIFOs left alone */
#define ET_OUT_KEEP 4u         /* the new file starts with the content of the one it replaces */

struct et_out {
	int fd;                    /* what et_out_write writes to; -1 when closed */
	enum et_out_mode mode;
	int err;                   /* the first write error (errno), 0 none */
	bool skipped;              /* a FIFO with no reader: not an error, nothing written */
	bool existed;              /* ET_OUT_REPLACE: a regular file was there (dev, ino) */
	const char *type;          /* refused for what it is: "a directory", ...; NULL: errno says */
	const char *policy;        /* with type: the rule that refused it */
	uint64_t dev, ino;
	char path[PATH_MAX];       /* the file written (symbolic links followed) */
	char tmp[PATH_MAX];        /* ET_OUT_REPLACE: the temporary beside it */
};

/* 0, or -errno with nothing written (o->type says why where the path was
 * refused for what it is; o->skipped for a FIFO with no reader). */
ET_HIDDEN int et_out_open(struct et_out *o, const char *path, unsigned flags);
/* Write all of buf; 0 or -errno (kept: later writes fail the same). */
ET_HIDDEN int et_out_write(struct et_out *o, const void *buf, size_t n);
/* Close, and rename the temporary into place; 0 or -errno (on any error the
 * temporary is removed and the old file stays).  Also when the caller has
 * closed o->fd itself (set it to -1). */
ET_HIDDEN int et_out_commit(struct et_out *o);
/* Close and remove the temporary: the target is left as it was. */
ET_HIDDEN void et_out_abort(struct et_out *o);
/* "a directory (only ... is written)" when the path was refused for its
 * type (into buf), NULL when errno is the reason. */
ET_HIDDEN const char *et_out_why(const struct et_out *o, char *buf, size_t cap);
/* errno as text for these failures, without strerror (see et_errno_text). */
ET_HIDDEN const char *et_out_errno_text(int e, char buf[24]);
/* A perf-map line to out for each function of the ELF file `path` (loaded
 * at `base`) that overlaps one of the nranges ranges [ranges[2i],
 * ranges[2i+1]) (perfmap.c).  Returns how many; a write error stays in
 * out->err.  Only a regular file is read (a FIFO there never blocks), and
 * read, not mapped: a file cut short meanwhile gives fewer lines, no SIGBUS. */
ET_HIDDEN size_t et_perfmap_symbols(struct et_out *out, const char *path, uint64_t base,
                                    const uint64_t *ranges, size_t nranges);
/* ENORMOUSTEXT_REPORT written (et_report_json), and a failure logged here:
 * one line naming the path and why (the type refused, or errno), at
 * ENORMOUSTEXT_VERBOSE=1 only for a FIFO with no reader (report.c). */
ET_HIDDEN void et_report_write(const struct et_run *run);

/* ------------------------------------------------------------------ memcg */

/* memcg.c: how many bytes of anonymous copies the process's memory cgroups
 * still allow (DESIGN section 4b: a program that fits without the library
 * must fit with it).  Copies (thp, collapse) are charged to the group and,
 * without swap, cannot be reclaimed like the page-cache text they replace. */
#define ET_MEMCG_UNLIMITED UINT64_MAX

struct et_memcg {
	uint64_t budget;          /* bytes that may still be copied; ET_MEMCG_UNLIMITED: no limit */
	uint64_t limit, usage;    /* of the level that sets the budget (0, 0 when unlimited) */
	uint64_t margin;          /* kept back at that level (et_memcg_margin) */
	int version;              /* 1 or 2: the hierarchy of that level; 0 when unlimited */
	bool garbled;             /* that level's files could not be understood: budget 0 */
	bool hugetlb_charged;     /* cgroup2 memory_hugetlb_accounting: hugetlb pages count too */
	unsigned levels;          /* cgroup directories read, both hierarchies */
	char path[256];           /* that level's directory (without the root), may be cut short */
};

/* Read the process's memory cgroups under `root` ("" or "/" for the real
 * system; a directory of the same shape for tests: ROOT/proc/self/cgroup,
 * ROOT/proc/self/mountinfo, and the mount points it names under ROOT).
 * Never fails: what cannot be found is no limit.  No malloc, no stdio. */
ET_HIDDEN void et_memcg_read(struct et_memcg *m, const char *root);
/* What is kept back below a limit of `limit` bytes (see memcg.c). */
ET_HIDDEN uint64_t et_memcg_margin(uint64_t limit);
/* Of the windows in wins[0..n) marked held_back, the first `allowed` in
 * copy order (hottest first where heat_known, then the planner's order)
 * lose the mark; the others keep it.  Returns how many keep it.  Pure. */
ET_HIDDEN size_t et_memcg_keep_best(struct et_window *wins, size_t n, size_t allowed);

#endif
