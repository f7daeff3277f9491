/*
 * interpose/ns.c — unshare, setns, chroot and prctl, for
 * ENORMOUSTEXT_DEFER's worker (runtime/defer.c).
 *
 * unshare(CLONE_NEWUSER) and setns into a user namespace fail with EINVAL
 * in a process with more than one thread, and after chroot or a change of
 * mount namespace the worker would read another /proc: a program that was
 * single-threaded without the library must stay so when it makes one of
 * these calls.  So the worker, if there is one, stands down (still
 * waiting: its work is not done) or is waited for (working) and has ended
 * before the call goes to libc.  Without a worker, one atomic load.
 *
 * prctl(PR_SET_SECCOMP) (a filter, or strict mode) may make any call of
 * the library's fatal from then on: everything of the library's that
 * makes calls stands down before it goes through (runtime/sandbox.c).
 * prctl(PR_SET_MDWE) refuses what a copy needs: noted, so that only
 * zero-copy is tried afterwards.
 *
 * prctl(PR_SET_THP_DISABLE, 1) ends what the worker can do: from then on
 * no huge page is made for the process (MariaDB and Redis make this call
 * early in main, for their data).  Without the deferral the text is moved
 * before main; with it, a worker that has not finished does all its work
 * first (et_defer_hurry: unpaced, the caller waits), so a deferred server
 * ends as the immediate one does.  Every other prctl goes straight on.
 *
 * Each wrapper ends in a sibling call to libc's function (the argument
 * lists are the same, so the compiler jumps rather than calls): libc's
 * function returns straight to the program, and the call is the
 * program's to whatever looks at return addresses (a seccomp supervisor
 * such as tests/fault/faultrun.c, a profiler).  prctl is defined with its
 * five arguments, not `...`: on x86-64 and AArch64 (Linux) a variadic
 * call passes integer arguments where a fixed one does, and libc's prctl
 * reads exactly these four more.  The next definitions are found at the
 * first call, by os/next.c's own lookup where the C library is glibc (no
 * lock, no allocation: prctl is called in vfork children and after fork,
 * PR_SET_PDEATHSIG, where a dlsym is not safe), and in a constructor
 * elsewhere (dlsym).
 *
 * Owns: those symbols as the program sees them.
 * May call: the next definition of each (libc's), runtime/defer.h,
 * runtime/sandbox.h.
 * Never: changes what the call does, returns or leaves in errno; is called
 * by the library itself (its own prctl calls are system calls: os/).
 */
#include "interpose/interpose.h"
#include "runtime/defer.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <sched.h>
#include <unistd.h>

/* <linux/prctl.h>'s number; <sys/prctl.h> would declare prctl with `...` */
#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41
#endif
#ifndef PR_SET_SECCOMP
#define PR_SET_SECCOMP 22
#endif
#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#endif

typedef int (*int_fn)(int);
typedef int (*setns_fn)(int, int);
typedef int (*path_fn)(const char *);
typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);

static void *g_unshare, *g_setns, *g_chroot, *g_prctl;

#ifndef __GLIBC__
__attribute__((constructor)) static void ns_resolve(void)
{
	(void)next_symbol(&g_unshare, "unshare");
	(void)next_symbol(&g_setns, "setns");
	(void)next_symbol(&g_chroot, "chroot");
	(void)next_symbol(&g_prctl, "prctl");
}
#endif

ET_EXPORT int unshare(int flags)
{
	int_fn next = (int_fn)next_symbol(&g_unshare, "unshare");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	et_defer_stand_down("unshare");
	return next(flags);
}

ET_EXPORT int setns(int fd, int nstype)
{
	setns_fn next = (setns_fn)next_symbol(&g_setns, "setns");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	et_defer_stand_down("setns");
	return next(fd, nstype);
}

ET_EXPORT int chroot(const char *path)
{
	path_fn next = (path_fn)next_symbol(&g_chroot, "chroot");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	et_defer_stand_down("chroot");
	return next(path);
}

ET_EXPORT int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5);
int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
	prctl_fn next = (prctl_fn)next_symbol(&g_prctl, "prctl");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if (option == PR_SET_THP_DISABLE && a2 != 0) {
		et_defer_hurry("prctl(PR_SET_THP_DISABLE)");
	} else if (option == PR_SET_SECCOMP) {
		int saved = errno;
		et_sandbox_entering("prctl(PR_SET_SECCOMP)");
		errno = saved;
	} else if (option == PR_SET_MDWE && (a2 & 1)) {
		et_sandbox_mdwe_set();
	}
	return next(option, a2, a3, a4, a5);
}
