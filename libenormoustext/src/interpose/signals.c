/*
 * interpose/signals.c — pthread_create and the ways to set a signal
 * disposition (sigaction, signal, sysv_signal, bsd_signal, sigset), for
 * ENORMOUSTEXT_RECORD's timer (runtime/record.c), ENORMOUSTEXT_DEFER's
 * tick (SIGURG, hidden from the program; a thread or a disposition of the
 * program's ends it) and count of the program's threads (runtime/defer.c);
 * a pthread_create
 * refused a task (EAGAIN) while the worker lives is made again once it has
 * given its task back (as fork: interpose/tasks.c).
 *
 * Owns: those symbols as the program sees them.
 * May call: the next definition of each (libc's), runtime/record.h's and
 * runtime/defer.h's hooks.
 * Never: changes what the program's call does or returns; the library's
 * own sigaction calls never come here (os/perf.c calls libc's).
 */
#include "interpose/interpose.h"
#include "runtime/defer.h"
#include "runtime/record.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/*
 * Threads.  A new thread of the program starts through thread_start when
 * something of the library's needs it to: ENORMOUSTEXT_RECORD's timer
 * (record.c: a CPU-time timer of its own before it runs its code), and
 * ENORMOUSTEXT_DEFER's count of the program's threads (defer.c: so that
 * the last one to end stands the worker down, and the process ends as it
 * would without it).  Otherwise pthread_create passes straight through.
 */
typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	bool sampled, counted;
};

static void *thread_start(void *p)
{
	struct thread_start ts = *(struct thread_start *)p;
	free(p);
	if (ts.sampled)
		et_record_thread_begins();
	if (ts.counted)
		et_defer_thread_begins();
	return ts.fn(ts.arg);
}

ET_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static void *real;
	pthread_create_fn next = (pthread_create_fn)next_symbol(&real, "pthread_create");
	if (!next)
		return EAGAIN;
	/* the deferral's tick runs on the program's only thread: with a
	 * second coming, a worker takes it over (runtime/defer.c) */
	et_defer_threads_coming();
	bool sampled = et_record_threads_sampled(), counted = et_defer_counts_threads();
	struct thread_start *w = sampled || counted ? malloc(sizeof *w) : NULL;
	if (!w) {
		int e = next(t, attr, fn, arg);
		/* at the task limit: the worker's task is the program's
		 * (interpose/tasks.c) */
		if (e == EAGAIN && et_defer_give_way("pthread_create found no task free (EAGAIN)"))
			e = next(t, attr, fn, arg);
		return e;
	}
	*w = (struct thread_start){ fn, arg, sampled, counted };
	if (counted)
		et_defer_thread_coming();
	int r = next(t, attr, thread_start, w);
	if (r == EAGAIN && et_defer_give_way("pthread_create found no task free (EAGAIN)")) {
		/* the worker is gone: no thread of the program's is counted now */
		if (counted)
			et_defer_thread_not_coming();
		counted = false;
		w->counted = false;
		r = next(t, attr, thread_start, w);
	}
	if (r != 0) {
		if (counted)
			et_defer_thread_not_coming();
		free(w);
	}
	return r;
}

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*sighandler_fn)(int);
typedef sighandler_fn (*signal_fn)(int, sighandler_fn);

/* The signals whose handler is the library's while it runs, not the
 * program's: the recorder's SIGPROF (runtime/record.c), the deferral's
 * tick's SIGURG (runtime/defer.c).  Is sig one of them now? */
static bool hidden(int sig)
{
	return (sig == SIGPROF && et_record_sigprof_hidden()) || (sig == SIGURG && et_defer_sigurg_hidden());
}

/* The program sets a disposition of its own for sig: the recorder and the
 * tick step aside (they hand over, or stop). */
static void program_sets(int sig, const void *handler)
{
	if (sig == SIGPROF)
		et_record_sigprof_change(handler);
	else if (sig == SIGURG && et_defer_sigurg_hidden())
		et_defer_sigurg_change(handler);
}

ET_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static void *real;
	sigaction_fn next = (sigaction_fn)next_symbol(&real, "sigaction");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if (__builtin_expect(hidden(sig), 0)) {
		/* the library's handler is not the program's: it is told the
		 * disposition it would have without the library, SIG_DFL */
		int r = 0;
		if (act) {
			program_sets(sig, (act->sa_flags & SA_SIGINFO) ? (const void *)act->sa_sigaction :
			                                                   (const void *)act->sa_handler);
			r = next(sig, act, NULL);
		}
		if (r == 0 && old) {
			memset(old, 0, sizeof *old);
			old->sa_handler = SIG_DFL;
		}
		return r;
	}
	if (sig == SIGPROF && act)
		program_sets(sig, (act->sa_flags & SA_SIGINFO) ? (const void *)act->sa_sigaction :
		                                                   (const void *)act->sa_handler);
	return next(sig, act, old);
}

/* signal and the older ways to set a disposition (sysv_signal,
 * bsd_signal, sigset): libc sets it inside them with its own sigaction,
 * which the wrapper above does not see.  SIG_HOLD (sigset) blocks the
 * signal rather than setting a handler: the timers stop all the same
 * (their signals would only pile up). */
static sighandler_fn set_handler(void **cache, const char *name, int sig, sighandler_fn handler)
{
	signal_fn next = (signal_fn)next_symbol(cache, name);
	if (!next) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	if (hidden(sig)) {
		/* the library's handler is not the program's: the previous
		 * disposition it is told is SIG_DFL (see sigaction above) */
		program_sets(sig, (const void *)handler);
		sighandler_fn prev = next(sig, handler);
		return prev == SIG_ERR ? prev : SIG_DFL;
	}
	if (sig == SIGPROF)
		program_sets(sig, (const void *)handler);
	return next(sig, handler);
}

ET_EXPORT sighandler_fn signal(int sig, sighandler_fn handler)
{
	static void *real;
	return set_handler(&real, "signal", sig, handler);
}

#ifdef __GLIBC__
ET_EXPORT sighandler_fn sysv_signal(int sig, sighandler_fn handler)
{
	static void *real;
	return set_handler(&real, "sysv_signal", sig, handler);
}
#endif

/* Not declared by every libc under _GNU_SOURCE (an X/Open function). */
ET_EXPORT sighandler_fn bsd_signal(int sig, sighandler_fn handler);
ET_EXPORT sighandler_fn bsd_signal(int sig, sighandler_fn handler)
{
	static void *real;
	return set_handler(&real, "bsd_signal", sig, handler);
}

ET_EXPORT sighandler_fn sigset(int sig, sighandler_fn handler)
{
	static void *real;
	return set_handler(&real, "sigset", sig, handler);
}
