/*
 * runtime/defer.c — ENORMOUSTEXT_DEFER: the start-up work off the program's
 * threads.
 *
 * With ENORMOUSTEXT_DEFER=<duration> the constructor does not run the
 * start-up pass: it starts one thread, named "enormoustext", that sleeps
 * until the process has lived that long (wall-clock time from the
 * constructor: a server waiting for its first connection counts as alive),
 * then runs the pass the constructor would have run (the same pass, the
 * same lock: runtime/pass.c), then stays to run the passes that dlopen and
 * dlclose ask for, so that those return without doing the work, and the
 * priming tries that are due; with nothing of either for 10 s
 * (ET_DEFER_IDLE_NS) it leaves, and the process has its task back.  A
 * program at its task limit (pids.max, RLIMIT_NPROC) whose fork,
 * posix_spawn, pthread_create, system or popen fails with EAGAIN meanwhile
 * makes it leave at once and gets the task (et_defer_give_way,
 * interpose/tasks.c).  A process
 * that exits first pays for one thread and nothing else.  Swapping a window
 * while other threads execute it is what the swap is made for
 * (runtime/remap.c, step 5).
 *
 * A THREAD OF OURS IS NOT THE PROGRAM'S.  What the worker may and may not
 * do (each rule has a test in tests/fault/: inv-*.sh, fork-pass.sh,
 * seccomp-kill.sh, defer-*.sh):
 *   - Signals: every one blocked from its first instruction (os/thread.c):
 *     no handler of the program's ever runs on it.
 *   - The process's life: when the program's last thread ends, the
 *     process ends, as without us.  glibc ends the process when the last
 *     thread it counts ends — and the worker counts.  So the program's
 *     threads are counted (the constructor's thread, and every thread
 *     made through pthread_create while the worker lives:
 *     interpose/signals.c), each with a thread-specific value whose
 *     destructor runs when it ends (pthread_exit, or return from its start
 *     routine; main's return calls exit, which ends everything anyway); the
 *     last one to end stands the worker down and waits for it before glibc
 *     counts its own end, so that it is the program's thread that ends the
 *     process (with exit(0), its stdio flushed into its own descriptors).
 *     Threads the count cannot see (made before the constructor, or with
 *     clone) can only make it stand down early: its work is then not done.
 *   - Descriptors: its first act is to take a descriptor table of its own
 *     (et_os_own_files): every file it opens (smaps, pagemap, the objects'
 *     files, the report) lives there, so it never takes a number the
 *     program could be handed, and never closes or acts on one of the
 *     program's.  Its log lines go to the program's descriptor 2 as it is
 *     at that moment (pidfd_getfd, Linux 5.6; before, to the stderr the
 *     program had when the worker started).
 *   - System calls: none where a seccomp filter may kill (runtime/sandbox.c):
 *     a filter about to go in stands the worker down first; each pass
 *     checks again.
 *   - The loader's lock: held only in short sections, never across a fork
 *     (runtime/loader.c).
 *   - Single-threaded calls (unshare, setns, chroot: interpose/ns.c): it
 *     stands down, and has ended, before they go through.
 *   - Address space: its stack (ET_DEFER_STACK) is counted in the
 *     headroom rule (core/util.c et_as_headroom_ok).
 *   - Standing down is prompt: a pass on the worker stops between two
 *     windows when asked (et_defer_stop_asked), leaving each window as it
 *     was or moved, never half-done.
 *
 * Owns: the worker's life: its state, its deadline, standing it down; the
 * count of the program's threads while it lives; where its log lines go.
 * May call: os (the thread: libc's pthread_create past any wrapper, every
 * signal blocked, a name, a descriptor table of its own), core (log,
 * util), runtime/sandbox (its stand-down hook).
 * Never: runs a program's signal handler; opens a descriptor in the
 * program's table; outlives the program's last thread; leaves a thread
 * behind when a caller needs the process single-threaded
 * (et_defer_stand_down joins it, or after 10 s of waiting for a worker
 * that cannot stop, says so and goes on).
 *
 * fork while the worker waits or works: the child has no worker, and its
 * work is not done there (documented in the README); the parent's goes on.
 */
#include "runtime/defer.h"
#include "runtime/defer_moment.h"

#include "core/log.h"
#include "core/util.h"
#include "os/os.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/auxv.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { D_NONE = 0, D_WAITING, D_WORKING, D_SERVING, D_STOOD_DOWN };

