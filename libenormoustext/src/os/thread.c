/*
 * os/thread.c — the library's own thread (the deferred worker,
 * runtime/defer.c): created with libc's pthread_create, past any wrapper of
 * it (this library's interpose/signals.c among them), with every signal
 * blocked from its first instruction, a small stack, and a name.
 *
 * Owns: how the thread is made.
 * May call: libc, os/next.c (libc's pthread_create).
 * Never: runs a program's signal handler on that thread; keeps state.
 */
#include "os/os.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* As with sigaction (os/perf.c): the next definition after this object is
 * libc's; a static program has no wrapper, and libc's is named by glibc's
 * other public name for it where there is one (tests/layout/modules.sh). */
#ifdef __GLIBC__
extern int __pthread_create_2_1(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)
	__attribute__((weak));
#endif

static create_fn libc_create(void)
{
	static void *real;
	create_fn fn = (create_fn)et_os_next(&real, "pthread_create");
#ifdef __GLIBC__
	if (!fn)
		fn = __pthread_create_2_1;
#endif
	return fn;
}

int et_os_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, size_t stack)
{
	create_fn create = libc_create();
	if (!create)
		return ENOSYS;
	pthread_attr_t attr;
	int e = pthread_attr_init(&attr);
	if (e)
		return e;
	if (stack)
		(void)pthread_attr_setstacksize(&attr, stack);
	/* The new thread inherits the creator's mask: block everything around
	 * the creation, so that no signal ever reaches it. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = create(t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return e;
}

long et_os_tid(void)
{
	return et_os_sys6(SYS_gettid, 0, 0, 0, 0, 0, 0);
}

bool et_os_thread_present(long tid)
{
	return et_os_sys6(SYS_tgkill, (long)getpid(), (long)tid, 0, 0, 0, 0) == 0 || errno != ESRCH;
}

void et_os_thread_name(const char *name)
{
	/* a system call, not prctl(): that name is the program's (interpose/ns.c) */
	(void)et_os_sys6(SYS_prctl, (long)PR_SET_NAME, (long)(unsigned long)name, 0, 0, 0, 0);
}
