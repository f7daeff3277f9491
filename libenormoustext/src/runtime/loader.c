/*
 * runtime/loader.c — the loader's lock, as the library takes it.
 *
 * glibc holds its dl_load_write_lock around every dl_iterate_phdr
 * callback, and also while dlclose (or a dlopen that failed) unmaps an
 * object: code that runs inside a callback sees no object vanish.  But
 * glibc (2.36) does not reset that lock in the child of a fork: a child
 * forked while another thread sat inside dl_iterate_phdr finds it taken
 * for good, and waits for ever in its first dlopen (or in anything else
 * that walks the loader's list: an exception unwinding, dladdr).  So the
 * library holds it as little as possible, and never across a fork:
 *
 *   - what needs it is short: reading the list of objects, and each swap
 *     of a prepared window (a few microseconds); the copies, the page-cache
 *     reads, the smaps reads are made outside it (runtime/pass.c,
 *     runtime/remap.c);
 *   - a fork waits for a dl_iterate_phdr of ours to end, and none of ours
 *     starts while a fork is under way: pthread_atfork's prepare handler
 *     raises the gate (g_forking) and waits for g_inside (our threads in
 *     or about to enter dl_iterate_phdr) to fall to 0; a thread of ours
 *     counts itself in before it calls dl_iterate_phdr and out after it
 *     returns, and one that finds the gate raised counts itself out and
 *     goes again once the fork is done (both sides of the gate are
 *     sequentially consistent, so one of the two always sees the other).
 *     The gate is around the whole call, not its callbacks: glibc takes the
 *     lock before the first callback and lets it go after the last, and a
 *     fork let through in between (a gate checked in the callback) left
 *     its child with the lock taken (fault.fork-pass: 2 of 943 children
 *     stuck in their first dlopen, once).  The wait is bounded
 *     (ET_FORK_WAIT_NS): a fork never waits for ever because of us.
 *
 * musl holds no lock during the callbacks and never unmaps an object; the
 * gate costs it nothing that matters.
 *
 * Owns: the gate, its fork handlers.
 * May call: os (futex), libc's dl_iterate_phdr.
 * Never: holds the loader's lock while it waits for anything but a fork
 * to end; runs a callback that the gate has turned away.
 */
#include "runtime/loader.h"

#include "os/os.h"

#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

static int g_forking;       /* forks under way (their prepare handler ran, not their parent's) */
static int g_inside;        /* our threads in dl_iterate_phdr, or about to enter it */
static uintptr_t g_cb_owner; /* the thread running our callbacks (0: none); set under the loader's lock */

/* How long a fork waits for a dl_iterate_phdr of ours to end (the wait for
 * the loader's lock included): far longer than any of them takes, short
 * enough that a bug cannot hang a fork for good. */
#define ET_FORK_WAIT_NS (5ull * 1000000000ull)

static void fork_prepare(void)
{
	__atomic_add_fetch(&g_forking, 1, __ATOMIC_SEQ_CST);
	/* (the forking thread itself is never counted in: ours call no
	 * program code, so no fork comes from inside one of them) */
	uint64_t waited = 0;
	int n;
	while ((n = __atomic_load_n(&g_inside, __ATOMIC_SEQ_CST)) != 0 && waited < ET_FORK_WAIT_NS) {
		et_os_futex_wait(&g_inside, n, 1000000);
		waited += 1000000;
	}
}

static void fork_parent(void)
{
	__atomic_sub_fetch(&g_forking, 1, __ATOMIC_SEQ_CST);
	et_os_futex_wake(&g_forking);
}