static pthread_mutex_t g_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_c;
static int g_state;             /* D_*, under g_m */
static bool g_stop;             /* asked to stand down, under g_m */
static bool g_poked;            /* a pass was asked for, under g_m */
static bool g_hurry;            /* the work is wanted now, unpaced (et_defer_hurry), under g_m */
static bool g_joinable;         /* g_thread is ours to join */
static pthread_t g_thread;
static void (*g_work)(void), (*g_serve)(void), (*g_on_due)(void);
static uint64_t (*g_due)(void);
static bool (*g_busy)(void);
static bool g_work_done;        /* the work ran (on the tick) before a worker was made */
static struct timespec g_deadline;   /* CLOCK_MONOTONIC */
static uint64_t g_started_ns, g_delay_ns;   /* et_defer_start's time (CLOCK_MONOTONIC) and delay */

/* The worker's stack: the pipeline keeps its tables in scratch mappings,
 * its largest frames are a few path buffers.  Measured: 24 KiB touched by
 * its deepest pass (ENORMOUSTEXT_VERBOSE=3, REPORT and PERFMAP on; the Rss
 * of its stack mapping).  128 KiB: five times that, and half the address
 * space it took before (a program that lowers RLIMIT_AS counts it). */
#define ET_DEFER_STACK (128u << 10)

/* How long the worker, its work done, waits for a dlopen to serve or a
 * priming try to make before it leaves (its task back to the process):
 * long enough for the libraries a program loads while it starts (a JVM's,
 * a server's modules), short against a run that lasts. */
#define ET_DEFER_IDLE_NS (10ull * 1000000000ull)

static pthread_t g_self;        /* the worker, as it sees itself */
static long g_tid;              /* its kernel id */
static bool g_self_set;

/* ---- the worker's descriptors ---------------------------------------- */

static bool g_own_table;        /* the worker's table is its own */
static int g_pidfd = -1;        /* in the worker's table: the process, for its stderr */
static int g_err_copy = -1;     /* in the worker's table: the program's stderr as it was (no pidfd_getfd) */

/* A table of its own, with nothing of the program's in it but (where the
 * kernel cannot lend the program's descriptor 2 at each line) a copy of
 * its stderr.  0 or an errno. */
static int own_table(void)
{
	/* 0, 1 and 2 come along for a moment, so that the pidfd cannot take
	 * one of their numbers (2 may be kept, below) */
	int e = et_os_own_files(3);
	if (e)
		return e;
	g_pidfd = et_os_pidfd_self();
	int probe = g_pidfd >= 0 ? et_os_pidfd_getfd(g_pidfd, 2) : -1;
	bool lend = probe >= 0 || (g_pidfd >= 0 && errno == EBADF);   /* EBADF: no stderr just now */
	if (probe >= 0)
		close(probe);
	if (!lend && g_pidfd >= 0) {
		close(g_pidfd);
		g_pidfd = -1;
	}
	close(0);
	close(1);
	if (lend)
		close(2);
	else
		g_err_copy = 2;
	__atomic_store_n(&g_own_table, true, __ATOMIC_RELEASE);
	return 0;
}

/* core/log.c's descriptor for a line: on the worker, the program's 2 lent
 * for the line (see own_table); -1: the line is dropped. */
static int log_fd(void)
{
	if (!__atomic_load_n(&g_own_table, __ATOMIC_ACQUIRE) || !et_defer_is_worker())
		return 2;
	if (g_pidfd >= 0)
		return et_os_pidfd_getfd(g_pidfd, 2);
	return g_err_copy;
}

static void log_fd_done(int fd)
{
	if (fd >= 0 && g_pidfd >= 0 && __atomic_load_n(&g_own_table, __ATOMIC_ACQUIRE) && et_defer_is_worker())
		close(fd);
}

/* ---- the program's threads -------------------------------------------- */

static pthread_key_t g_key;
static bool g_counting;         /* a worker lives: the program's threads are counted */
static int g_live;              /* counted threads of the program that have not ended */

static void thread_ends(void *v)
{
	(void)v;
	if (__atomic_sub_fetch(&g_live, 1, __ATOMIC_ACQ_REL) == 0 &&
	    __atomic_load_n(&g_counting, __ATOMIC_ACQUIRE))
		et_defer_stand_down("the program's last thread ends");
}

bool et_defer_counts_threads(void)
{
	return __atomic_load_n(&g_counting, __ATOMIC_ACQUIRE);
}

void et_defer_thread_coming(void)
{
	__atomic_add_fetch(&g_live, 1, __ATOMIC_ACQ_REL);
}

void et_defer_thread_not_coming(void)
{
	__atomic_sub_fetch(&g_live, 1, __ATOMIC_ACQ_REL);
}

void et_defer_thread_begins(void)
{
	(void)pthread_setspecific(g_key, (void *)1);
}

