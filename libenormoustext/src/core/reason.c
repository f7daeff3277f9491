/*
 * core/reason.c — why something stayed small, as the report, the log and
 * the API say it.  One text per enum et_reason (core/object.h).  Pure.
 */
#include "core/object.h"

/* Arrays, not pointers: no load-time relocations (see options.c). */
static const char reason_texts[ET_R__COUNT][72] = {
	[ET_R_NONE] = "",
	[ET_R_OFF] = "turned off (ENORMOUSTEXT=0)",
	[ET_R_SECURE] = "secure-execution process (setuid/setgid/capabilities): nothing done",
	[ET_R_VDSO] = "the vdso",
	[ET_R_SELF] = "libenormoustext itself",
	[ET_R_TEXTREL] = "has text relocations",
	[ET_R_EXCLUDED] = "excluded by ENORMOUSTEXT_EXCLUDE",
	[ET_R_NOT_INCLUDED] = "not matched by ENORMOUSTEXT_INCLUDE",
	[ET_R_MIN_BYTES] = "less eligible text than ENORMOUSTEXT_MIN_BYTES",
	[ET_R_NO_WINDOW] = "no whole huge-page window inside its text",
	[ET_R_NOT_READABLE] = "text segment is not plain read+execute",
	[ET_R_MAPPING] = "the window is not one private read+execute file mapping",
	[ET_R_ALREADY_HUGE] = "already huge (file-backed)",
	[ET_R_NO_BACKEND] = "no backend can get huge pages here",
	[ET_R_NOMEM] = "could not map the replacement",
	[ET_R_NOT_HUGE] = "the copy did not land on a huge page",
	[ET_R_MREMAP] = "mremap refused the swap",
	[ET_R_UNVERIFIED] = "smaps did not confirm it huge",
	[ET_R_SCRATCH] = "could not get working memory",
	[ET_R_PATCHED] = "the text was changed in memory (breakpoint or uprobe)",
	[ET_R_LOCKED] = "the text is locked in memory (mlock)",
	[ET_R_NOT_CONGRUENT] = "address and file offset differ modulo the huge page size",
	[ET_R_FILE_SMALL] = "the page cache holds this part of the file in small pages",
	[ET_R_FILE_CHANGED] = "the file at the object's path is not the one mapped",
	[ET_R_PAD_NOT_FREE] = "the rest of the partial window is not free",
	[ET_R_COLD] = "cold: not among the hot windows (ENORMOUSTEXT_PROFILE or _HOT=auto)",
	[ET_R_NOT_PROFILED] = "not in ENORMOUSTEXT_PROFILE (ENORMOUSTEXT_PROFILE_STRICT)",
	[ET_R_PROFILE] = "ENORMOUSTEXT_PROFILE cannot be used: nothing moved",
	[ET_R_MEMCG] = "memcg: a copy would bring the memory cgroup near its limit",
	[ET_R_SMAPS] = "could not read /proc/self/smaps",
	[ET_R_FORKED] = "forked while another thread ran a pass: this child lists nothing",
	[ET_R_RLIMIT_AS] = "RLIMIT_AS leaves too little address space: nothing done",
	[ET_R_PMD_TOO_LARGE] = "huge pages larger than 32 MiB: too large for text, nothing done",
	[ET_R_PACED] = "waiting for the worker's next piece (ENORMOUSTEXT_DEFER_RATE)",
	[ET_R_MODE] = "file text left alone (ENORMOUSTEXT_MODE=2: JIT code only)",
	[ET_R_SANDBOX] = "a seccomp filter is in force: the library makes no call of its own",
	[ET_R_MDWE] = "memory-deny-write-execute: a copy cannot be made executable",
	[ET_R_STOOD_DOWN] = "the deferred worker stood down before this window",
	[ET_R_UNLOADED] = "objects were unloaded during the pass: left for the next one",
	[ET_R_LITTLE_RUN] = "too little of it has run for a copy to pay (ENORMOUSTEXT_COPY_MIN)",
	[ET_R_EXEC_REFUSED] = "a copy may not be made executable (EACCES: SELinux execmem?)",
	[ET_R_ENDED_FIRST] = "ended before the deferral (ENORMOUSTEXT_DEFER): nothing moved",
};

const char *et_reason_text(enum et_reason r)
{
	return (unsigned)r < ET_R__COUNT ? reason_texts[r] : "?";
}