static void fork_child(void)
{
	/* only the forking thread exists here: no callback of ours runs */
	__atomic_store_n(&g_forking, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&g_inside, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&g_cb_owner, 0, __ATOMIC_SEQ_CST);
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void register_now(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void et_loader_fork_safe(void)
{
	pthread_once(&g_once, register_now);
}

/* When a thread began to wait for the loader's lock to run a callback of
 * ours (0: none waits, or waits are not timed yet): see et_loader_stalled. */
static uint64_t g_wait_since;
static bool g_timed;

void et_loader_time_waits(void)
{
	__atomic_store_n(&g_timed, true, __ATOMIC_RELAXED);
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

bool et_loader_stalled(uint64_t ns)
{
	uint64_t since = __atomic_load_n(&g_wait_since, __ATOMIC_ACQUIRE);
	return since && now_ns() - since > ns;
}

struct gated {
	void (*fn)(void *, unsigned long long, unsigned long long);   /* once, or */
	int (*cb)(struct dl_phdr_info *, size_t, void *);              /* for each object */
	void *arg;
	bool entered;
};

ET_STARTUP static uintptr_t self_id(void)
{
	return (uintptr_t)pthread_self();
}

/* This thread runs a callback of ours (the loader's lock is its own). */
ET_STARTUP static bool nested(void)
{
	return __atomic_load_n(&g_cb_owner, __ATOMIC_ACQUIRE) == self_id();
}

ET_STARTUP static int call(struct gated *g, struct dl_phdr_info *info, size_t size)
{
	if (!g->fn)
		return g->cb(info, size, g->arg);
	unsigned long long adds = ET_LOADER_SUBS_UNKNOWN, subs = ET_LOADER_SUBS_UNKNOWN;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		adds = info->dlpi_adds;
		subs = info->dlpi_subs;
	}
	g->fn(g->arg, adds, subs);
	return 1;
}

ET_STARTUP static int gate_cb(struct dl_phdr_info *info, size_t size, void *a)
{
	struct gated *g = a;
	if (!g->entered) {
		/* the loader's lock is ours from here to dl_iterate_phdr's return */
		__atomic_store_n(&g_wait_since, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&g_cb_owner, self_id(), __ATOMIC_RELEASE);
		g->entered = true;
	}
	return call(g, info, size);
}

ET_STARTUP static int nested_cb(struct dl_phdr_info *info, size_t size, void *a)
{
	return call(a, info, size);
}

ET_STARTUP static void run_gated(struct gated *g)
{
	if (nested()) {
		/* from inside a callback of ours: the lock is this thread's */
		dl_iterate_phdr(nested_cb, g);
		return;
	}
	for (;;) {
		__atomic_add_fetch(&g_inside, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&g_forking, __ATOMIC_SEQ_CST))
			break;
		/* a fork is under way: out of its way, let it finish, then go
		 * again (its prepare handler may be waiting for this count) */
		__atomic_sub_fetch(&g_inside, 1, __ATOMIC_SEQ_CST);
		et_os_futex_wake(&g_inside);
		int f;
		while ((f = __atomic_load_n(&g_forking, __ATOMIC_SEQ_CST)) != 0)
			et_os_futex_wait(&g_forking, f, 1000000);
	}
	g->entered = false;
	if (__atomic_load_n(&g_timed, __ATOMIC_RELAXED))
		__atomic_store_n(&g_wait_since, now_ns(), __ATOMIC_RELEASE);
	dl_iterate_phdr(gate_cb, g);
	__atomic_store_n(&g_wait_since, 0, __ATOMIC_RELEASE);
	/* the lock let go: no longer this thread's callbacks (unless another
	 * thread's have begun meanwhile: theirs stay marked) */
	uintptr_t me = self_id();
	__atomic_compare_exchange_n(&g_cb_owner, &me, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	/* a fork's prepare handler waits only after raising the gate: no gate
	 * raised, nobody to wake (and no system call made in every process's
	 * start-up).  Both sides are sequentially consistent: one of the two
	 * sees the other. */
	__atomic_sub_fetch(&g_inside, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&g_forking, __ATOMIC_SEQ_CST))
		et_os_futex_wake(&g_inside);
}

void et_loader_locked(void (*fn)(void *, unsigned long long, unsigned long long), void *arg)
{
	et_loader_fork_safe();
	struct gated g = { .fn = fn, .arg = arg };
	run_gated(&g);
}

ET_STARTUP void et_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	struct gated g = { .cb = cb, .arg = arg };
	run_gated(&g);
}
