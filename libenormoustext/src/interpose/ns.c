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
 * prctl(PR_SET_THP_DISABLE, 1) ends what the worker can do: from then on
 * no huge page is made for the process (MariaDB and Redis make this call
 * early in main, for their data).  Without the deferral the text is moved
 * before main; with it, a worker that has not finished does all its work
 * first (et_defer_hurry: unpaced, the caller waits), so a deferred server
 * ends as the immediate one does.  Every other prctl goes straight on.
 *
 * Owns: those symbols as the program sees them.
 * May call: the next definition of each (libc's), runtime/defer.h.
 * Never: changes what the call does, returns or leaves in errno.
 */
#include "interpose/interpose.h"
#include "runtime/defer.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <unistd.h>

typedef int (*int_fn)(int);
typedef int (*setns_fn)(int, int);
typedef int (*path_fn)(const char *);

ET_EXPORT int unshare(int flags)
{
	static void *real;
	int_fn next = (int_fn)next_symbol(&real, "unshare");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	et_defer_stand_down("unshare");
	return next(flags);
}

ET_EXPORT int setns(int fd, int nstype)
{
	static void *real;
	setns_fn next = (setns_fn)next_symbol(&real, "setns");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	et_defer_stand_down("setns");
	return next(fd, nstype);
}

ET_EXPORT int chroot(const char *path)
{
	static void *real;
	path_fn next = (path_fn)next_symbol(&real, "chroot");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	et_defer_stand_down("chroot");
	return next(path);
}

typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);

/* prctl takes up to four more arguments, each read as an unsigned long
 * (libc's own wrapper reads them the same way). */
ET_EXPORT int prctl(int option, ...)
{
	static void *real;
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	prctl_fn next = (prctl_fn)next_symbol(&real, "prctl");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if (option == PR_SET_THP_DISABLE && a2 != 0)
		et_defer_hurry("prctl(PR_SET_THP_DISABLE)");
	return next(option, a2, a3, a4, a5);
}
