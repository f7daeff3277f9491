/*
 * runtime/pass_locks.c — THE LOCKS of the passes: the pass lock (one pass
 * at a time) and the table lock (the object table held still), and the
 * order they are taken in with the loader's lock between them.
 *
 * Owns: the two mutexes, who holds each (so that a thread already inside
 * a pass or a reader runs at once instead of waiting for itself), the
 * count of threads waiting for the pass lock, the ways of waiting for it
 * (plain, bounded, polite), and their state in a forked child.
 * May call: runtime/loader (its waits timed from the first pass on; is it
 * stalled?).
 * Never: waits for the pass lock without a bound where THE LOCK ORDER
 * below says it must not (pass.c chooses the way of waiting); holds a
 * lock of its own across a call; allocates.  READ "THE LOCK ORDER" BELOW
 * BEFORE CHANGING ANYTHING HERE OR IN pass.c.
 */
#include "runtime/pass_locks.h"

#include "core/util.h"
#include "runtime/loader.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

/*
 * THE LOCK ORDER.  Three locks matter, always taken in this order:
 *
 *   1. the pass lock (g_pass): one pass at a time, held for all of it;
 *   2. the loader's lock (glibc's dl_load_write_lock, runtime/loader.c):
 *      held only while the list of objects is read and while each prepared
 *      window is swapped in (dlclose holds it while it unmaps an object);
 *   3. the table lock (g_table): the object table held still, for a
 *      moment: to update it, or for the API's readers to copy it out.
 *
 * Nobody waits for the pass lock while holding either of the others: after
 * dlopen a thread only tries it (whoever holds it runs the pass asked for:
 * pass.c's g_pending); the API's refresh and range wait for it with a time limit
 * (a program may call them from a dl_iterate_phdr callback of its own,
 * holding the loader's lock); readers never take it.  Nobody waits for the
 * loader's lock while holding the table lock.  So no cycle, and the long
 * work of a pass (reading the page cache, copying, collapsing, reading
 * smaps) runs with no lock held but the pass lock, which no fork, no
 * dlopen and no reader ever waits for.
 */
static pthread_mutex_t g_pass = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_table = PTHREAD_MUTEX_INITIALIZER;
static pthread_t g_pass_owner;   /* valid while g_pass_held */
static int g_pass_held;
static pthread_t g_table_owner;
static int g_table_held;

static void pass_taken(void)
{
	/* from the first pass on, a wait for the loader's lock is timed (a
	 * dlopen's caller may ask et_loader_stalled about this thread) */
	et_loader_time_waits();
	g_pass_owner = pthread_self();
	__atomic_store_n(&g_pass_held, 1, __ATOMIC_RELEASE);
}

/* Threads waiting for the pass lock (the worker, refresh, range): those
 * that only try it (after dlopen) leave it to them, and their request with
 * it (g_pending: the waiter runs what is pending first) — else a process
 * that dlopens and dlcloses without pause would keep the lock changing
 * hands among the triers, and a waiter would wait for ever. */
static int g_pass_waiters;

void et_pass_locks_wait(void)
{
	__atomic_add_fetch(&g_pass_waiters, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&g_pass);
	__atomic_sub_fetch(&g_pass_waiters, 1, __ATOMIC_ACQ_REL);
	pass_taken();
}

/* Is either lock taken, by anyone, or being taken or let go just now?
 * For the deferral's tick (runtime/defer.c), which runs on the program's
 * only thread, in a signal handler: a lock that thread holds, or is in the
 * middle of taking, can only be seen with a try (a try that succeeds is
 * undone at once: nothing else runs meanwhile). */
bool et_pass_locks_busy(void)
{
	if (__atomic_load_n(&g_pass_held, __ATOMIC_ACQUIRE) || __atomic_load_n(&g_table_held, __ATOMIC_ACQUIRE))
		return true;
	if (pthread_mutex_trylock(&g_pass) != 0)
		return true;
	pthread_mutex_unlock(&g_pass);
	if (pthread_mutex_trylock(&g_table) != 0)
		return true;
	pthread_mutex_unlock(&g_table);
	return false;
}

bool et_pass_locks_try(void)
{
	if (__atomic_load_n(&g_pass_waiters, __ATOMIC_ACQUIRE) || pthread_mutex_trylock(&g_pass) != 0)
		return false;
	pass_taken();
	return true;
}

