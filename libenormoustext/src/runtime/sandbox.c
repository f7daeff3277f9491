/*
 * runtime/sandbox.c — seccomp and memory-deny-write-execute, as they bear
 * on the library.
 *
 * A seccomp filter is written for the program's system calls; the library
 * makes calls the program never makes (mremap, madvise, perf_event_open,
 * pidfd_getfd, close_range...), and a filter whose action is to kill
 * (systemd's SystemCallFilter=, a sandbox a program installs itself) kills
 * the process for one of them.  A filter cannot be asked which calls it
 * allows, so the rule is simple: where one is in force, the library makes
 * no call of its own — it stands down, with a reason.  It finds out
 *   - before acting: the Seccomp: field of /proc/thread-self/status (0
 *     none, 1 strict, 2 filter), read with open/read/close, calls the
 *     loader itself has made to load the program (strict mode allows none
 *     of them, but it cannot be inherited over exec: only a program's own
 *     prctl or seccomp call enters it, which the wrappers see);
 *   - before a filter goes in later: the wrappers of prctl and syscall
 *     (interpose/) call et_sandbox_entering before passing the call on,
 *     and everything that would call on its own afterwards stops first —
 *     the deferred worker ends (it may be working: it stops between two
 *     windows), JIT advice stops, sampling stops.  A filter installed with
 *     an inline system call instruction is seen only at the next check.
 * ENORMOUSTEXT_SECCOMP=trust turns all of this off, for a filter known
 * to allow the library's calls (the fault harness's own, tests/fault/).
 * Memory-deny-write-execute only refuses what a copy needs (a mapping
 * that was writable made executable): zero-copy still works.
 *
 * Owns: the process's sandbox state.
 * May call: core (log), os (the status file read with system calls of its
 * own, prctl as a system call).
 * Never: makes a system call once a filter is known, but the status read
 * that finds one.
 */
#include "runtime/sandbox.h"

#include "core/log.h"
#include "os/os.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#ifndef PR_GET_MDWE
#define PR_GET_MDWE 66
#endif

static int g_state;             /* 0 unknown/none, 1 known sandboxed */
static bool g_trust;            /* ENORMOUSTEXT_SECCOMP=trust */
static const char *g_why = "";
static int g_mdwe;              /* 0 not read, 1 off, 2 on */
static void (*g_hooks[4])(const char *);

ET_STARTUP void et_sandbox_on_entering(void (*fn)(const char *what))
{
	for (size_t i = 0; i < sizeof g_hooks / sizeof g_hooks[0]; i++) {
		void (*none)(const char *) = NULL;
		if (__atomic_compare_exchange_n(&g_hooks[i], &none, fn, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
		    none == fn)
			return;
	}
}

ET_STARTUP void et_sandbox_trust(bool trust)
{
	g_trust = trust;
}

ET_STARTUP bool et_sandbox_known(void)
{
	return !g_trust && __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != 0;
}

/* The Seccomp: field of a status file: 0, 1, 2, or -1 unreadable.  Read
 * with the library's own calls (os/sys.c): on the start-up path of every
 * program with text to move. */
ET_STARTUP static int seccomp_mode(const char *path)
{
	char buf[4096];
	long n = et_os_read_small(path, buf, sizeof buf);
	if (n <= 0)
		return -1;
	buf[n < (long)sizeof buf ? n : (long)sizeof buf - 1] = '\0';
	/* (a loop of its own: strstr would be one more lazy binding and
	 * page of libc's) */
	static const char key[] = "\nSeccomp:";
	const char *p = buf;
	for (;; p++) {
		size_t i = 0;
		while (key[i] && p[i] == key[i])
			i++;
		if (!key[i])
			break;
		if (!*p)
			return 0;   /* a kernel without seccomp */
	}
	p += sizeof key - 1;
	while (*p == ' ' || *p == '\t')
		p++;
	return *p >= '0' && *p <= '9' ? *p - '0' : -1;
}

ET_STARTUP bool et_sandbox_blocks(const char **why)
{
	if (g_trust)
		return false;
	if (!et_sandbox_known()) {
		int m = seccomp_mode("/proc/thread-self/status");
		if (m < 0)
			m = seccomp_mode("/proc/self/status");   /* before Linux 3.17 */
		if (m > 0) {
			g_why = m == 1 ? "seccomp strict mode is in force" :
			                 "a seccomp filter is in force (it may kill for a call the program never makes)";
			__atomic_store_n(&g_state, 1, __ATOMIC_RELEASE);
		}
	}
	if (why)
		*why = g_why;
	return et_sandbox_known();
}

void et_sandbox_entering(const char *what)
{
	if (g_trust)
		return;
	bool was = __atomic_exchange_n(&g_state, 1, __ATOMIC_ACQ_REL) != 0;
	if (!was) {
		g_why = "the program installed a seccomp filter";
		et_log(1, "%s: a seccomp filter or strict mode goes in: the library stands down (no call of its own from now on)",
		       what);
	}
	for (size_t i = 0; i < sizeof g_hooks / sizeof g_hooks[0]; i++) {
		void (*fn)(const char *) = __atomic_load_n(&g_hooks[i], __ATOMIC_ACQUIRE);
		if (fn)
			fn(what);
	}
}

bool et_sandbox_mdwe(void)
{
	int m = __atomic_load_n(&g_mdwe, __ATOMIC_ACQUIRE);
	if (m == 0) {
		int saved = errno;
		long r = et_os_sys6(SYS_prctl, PR_GET_MDWE, 0, 0, 0, 0, 0);
		errno = saved;
		m = r > 0 ? 2 : 1;   /* -1 (EINVAL): a kernel without it */
		__atomic_store_n(&g_mdwe, m, __ATOMIC_RELEASE);
	}
	return m == 2;
}

void et_sandbox_mdwe_set(void)
{
	__atomic_store_n(&g_mdwe, 2, __ATOMIC_RELEASE);
}

static bool g_exec_refused;

bool et_sandbox_exec_refused(void)
{
	return __atomic_load_n(&g_exec_refused, __ATOMIC_ACQUIRE);
}

void et_sandbox_exec_refused_set(void)
{
	__atomic_store_n(&g_exec_refused, true, __ATOMIC_RELEASE);
}
