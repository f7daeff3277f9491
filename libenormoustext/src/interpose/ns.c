/*
 * interpose/ns.c — unshare, setns and chroot, for ENORMOUSTEXT_DEFER's
 * worker (runtime/defer.c).
 *
 * unshare(CLONE_NEWUSER) and setns into a user namespace fail with EINVAL
 * in a process with more than one thread, and after chroot or a change of
 * mount namespace the worker would read another /proc: a program that was
 * single-threaded without the library must stay so when it makes one of
 * these calls.  So the worker, if there is one, stands down (still
 * waiting: its work is not done) or is waited for (working) and has ended
 * before the call goes to libc.  Without a worker, one atomic load.
 *
 * Owns: those symbols as the program sees them.
 * May call: the next definition of each (libc's), runtime/defer.h.
 * Never: changes what the call does, returns or leaves in errno.
 */
#include "interpose/interpose.h"
#include "runtime/defer.h"

#include <errno.h>
#include <sched.h>
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