static void *worker(void *arg)
{
	(void)arg;
	g_self = pthread_self();
	__atomic_store_n(&g_tid, et_os_tid(), __ATOMIC_RELEASE);
	__atomic_store_n(&g_self_set, true, __ATOMIC_RELEASE);
	et_os_thread_name("enormoustext");
	pthread_mutex_lock(&g_m);
	while (!g_stop && !g_hurry) {
		int e = pthread_cond_timedwait(&g_c, &g_m, &g_deadline);
		if (e == ETIMEDOUT)
			break;
	}
	if (g_stop) {
		g_state = D_STOOD_DOWN;
		pthread_cond_broadcast(&g_c);
		pthread_mutex_unlock(&g_m);
		return NULL;
	}
	/* Time to work: a descriptor table of its own first (not before: a
	 * process that ends within the deferral pays for nothing but the
	 * thread); it holds the lock meanwhile, so nobody sees it working
	 * without one. */
	int te = own_table();
	if (te) {
		/* nothing can be opened without taking the program's numbers */
		g_state = D_STOOD_DOWN;
		g_stop = true;
		__atomic_store_n(&g_counting, false, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&g_c);
		pthread_mutex_unlock(&g_m);
		char eb[24];
		et_log(1, "ENORMOUSTEXT_DEFER: the worker cannot have a descriptor table of its own (%s): "
		          "it stands down, nothing moved", et_errno_text(te, eb));
		return NULL;
	}
	bool done = g_work_done;
	g_state = D_WORKING;
	if (!done)
		g_poked = false;  /* the work's pass sees every object */
	pthread_mutex_unlock(&g_m);
	if (!done)
		g_work();
	/* Then the passes dlopen and dlclose ask for, off their callers, and
	 * what is due later (priming copies again: runtime/pass.c). */
	pthread_mutex_lock(&g_m);
	g_state = D_SERVING;
	pthread_cond_broadcast(&g_c);   /* et_defer_hurry waits for this */
	for (;;) {
		bool due = false, idle = false;
		uint64_t idle_at = et_now_ns() + ET_DEFER_IDLE_NS;
		while (!g_stop && !g_poked && !due && !idle) {
			uint64_t at = g_due ? g_due() : 0;
			/* nothing asked for and nothing due for ET_DEFER_IDLE_NS:
			 * it leaves, and gives the process its task back (a
			 * thread of its own for the rest of the run counts
			 * against pids.max and RLIMIT_NPROC, also for the
			 * vfork and clone that interpose/tasks.c cannot see);
			 * a later dlopen's pass runs in its caller, as with no
			 * worker */
			bool wake_for_due = at && at < idle_at;
			uint64_t t = wake_for_due ? at : idle_at;
			struct timespec until = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
			if (pthread_cond_timedwait(&g_c, &g_m, &until) == ETIMEDOUT) {
				if (wake_for_due)
					due = true;
				else if (!(g_due && g_due()))
					idle = true;
				else
					idle_at = et_now_ns() + ET_DEFER_IDLE_NS;
			}
		}
		if (idle) {
			/* nobody joins it: it detaches itself (under g_m, so
			 * that et_defer_stand_down either joined it first or
			 * finds nothing to join) */
			g_stop = true;
			__atomic_store_n(&g_counting, false, __ATOMIC_RELEASE);
			if (g_joinable) {
				g_joinable = false;
				pthread_detach(pthread_self());
			}
			break;
		}
		if (g_stop)
			break;
		bool poked = g_poked;
		g_poked = false;
		pthread_mutex_unlock(&g_m);
		if (poked)
			g_serve();
		if (due)
			g_on_due();
		pthread_mutex_lock(&g_m);
	}
	g_state = D_STOOD_DOWN;
	pthread_cond_broadcast(&g_c);
	pthread_mutex_unlock(&g_m);
	return NULL;
}

