/*
 * core/object.h — the plain data the stages hand on: a loaded object, its
 * executable segments, and why something of it stayed small (enum
 * et_reason; the texts in reason.c).  Filled by runtime/objects.c, read by
 * every stage after it.
 */
#ifndef ET_CORE_OBJECT_H
#define ET_CORE_OBJECT_H

#include "core/options.h"
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
	ET_R_PACED,           /* ENORMOUSTEXT_DEFER_RATE: waiting for a later piece of the worker's */
	ET_R_MODE,            /* ENORMOUSTEXT_MODE=2: anonymous executable memory only */
	ET_R_SANDBOX,         /* a seccomp filter (or strict mode) is in force: no call of ours */
	ET_R_MDWE,            /* memory-deny-write-execute: a copy cannot be made executable */
	ET_R_STOOD_DOWN,      /* the deferred worker stood down before this window */
	ET_R_UNLOADED,        /* the loader unloaded objects during the pass: tried again later */
	ET_R_LITTLE_RUN,      /* a deferred pass: too little of it has run for a copy to pay (COPY_MIN) */
	ET_R_EXEC_REFUSED,    /* mprotect(PROT_EXEC) of a written copy refused (EACCES): SELinux execmem? */
	ET_R_ENDED_FIRST,     /* the process ended before the deferral (ENORMOUSTEXT_DEFER) did */
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
	                                 a scratch mapping of kinds_len bytes, or NULL: then
	                                 kinds_inline holds them (up to 63 windows: no mapping
	                                 kept for the process's life, see runtime/report.c) */
	size_t kinds_len;
	char kinds_inline[64];
	enum et_backend backend;      /* most used */
	enum et_reason reason;        /* why something stayed small (the first reason) */
	uint64_t reason_mask;         /* every reason a window stayed small (1 << reason) */
	int err;                      /* errno of the first window that failed, 0 if none */
	/* ENORMOUSTEXT_DEFER_RATE (runtime/pass.c): some windows wait for a
	 * later piece; the next pass runs the object again, and its result
	 * replaces its entry of the table (`replaces`: 1 + that entry's index;
	 * 0: a new object) */
	bool paced;
	uint32_t replaces;
	/* runtime/remap.c, at a swap after the loader unloaded something
	 * since the pass read its list: this object is still loaded */
	bool still_loaded;
	/* ENORMOUSTEXT_PRIME: some of its windows are copies that could be
	 * zero-copy once the page cache holds them huge (other processes
	 * still mapped the small pages): the worker tries again later
	 * (runtime/pass.c), prime_tries times so far */
	bool prime_later;
	uint8_t prime_tries;
};

#endif
