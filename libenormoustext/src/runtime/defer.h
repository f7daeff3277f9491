/*
 * runtime/defer.h — ENORMOUSTEXT_DEFER: the start-up work on a worker
 * thread of the library's, once the process has lived that long (defer.c).
 */
#ifndef ET_RUNTIME_DEFER_H
#define ET_RUNTIME_DEFER_H

#include "core/base.h"

/* What the deferral runs: work() once delay_ns of wall-clock time have
 * passed since et_defer_start (the constructor's); then serve() each time
 * et_defer_poke asks (on a worker), and on_due() when the CLOCK_MONOTONIC
 * time due() gives (0: none) has come.  busy(): is a pass lock of the
 * library's taken (the tick waits for a moment when none is). */
struct et_defer_jobs {
	void (*work)(void);
	void (*serve)(void);
	uint64_t (*due)(void);
	void (*on_due)(void);
	bool (*busy)(void);
};
/* Start the deferral: on_main, on the program's own thread while it has no
 * other (the tick: a CPU-time timer and SIGURG, defer.c), else on a new
 * thread "enormoustext".  0, or an errno: neither could be had (seccomp,
 * RLIMIT_NPROC, a static program), and the caller does the work itself. */
ET_HIDDEN int et_defer_start(uint64_t delay_ns, const struct et_defer_jobs *jobs, bool on_main);
/* Is the caller the deferred work (the worker, or the tick's handler)?
 * What a deferred pass may do (COPY_MIN, the memory cgroup's watch) goes
 * by this. */
ET_HIDDEN bool et_defer_is_deferred(void);
/* pthread_create's wrapper, before it makes a thread: the tick gives way
 * to a worker (the program is no longer single-threaded). */
ET_HIDDEN void et_defer_threads_coming(void);
/* SIGURG's disposition is the tick's (the program is told SIG_DFL), and
 * the program sets one of its own (the tick gives way to a worker). */
ET_HIDDEN bool et_defer_sigurg_hidden(void);
/* At exit: a tick still armed stops (init.c's destructor calls it only
 * where et_defer_tick_armed, so that a process without one touches no
 * more of the library than before). */
ET_HIDDEN extern bool et_defer_tick_armed;
ET_HIDDEN void et_defer_tick_exit(void);
ET_HIDDEN void et_defer_sigurg_change(const void *handler);
/* A dlopen or dlclose asked for a pass: true when the worker will run it
 * (it is waiting, or done with its work and serving), false when the
 * caller must (no worker, or it stood down). */
ET_HIDDEN bool et_defer_poke(void);
/* Before something that needs the process single-threaded or changes its
 * view of the system (unshare, setns, chroot: interpose/ns.c): a worker
 * still waiting stands down (its work is not done; one line at verbosity
 * 1 names `what`), one that is working is waited for; either way the
 * thread has ended when this returns.  Cheap when there is no worker. */
ET_HIDDEN void et_defer_stand_down(const char *what);
/* A task could not be made for the program (fork, posix_spawn,
 * pthread_create, system, popen failed with EAGAIN: pids.max or
 * RLIMIT_NPROC reached): the worker, if one lives, ends now so that its
 * task is the program's (a worker still waiting: its work is not done,
 * one line at verbosity 1 names `what`).  True when the caller should try
 * once more: the worker was there and is gone. */
ET_HIDDEN bool et_defer_give_way(const char *what);
/* Before something that ends what the work can do (prctl
 * PR_SET_THP_DISABLE: interpose/ns.c): a worker still waiting or working
 * does all its work now, unpaced, and the caller waits for it (at most
 * 10 s); one line at verbosity 1 names `what`.  The worker goes on serving
 * afterwards.  Cheap when there is no worker. */
ET_HIDDEN void et_defer_hurry(const char *what);
/* Is the caller the worker? */
ET_HIDDEN bool et_defer_is_worker(void);
/* Was the work hurried (et_defer_hurry)?  Then it is the last chance: what
 * has not run yet is copied too (ENORMOUSTEXT_COPY_MIN does not apply). */
ET_HIDDEN bool et_defer_hurried(void);
/* On the worker: wait ns (ENORMOUSTEXT_DEFER_RATE's pause between
 * pieces); false when it is asked to stand down meanwhile (at once). */
ET_HIDDEN bool et_defer_sleep(uint64_t ns);
/* At exit (runtime/init.c's destructor): a worker still waiting stands
 * down, silently, and true (the process ended within the deferral: its
 * work was never done); false, and nothing changed, in every other case
 * (no worker, or it has begun its work).  lived_ns: the time since
 * et_defer_start; delay_ns: the deferral it was given. */
ET_HIDDEN bool et_defer_end_if_waiting(uint64_t *lived_ns, uint64_t *delay_ns);
/* Is there a worker whose work is not done yet? */
ET_HIDDEN bool et_defer_waiting(void);
/* On the worker: has it been asked to stand down?  A pass stops between
 * two windows when it has (runtime/remap.c). */
ET_HIDDEN bool et_defer_stop_asked(void);
/* The program's threads, counted while a worker lives (so that the last
 * one to end stands it down first: see defer.c).  pthread_create's
 * wrapper (interpose/signals.c): counts_threads says whether to count;
 * thread_coming before the thread is made, thread_not_coming if it could
 * not be, thread_begins first thing on the new thread. */
ET_HIDDEN bool et_defer_counts_threads(void);
ET_HIDDEN void et_defer_thread_coming(void);
ET_HIDDEN void et_defer_thread_not_coming(void);
ET_HIDDEN void et_defer_thread_begins(void);

#endif