/* Wait at most ET_PASS_WAIT_NS: for the API's calls, which a program may
 * make while it holds the loader's lock (see THE LOCK ORDER). */
#define ET_PASS_WAIT_NS (10ull * 1000000000ull)
bool et_pass_locks_wait_bounded(void)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(ET_PASS_WAIT_NS / 1000000000ull);
	__atomic_add_fetch(&g_pass_waiters, 1, __ATOMIC_ACQ_REL);
	int e = pthread_mutex_timedlock(&g_pass, &until);
	__atomic_sub_fetch(&g_pass_waiters, 1, __ATOMIC_ACQ_REL);
	if (e != 0)
		return false;
	pass_taken();
	return true;
}

/*
 * After dlopen, with no worker: the object is in the table when dlopen
 * returns (the API says so at once), so the caller waits for whoever runs
 * passes and then runs its own — unless that one is stuck waiting for the
 * loader's lock for long: the caller may hold it (a dlopen from inside a
 * dl_iterate_phdr callback of the program's), and then it leaves its
 * request pending instead of waiting for ever.
 */
#define ET_POLITE_SLICE_NS 5000000ull
#define ET_LOADER_STALL_NS 20000000ull
bool et_pass_locks_wait_polite(void)
{
	__atomic_add_fetch(&g_pass_waiters, 1, __ATOMIC_ACQ_REL);
	bool got = false;
	while (!got) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		uint64_t ns = (uint64_t)until.tv_nsec + ET_POLITE_SLICE_NS;
		until.tv_sec += (time_t)(ns / 1000000000ull);
		until.tv_nsec = (long)(ns % 1000000000ull);
		got = pthread_mutex_timedlock(&g_pass, &until) == 0;
		if (!got && et_loader_stalled(ET_LOADER_STALL_NS))
			break;
	}
	__atomic_sub_fetch(&g_pass_waiters, 1, __ATOMIC_ACQ_REL);
	if (got)
		pass_taken();
	return got;
}

void et_pass_locks_release(void)
{
	__atomic_store_n(&g_pass_held, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_pass);
}

bool et_pass_locks_mine(void)
{
	return __atomic_load_n(&g_pass_held, __ATOMIC_ACQUIRE) && pthread_equal(g_pass_owner, pthread_self());
}

ET_STARTUP void et_pass_locks_table_hold(void)
{
	pthread_mutex_lock(&g_table);
	g_table_owner = pthread_self();
	__atomic_store_n(&g_table_held, 1, __ATOMIC_RELEASE);
}

ET_STARTUP void et_pass_locks_table_release(void)
{
	__atomic_store_n(&g_table_held, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_table);
}

bool et_pass_locks_table_mine(void)
{
	return __atomic_load_n(&g_table_held, __ATOMIC_ACQUIRE) && pthread_equal(g_table_owner, pthread_self());
}

/*
 * In a forked child (pass.c's fork handler): a lock taken at the fork by a
 * thread that does not exist here is made fresh; returns whether one was
 * (then a pass, or a reader, was half-way: the table cannot be trusted).
 */
bool et_pass_locks_fork_child(void)
{
	/* (a flag can be clear with its mutex still locked: a thread forked
	 * from between the two; the mutex itself tells) */
	bool pass_held = false, table_held = false;
	if (!et_pass_locks_mine()) {
		pass_held = pthread_mutex_trylock(&g_pass) != 0;
		if (!pass_held)
			pthread_mutex_unlock(&g_pass);
	}
	if (!et_pass_locks_table_mine()) {
		table_held = pthread_mutex_trylock(&g_table) != 0;
		if (!table_held)
			pthread_mutex_unlock(&g_table);
	}
	if (!pass_held && !table_held)
		return false;
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	if (pass_held) {
		memcpy(&g_pass, &fresh, sizeof fresh);
		__atomic_store_n(&g_pass_held, 0, __ATOMIC_RELEASE);
	}
	if (table_held) {
		memcpy(&g_table, &fresh, sizeof fresh);
		__atomic_store_n(&g_table_held, 0, __ATOMIC_RELEASE);
	}
	return true;
}
