/*
 * runtime/sandbox.h — the process's sandbox, as far as it decides whether
 * the library may make its own system calls (sandbox.c).
 */
#ifndef ET_RUNTIME_SANDBOX_H
#define ET_RUNTIME_SANDBOX_H

#include "core/base.h"

/* May the library make system calls the program never makes, on this
 * thread, now?  No once a seccomp filter or strict mode is in force (read
 * from /proc/thread-self/status, or told by a wrapper before one went in):
 * a filter may kill for any call it was not written for.  *why (may be
 * NULL) names what stood the library down. */
ET_HIDDEN bool et_sandbox_blocks(const char **why);
/* ENORMOUSTEXT_SECCOMP=trust: filters are taken to allow the library's
 * calls; nothing here stands it down.  Set by the constructor. */
ET_HIDDEN void et_sandbox_trust(bool trust);
/* Without reading anything: has a wrapper or an earlier check seen one? */
ET_HIDDEN bool et_sandbox_known(void);
/* A wrapper (interpose/): the program is about to install a seccomp
 * filter, or enter strict mode, with `what`.  Everything of the library's
 * that makes system calls stands down first: the deferred worker ends,
 * JIT advice stops, sampling stops; one line at verbosity 1 names `what`.
 * After this the library makes no system call the program did not ask for. */
ET_HIDDEN void et_sandbox_entering(const char *what);
/* Memory-deny-write-execute (prctl PR_SET_MDWE, Linux 6.3; systemd's
 * MemoryDenyWriteExecute= on newer systemd): no mapping that was writable
 * may become executable, so no copy can be made; zero-copy still works. */
ET_HIDDEN bool et_sandbox_mdwe(void);
/* A wrapper saw prctl(PR_SET_MDWE) go through. */
ET_HIDDEN void et_sandbox_mdwe_set(void);
/* A security module refused to make a written copy executable (mprotect
 * PROT_EXEC: EACCES, as SELinux does for a domain without execmem): every
 * later copy would be refused the same way, so none is tried; zero-copy
 * still works.  Set by remap.c at the first refusal, for the process. */
ET_HIDDEN bool et_sandbox_exec_refused(void);
ET_HIDDEN void et_sandbox_exec_refused_set(void);
/* Stand-down hooks the sandbox calls (set once, by the modules that have
 * something to stop). */
ET_HIDDEN void et_sandbox_on_entering(void (*fn)(const char *what));

#endif
