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
 * dlclose ask for, so that those return without doing the work.  A process that exits first pays
 * for one thread and nothing else.  Swapping a window while other threads
 * execute it is what the swap is made for (runtime/remap.c, step 5).
 *
 * Owns: the worker's life: its state, its deadline, standing it down.
 * May call: os (the thread: libc's pthread_create past any wrapper, every
 * signal blocked, a name), core (log, util).
 * Never: runs a program's signal handler (every signal is blocked in the
 * worker from its first instruction); leaves a thread behind when a caller
 * needs the process single-threaded (et_defer_stand_down joins it, or
 * after 10 s of waiting for a worker that cannot stop, says so and goes on).
 *
 * fork while the worker waits or works: the child has no worker, and its
 * work is not done there (documented in the README); the parent's goes on.
 */
#include "runtime/defer.h"

#include "core/log.h"
#include "core/util.h"
#include "os/os.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

enum { D_NONE = 0, D_WAITING, D_WORKING, D_SERVING, D_STOOD_DOWN };

static pthread_mutex_t g_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_c;
static int g_state;             /* D_*, under g_m */
static bool g_stop;             /* asked to stand down, under g_m */
static bool g_poked;            /* a pass was asked for, under g_m */
static bool g_hurry;            /* the work is wanted now, unpaced (et_defer_hurry), under g_m */
static bool g_joinable;         /* g_thread is ours to join */
static pthread_t g_thread;
static void (*g_work)(void), (*g_serve)(void);
static struct timespec g_deadline;   /* CLOCK_MONOTONIC */

/* The worker's stack: the pipeline keeps its tables in scratch mappings,
 * its largest frames are a few path buffers. */
#define ET_DEFER_STACK (256u << 10)

static pthread_t g_self;        /* the worker, as it sees itself */
static long g_tid;              /* its kernel id */
static bool g_self_set;

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
	g_state = D_WORKING;
	g_poked = false;          /* the work's pass sees every object */
	pthread_mutex_unlock(&g_m);
	g_work();
	/* Then the passes dlopen and dlclose ask for, off their callers. */
	pthread_mutex_lock(&g_m);
	g_state = D_SERVING;
	pthread_cond_broadcast(&g_c);   /* et_defer_hurry waits for this */
	for (;;) {
		while (!g_stop && !g_poked)
			pthread_cond_wait(&g_c, &g_m);
		if (g_stop)
			break;
		g_poked = false;
		pthread_mutex_unlock(&g_m);
		g_serve();
		pthread_mutex_lock(&g_m);
	}
	g_state = D_STOOD_DOWN;
	pthread_cond_broadcast(&g_c);
	pthread_mutex_unlock(&g_m);
	return NULL;
}

bool et_defer_poke(void)
{
	int st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
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

/* The child of a fork has no worker: its work is not done there. */
static void atfork_child(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	g_m = m;
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&g_c, &a);
	pthread_condattr_destroy(&a);
	if (g_state != D_NONE)
		g_state = D_STOOD_DOWN;
	g_stop = true;
	g_hurry = false;
	g_joinable = false;
	g_self_set = false;
}

int et_defer_start(uint64_t delay_ns, void (*work)(void), void (*serve)(void))
{
	pthread_condattr_t a;
	int e = pthread_condattr_init(&a);
	if (e)
		return e;
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	e = pthread_cond_init(&g_c, &a);
	pthread_condattr_destroy(&a);
	if (e)
		return e;
	clock_gettime(CLOCK_MONOTONIC, &g_deadline);
	uint64_t ns = (uint64_t)g_deadline.tv_nsec + delay_ns % 1000000000ull;
	g_deadline.tv_sec += (time_t)(delay_ns / 1000000000ull + ns / 1000000000ull);
	g_deadline.tv_nsec = (long)(ns % 1000000000ull);
	g_work = work;
	g_serve = serve;
	g_state = D_WAITING;
	e = et_os_thread_start(&g_thread, worker, NULL, ET_DEFER_STACK);
	if (e) {
		g_state = D_NONE;
		return e;
	}
	g_joinable = true;
	pthread_atfork(NULL, NULL, atfork_child);
	return 0;
}

bool et_defer_is_worker(void)
{
	return __atomic_load_n(&g_self_set, __ATOMIC_ACQUIRE) && pthread_equal(g_self, pthread_self());
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

void et_defer_stand_down(const char *what)
{
	if (!__atomic_load_n(&g_joinable, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&g_m);
	bool was_waiting = g_state == D_WAITING;
	/* waiting: its work is not done; serving: later passes run in their
	 * callers again; working: it serves no more once the work is done */
	g_stop = true;
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

void et_defer_hurry(const char *what)
{
	if (!__atomic_load_n(&g_joinable, __ATOMIC_ACQUIRE) || et_defer_is_worker())
		return;
	pthread_mutex_lock(&g_m);
	if (g_stop || (g_state != D_WAITING && g_state != D_WORKING)) {
		pthread_mutex_unlock(&g_m);
		return;
	}
	bool was_waiting = g_state == D_WAITING;
	g_hurry = true;
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