/* ---- the deferral on the program's own thread: the tick ---------------
 *
 * A thread of ours, however quiet, changes what a single-threaded program
 * is: glibc turns its single-threaded fast paths off for good (stdio's and
 * malloc's locking, libstdc++'s atomics: a putc loop 5.8x slower) and the
 * kernel counts a task against pids.max and RLIMIT_NPROC.  So while the
 * program has only its main thread (and ENORMOUSTEXT_DEFER_ON is not
 * "thread"), the deferred work runs on that thread instead:
 *
 *   - a timer on the main thread's CPU time (CLOCK_THREAD_CPUTIME_ID, every
 *     ET_TICK_NS of it) sends that thread SIGURG, whose default is to be
 *     ignored: a signal of ours left pending anywhere (a mask that blocks
 *     it, an exec) harms nothing.  A thread that sleeps or waits is never
 *     interrupted (its CPU clock stands still), and on Linux 5.11 and
 *     later the signal is sent on the way back to user space, never inside
 *     a system call, so no call of the program's fails with EINTR;
 *   - the handler returns at once until the deferral has passed (a
 *     clock_gettime); then, at the first tick that finds a safe moment, it
 *     runs the work (the same pass as the worker's) with every signal
 *     blocked, and returns: the program was paused for as long as the
 *     pass took, on its own thread, and sees its descriptors, errno and
 *     mask as they were;
 *   - a safe moment (tick_safe): the program is still single-threaded (the
 *     kernel's count); it was interrupted outside libc, the loader and this
 *     library (no lock of theirs can be half-taken, no list of the loader's
 *     half-changed); on its main stack with ET_TICK_STACK free below; and
 *     no pass lock of the library's is taken;
 *   - afterwards the ticks go on only while something is due (priming
 *     tries, the memory cgroup's watch), and stop for good when nothing is.
 *
 * The program makes a thread (pthread_create), or sets a SIGURG
 * disposition of its own: the tick stops and a worker thread takes over
 * (et_defer_tick_to_thread), as it would have from the start; the program
 * is multi-threaded by then, by its own doing.  A fork's child has neither.
 */
#define ET_TICK_NS 10000000L            /* 10 ms of the main thread's CPU time */
#define ET_TICK_STACK (256u << 10)      /* stack the pass may take below the interrupted frame */

static bool g_tick;             /* the deferral runs on the program's thread */
static int g_tick_id = -1;      /* its timer; -1: none (stopped, or in a fork's child) */
static char g_tick_tag;         /* the timer's sigev_value: tells its signals from a kill() */
static bool g_tick_handler;     /* SIGURG's disposition is ours (the program has set none) */
static bool g_in_tick;          /* the deferred work runs on the program's thread now */
static const char *g_tick_late; /* why the tick could not find a moment (for the exit line) */
static unsigned g_tick_skipped; /* ticks past the deadline that found no safe moment */

bool et_defer_tick_armed;      /* a tick's timer may be armed (init.c's destructor looks, cheaply) */

ET_STARTUP static void tick_stop(void)
{
	int id = __atomic_exchange_n(&g_tick_id, -1, __ATOMIC_ACQ_REL);
	if (id >= 0)
		et_os_timer_delete(id);
}

static void on_tick(int sig, siginfo_t *si, void *uc);

/* Is now a safe moment for the pass on this thread?  *why: what is not,
 * for the line said if none is ever found; *never: it will not become so
 * (runtime/defer_moment.c). */
static bool tick_safe(void *uc, const char **why, bool *never)
{
	*never = false;
	if (g_busy && g_busy()) {
		*why = "a pass of the library's was under way";
		return false;
	}
	return et_defer_moment_safe(uc, (uintptr_t)on_tick, ET_TICK_STACK, why, never);
}

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	if (si->si_code != SI_TIMER || si->si_value.sival_ptr != &g_tick_tag || !__atomic_load_n(&g_tick, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&g_tick_id, __ATOMIC_ACQUIRE) < 0)
		return;     /* not ours: ignored, as SIGURG is by default */
	int st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	if (st != D_WAITING && st != D_SERVING)
		return;
	uint64_t now = et_now_ns();
	if (st == D_WAITING && now < g_started_ns + g_delay_ns)
		return;
	int saved = errno;
	__atomic_store_n(&g_in_tick, true, __ATOMIC_RELEASE);
	uint64_t due = st == D_SERVING && g_due ? g_due() : 0;
	if (st == D_SERVING && !due) {
		tick_stop();
		__atomic_store_n(&g_state, D_STOOD_DOWN, __ATOMIC_RELEASE);
	} else if (st == D_WAITING || now >= due) {
		const char *why = NULL;
		bool never = false;
		if (!tick_safe(uc, &why, &never)) {
			g_tick_late = why;
			g_tick_skipped++;
			if (never) {
				tick_stop();
				__atomic_store_n(&g_state, D_STOOD_DOWN, __ATOMIC_RELEASE);
				et_log(1, "ENORMOUSTEXT_DEFER: %s: nothing moved", why);
			}
		} else if (st == D_WAITING) {
			__atomic_store_n(&g_state, D_WORKING, __ATOMIC_RELEASE);
			g_work();
			g_work_done = true;
			bool more = g_due && g_due();
			if (!more)
				tick_stop();
			__atomic_store_n(&g_state, more ? D_SERVING : D_STOOD_DOWN, __ATOMIC_RELEASE);
		} else {
			g_on_due();
			if (!(g_due && g_due())) {
				tick_stop();
				__atomic_store_n(&g_state, D_STOOD_DOWN, __ATOMIC_RELEASE);
			}
		}
	}
	__atomic_store_n(&g_in_tick, false, __ATOMIC_RELEASE);
	errno = saved;
}

/* The tick, armed on the calling (main) thread.  0 or an errno: then a
 * worker thread is made instead. */
ET_STARTUP static int tick_start(void)
{
#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
	return ENOSYS;   /* no way to read an interrupted frame here */
#endif
	struct sigaction old;
	if (et_os_sigaction(SIGURG, NULL, &old) != 0)
		return errno;
	if (old.sa_handler != SIG_DFL)
		return EBUSY;   /* the program's (inherited SIG_IGN, or set before us) */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (et_os_sigaction(SIGURG, &sa, NULL) != 0)
		return errno;
	__atomic_store_n(&g_tick_handler, true, __ATOMIC_RELEASE);
	__atomic_store_n(&g_tick, true, __ATOMIC_RELEASE);
	int id = -1;
	if (et_os_thread_timer_create(SIGURG, &g_tick_tag, &id) != 0 || et_os_timer_every(id, ET_TICK_NS) != 0) {
		int e = errno;
		if (id >= 0)
			et_os_timer_delete(id);
		__atomic_store_n(&g_tick, false, __ATOMIC_RELEASE);
		/* the handler stays (ours, hidden): it ignores whatever comes */
		return e ? e : EINVAL;
	}
	__atomic_store_n(&g_tick_id, id, __ATOMIC_RELEASE);
	et_defer_tick_armed = true;
	return 0;
}

/* At exit (init.c's destructor, where et_defer_tick_armed): no tick
 * during the program's last steps. */
ET_STARTUP void et_defer_tick_exit(void)
{
	if (__atomic_load_n(&g_tick, __ATOMIC_ACQUIRE))
		tick_stop();
}

bool et_defer_is_deferred(void)
{
	return __atomic_load_n(&g_in_tick, __ATOMIC_ACQUIRE) || et_defer_is_worker();
}

bool et_defer_sigurg_hidden(void)
{
	return __atomic_load_n(&g_tick_handler, __ATOMIC_ACQUIRE);
}

static int start_worker(void);

/* The tick's work, now, on the calling thread in plain context (a dlopen
 * after the deadline, prctl(PR_SET_THP_DISABLE)): false when it is not
 * waiting any more (done, or under way on this thread's tick). */
static bool tick_work_now(void)
{
	int st = D_WAITING;
	if (!__atomic_compare_exchange_n(&g_state, &st, D_WORKING, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false;
	__atomic_store_n(&g_in_tick, true, __ATOMIC_RELEASE);
	g_work();
	g_work_done = true;
	bool more = g_due && g_due();
	__atomic_store_n(&g_in_tick, false, __ATOMIC_RELEASE);
	if (!more)
		tick_stop();
	__atomic_store_n(&g_state, more ? D_SERVING : D_STOOD_DOWN, __ATOMIC_RELEASE);
	return true;
}

/* The tick gives way to a worker thread (the program makes a thread, or
 * sets SIGURG): the work waits for the same deadline, or (done already)
 * the worker serves what is due. */
static void tick_to_thread(const char *what)
{
	if (!__atomic_exchange_n(&g_tick, false, __ATOMIC_ACQ_REL))
		return;
	tick_stop();
	int st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	if (st != D_WAITING && st != D_SERVING)
		return;
	int e = start_worker();
	if (e) {
		__atomic_store_n(&g_state, D_STOOD_DOWN, __ATOMIC_RELEASE);
		char eb[24];
		et_log(1, "ENORMOUSTEXT_DEFER: %s, and no worker thread could be made (%s)%s", what, et_errno_text(e, eb),
		       st == D_WAITING ? ": nothing moved" : "");
		return;
	}
	et_log(3, "ENORMOUSTEXT_DEFER: %s: a worker thread takes the deferral over", what);
}

void et_defer_threads_coming(void)
{
	if (__atomic_load_n(&g_tick, __ATOMIC_ACQUIRE))
		tick_to_thread("the program makes a thread");
}

void et_defer_sigurg_change(const void *handler)
{
	if (handler == (const void *)on_tick || !__atomic_load_n(&g_tick_handler, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&g_tick_handler, false, __ATOMIC_RELEASE);
	tick_to_thread("the program sets its own SIGURG disposition");
}

bool et_defer_poke(void)
{
	int st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	/* the tick: its work, still to come, sees every object; once the
	 * deadline has passed and no tick has found a moment yet (a program
	 * that lives in libc, the loader or the library's API), the caller —
	 * in plain context, its dlopen done — does the work now, as
	 * et_defer_hurry does; after the work, the caller runs its own pass
	 * (on its own thread, as without us) */
	if (__atomic_load_n(&g_tick, __ATOMIC_ACQUIRE)) {
		if (st != D_WAITING)
			return false;
		if (et_now_ns() >= g_started_ns + g_delay_ns)
			tick_work_now();
		return true;
	}
	if (st != D_WAITING && st != D_WORKING && st != D_SERVING)
		return false;
	pthread_mutex_lock(&g_m);
	bool taken = !g_stop && (g_state == D_WAITING || g_state == D_WORKING || g_state == D_SERVING);
	if (taken) {
		g_poked = true;
		pthread_cond_broadcast(&g_c);
	}
	pthread_mutex_unlock(&g_m);
	return taken;
}

/* g_c waits on CLOCK_MONOTONIC.  Made ready when a worker is first
 * started: every wait on it is a worker's or waits for one; until then
 * it is only broadcast, which the zeroed (PTHREAD_COND_INITIALIZER) one
 * takes.  Not on the tick's start-up path: four calls of libc's (lazy
 * bindings, pages of libc's) a program that ends within the deferral
 * never needed.  0 or an errno. */
static bool g_c_ready;
static int cond_ready(void)
{
	if (g_c_ready)
		return 0;
	pthread_condattr_t a;
	int e = pthread_condattr_init(&a);
	if (e)
		return e;
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	e = pthread_cond_init(&g_c, &a);
	pthread_condattr_destroy(&a);
	if (e == 0)
		g_c_ready = true;
	return e;
}

/* The child of a fork has no worker: its work is not done there. */
static void atfork_child(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	g_m = m;
	g_c_ready = false;
	(void)cond_ready();
	if (g_state != D_NONE)
		g_state = D_STOOD_DOWN;
	g_stop = true;
	g_hurry = false;
	g_joinable = false;
	g_self_set = false;
	/* the child's table is the program's (the fork copied the forking
	 * thread's); the worker's does not exist here */
	g_own_table = false;
	g_pidfd = g_err_copy = -1;
	/* timers are not inherited: the child has no tick either */
	g_tick_id = -1;
	g_tick = false;
	__atomic_store_n(&g_counting, false, __ATOMIC_RELEASE);
	__atomic_store_n(&g_live, 1, __ATOMIC_RELEASE);
}

/* runtime/sandbox.c: a seccomp filter goes in. */
static void sandbox_entering(const char *what)
{
	et_defer_stand_down(what);
}

/* The worker: made at start (ENORMOUSTEXT_DEFER_ON=thread, or no tick),
 * or when the tick gives way.  0 or an errno. */
static int start_worker(void)
{
	int e = cond_ready();
	if (e)
		return e;
	/* the calling thread is the first the count sees; if no key can be
	 * had, no thread is counted and the worker is never started */
	e = pthread_key_create(&g_key, thread_ends);
	if (e)
		return e;
	(void)pthread_setspecific(g_key, (void *)1);
	__atomic_store_n(&g_live, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g_counting, true, __ATOMIC_RELEASE);
	e = et_os_thread_start(&g_thread, worker, NULL, ET_DEFER_STACK);
	if (e) {
		__atomic_store_n(&g_counting, false, __ATOMIC_RELEASE);
		return e;
	}
	__atomic_store_n(&g_joinable, true, __ATOMIC_RELEASE);
	return 0;
}

ET_STARTUP int et_defer_start(uint64_t delay_ns, const struct et_defer_jobs *jobs, bool on_main)
{
	/* the clock read as a system call: the vDSO's clock_gettime would
	 * fault in its data pages and a page of libc's at start-up */
	if (et_os_sys_quiet(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&g_deadline, 0, 0) != 0)
		clock_gettime(CLOCK_MONOTONIC, &g_deadline);
	g_started_ns = (uint64_t)g_deadline.tv_sec * 1000000000ull + (uint64_t)g_deadline.tv_nsec;
	g_delay_ns = delay_ns;
	uint64_t ns = (uint64_t)g_deadline.tv_nsec + delay_ns % 1000000000ull;
	g_deadline.tv_sec += (time_t)(delay_ns / 1000000000ull + ns / 1000000000ull);
	g_deadline.tv_nsec = (long)(ns % 1000000000ull);
	g_work = jobs->work;
	g_serve = jobs->serve;
	g_due = jobs->due;
	g_on_due = jobs->on_due;
	g_busy = jobs->busy;
	et_log_route(log_fd, log_fd_done);
	g_state = D_WAITING;
	int e = on_main ? tick_start() : EINVAL;
	if (e)
		e = start_worker();
	if (e) {
		g_state = D_NONE;
		return e;
	}
	pthread_atfork(NULL, NULL, atfork_child);
	et_sandbox_on_entering(sandbox_entering);
	return 0;
}

bool et_defer_stop_asked(void)
{
	return et_defer_is_worker() && __atomic_load_n(&g_stop, __ATOMIC_ACQUIRE);
}

bool et_defer_is_worker(void)
{
	return __atomic_load_n(&g_self_set, __ATOMIC_ACQUIRE) && pthread_equal(g_self, pthread_self());
}

bool et_defer_hurried(void)
{
	return __atomic_load_n(&g_hurry, __ATOMIC_ACQUIRE);
}

bool et_defer_sleep(uint64_t ns)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	uint64_t t = (uint64_t)until.tv_nsec + ns % 1000000000ull;
	until.tv_sec += (time_t)(ns / 1000000000ull + t / 1000000000ull);
	until.tv_nsec = (long)(t % 1000000000ull);
	pthread_mutex_lock(&g_m);
	while (!g_stop && !g_hurry && pthread_cond_timedwait(&g_c, &g_m, &until) != ETIMEDOUT)
		;
	bool go_on = !g_stop;
	pthread_mutex_unlock(&g_m);
	return go_on;
}

bool et_defer_waiting(void)
{
	int st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	return st == D_WAITING || st == D_WORKING;
}

/* How long et_defer_stand_down and et_defer_hurry wait for the worker:
 * far longer than any move takes (164 MiB cold: under a second), short
 * enough that a caller that holds a lock the worker needs is not held for
 * ever (unshare or prctl from a dl_iterate_phdr callback while the worker
 * waits for the loader's lock to start a pass: it cannot stop until the
 * caller lets go, and the caller waits for it). */
#define ET_DEFER_WAIT_NS (10ull * 1000000000ull)

static struct timespec wait_until(void)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(ET_DEFER_WAIT_NS / 1000000000ull);
	return until;
}

/* pthread_join returns once the thread has cleared its tid, which the
 * kernel does before it takes the thread out of the process: an unshare
 * (CLONE_NEWUSER) made at once can still find two threads (EINVAL; seen in
 * fault.defer-rate).  Wait (at most 1 s) until the worker is gone. */
static void wait_gone(long tid)
{
	int saved = errno;      /* the caller's, for the program */
	for (int i = 0; tid > 0 && i < 20000 && et_os_thread_present(tid); i++) {
		struct timespec t = { 0, 50000 };
		nanosleep(&t, NULL);
	}
	errno = saved;
}

/* The tick stands down: no work after this one (a pass of the tick's
 * under way cannot be: the tick runs on the caller's own thread). */
static void tick_stand_down(const char *what)
{
	if (!__atomic_exchange_n(&g_tick, false, __ATOMIC_ACQ_REL))
		return;
	tick_stop();
	int st = __atomic_exchange_n(&g_state, D_STOOD_DOWN, __ATOMIC_ACQ_REL);
	if (st == D_WAITING)
		et_log(1, "ENORMOUSTEXT_DEFER: %s before the deferral ended: nothing moved", what);
}

void et_defer_stand_down(const char *what)
{
	if (__atomic_load_n(&g_tick, __ATOMIC_ACQUIRE)) {
		tick_stand_down(what);
		return;
	}
	if (!__atomic_load_n(&g_joinable, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&g_m);
	bool was_waiting = g_state == D_WAITING;
	/* waiting: its work is not done; serving: later passes run in their
	 * callers again; working: it stops between two windows */
	__atomic_store_n(&g_stop, true, __ATOMIC_RELEASE);
	__atomic_store_n(&g_counting, false, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&g_c);
	bool join = g_joinable && !pthread_equal(g_thread, pthread_self());
	bool late = false;
	if (join) {
		g_joinable = false;
		struct timespec until = wait_until();
		while (g_state != D_STOOD_DOWN)
			if (pthread_cond_timedwait(&g_c, &g_m, &until) == ETIMEDOUT) {
				late = true;
				break;
			}
	}
	pthread_mutex_unlock(&g_m);
	if (!join)
		return;
	if (late) {
		/* it ends on its own once it can; nobody joins it */
		pthread_detach(g_thread);
		et_log(1, "ENORMOUSTEXT_DEFER: %s: the worker did not stop within %llu s (the caller holds a lock it is "
		       "waiting for?); the call goes on with it alive", what,
		       (unsigned long long)(ET_DEFER_WAIT_NS / 1000000000ull));
		return;
	}
	pthread_join(g_thread, NULL);   /* it has said D_STOOD_DOWN: it is returning */
	wait_gone(__atomic_load_n(&g_tid, __ATOMIC_ACQUIRE));
	if (was_waiting)
		et_log(1, "ENORMOUSTEXT_DEFER: %s before the deferral ended: nothing moved", what);
}

bool et_defer_give_way(const char *what)
{
	if (et_defer_is_worker())
		return false;
	if (!__atomic_load_n(&g_joinable, __ATOMIC_ACQUIRE)) {
		/* none, or one that left on its own (idle) and may not be
		 * gone yet: its task is free once it is */
		long tid = __atomic_load_n(&g_self_set, __ATOMIC_ACQUIRE) ? __atomic_load_n(&g_tid, __ATOMIC_ACQUIRE) : 0;
		if (tid <= 0 || !et_os_thread_present(tid))
			return false;
		wait_gone(tid);
		return true;
	}
	int st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	bool busy = st == D_WORKING || st == D_SERVING;
	/* a worker that already left is joined here too: its task is free
	 * once it is gone (wait_gone), not when it said so */
	et_defer_stand_down(what);
	if (busy)
		et_log(1, "ENORMOUSTEXT_DEFER: %s: the worker ended to give the program its task", what);
	return true;
}

bool et_defer_end_if_waiting(uint64_t *lived_ns, uint64_t *delay_ns)
{
	if (__atomic_load_n(&g_tick, __ATOMIC_ACQUIRE)) {
		int st = D_WAITING;
		tick_stop();
		if (!__atomic_compare_exchange_n(&g_state, &st, D_STOOD_DOWN, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return false;
		__atomic_store_n(&g_tick, false, __ATOMIC_RELEASE);
		uint64_t now = et_now_ns();
		*lived_ns = now > g_started_ns ? now - g_started_ns : 0;
		*delay_ns = g_delay_ns;
		if (g_tick_skipped && g_tick_late)
			et_log(2, "ENORMOUSTEXT_DEFER: %u ticks past the deadline found no moment: %s", g_tick_skipped,
			       g_tick_late);
		return true;
	}
	if (!__atomic_load_n(&g_joinable, __ATOMIC_ACQUIRE) || __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != D_WAITING ||
	    et_defer_is_worker())
		return false;
	pthread_mutex_lock(&g_m);
	if (g_stop || g_state != D_WAITING) {
		pthread_mutex_unlock(&g_m);
		return false;
	}
	/* it waits for the deadline under g_m: told to stop, it says
	 * D_STOOD_DOWN at once and returns, before it could begin */
	__atomic_store_n(&g_stop, true, __ATOMIC_RELEASE);
	__atomic_store_n(&g_counting, false, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&g_c);
	g_joinable = false;
	struct timespec until = wait_until();
	bool late = false;
	while (g_state != D_STOOD_DOWN)
		if (pthread_cond_timedwait(&g_c, &g_m, &until) == ETIMEDOUT) {
			late = true;
			break;
		}
	pthread_mutex_unlock(&g_m);
	if (late)
		pthread_detach(g_thread);
	else
		pthread_join(g_thread, NULL);
	uint64_t now = et_now_ns();
	*lived_ns = now > g_started_ns ? now - g_started_ns : 0;
	*delay_ns = g_delay_ns;
	return true;
}

void et_defer_hurry(const char *what)
{
	if (__atomic_load_n(&g_tick, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&g_hurry, true, __ATOMIC_RELEASE);
		if (tick_work_now())
			et_log(1, "ENORMOUSTEXT_DEFER: %s before the deferral ended: the text was moved first", what);
		else
			__atomic_store_n(&g_hurry, false, __ATOMIC_RELEASE);
		return;
	}
	if (!__atomic_load_n(&g_joinable, __ATOMIC_ACQUIRE) || et_defer_is_worker())
		return;
	pthread_mutex_lock(&g_m);
	if (g_stop || (g_state != D_WAITING && g_state != D_WORKING)) {
		pthread_mutex_unlock(&g_m);
		return;
	}
	bool was_waiting = g_state == D_WAITING;
	__atomic_store_n(&g_hurry, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&g_c);
	struct timespec until = wait_until();
	bool late = false;
	while (!g_stop && (g_state == D_WAITING || g_state == D_WORKING))
		if (pthread_cond_timedwait(&g_c, &g_m, &until) == ETIMEDOUT) {
			late = true;
			break;
		}
	pthread_mutex_unlock(&g_m);
	if (late)
		et_log(1, "ENORMOUSTEXT_DEFER: %s: the worker did not finish within %llu s; the call goes on", what,
		       (unsigned long long)(ET_DEFER_WAIT_NS / 1000000000ull));
	else if (was_waiting)
		et_log(1, "ENORMOUSTEXT_DEFER: %s before the deferral ended: the text was moved first", what);
}
