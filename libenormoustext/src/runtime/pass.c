/*
 * runtime/pass.c — the object table, the passes over it, and THE LOCKS.
 *
 * Owns: the process's run (g_run: options, facts, the table of every
 * object looked at), the pass lock (one pass at a time) and the table lock
 * (the table held still), the requests for a pass made after
 * dlopen/dlclose (g_pending), what a forked child keeps, and the lazy
 * checks a quick start-up leaves for the first dlopen.
 * May call: core, runtime/objects (the loader's list), runtime/loader (its
 * lock, briefly), runtime/pipeline (one pass over new objects),
 * runtime/report (the report file after a pass that found something),
 * runtime/other, runtime/sandbox (may the library act here, now?).
 * Never: calls a wrapper in interpose/ (they call in here, through
 * et_after_*); waits for the pass lock while it holds the loader's lock
 * or the table lock; holds the loader's lock during the long work of a
 * pass.  READ "THE LOCK ORDER" BELOW BEFORE CHANGING ANYTHING HERE.
 */
#include "runtime/pass.h"

#include "core/log.h"
#include "core/util.h"
#include "os/os.h"
#include "runtime/defer.h"
#include "runtime/loader.h"
#include "runtime/objects.h"
#include "runtime/other.h"
#include "runtime/pipeline.h"
#include "runtime/report.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct et_run g_run;
static bool g_active;          /* this copy acts: set by the constructor */
static size_t g_objs_cap;      /* capacity of g_run.objs */
static bool g_pass_short;      /* the last pass could not take every object in */

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
 * g_pending); the API's refresh and range wait for it with a time limit
 * (a program may call them from a dl_iterate_phdr callback of its own,
 * holding the loader's lock); readers never take it.  Nobody waits for the
 * loader's lock while holding the table lock.  So no cycle, and the long
 * work of a pass (reading the page cache, copying, collapsing, reading
 * smaps) runs with no lock held but the pass lock, which no fork, no
 * dlopen and no reader ever waits for.
 */
static pthread_mutex_t g_pass = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_table = PTHREAD_MUTEX_INITIALIZER;
static int g_pending;
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

static void pass_lock(void)
{
	__atomic_add_fetch(&g_pass_waiters, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&g_pass);
	__atomic_sub_fetch(&g_pass_waiters, 1, __ATOMIC_ACQ_REL);
	pass_taken();
}

static bool pass_trylock(void)
{
	if (__atomic_load_n(&g_pass_waiters, __ATOMIC_ACQUIRE) || pthread_mutex_trylock(&g_pass) != 0)
		return false;
	pass_taken();
	return true;
}

/* Wait at most ET_PASS_WAIT_NS: for the API's calls, which a program may
 * make while it holds the loader's lock (see THE LOCK ORDER). */
#define ET_PASS_WAIT_NS (10ull * 1000000000ull)
static bool pass_lock_bounded(void)
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
static bool pass_lock_polite(void)
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

static void pass_unlock(void)
{
	__atomic_store_n(&g_pass_held, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_pass);
}

static bool pass_is_mine(void)
{
	return __atomic_load_n(&g_pass_held, __ATOMIC_ACQUIRE) && pthread_equal(g_pass_owner, pthread_self());
}

static void table_lock(void)
{
	pthread_mutex_lock(&g_table);
	g_table_owner = pthread_self();
	__atomic_store_n(&g_table_held, 1, __ATOMIC_RELEASE);
}

static void table_unlock(void)
{
	__atomic_store_n(&g_table_held, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_table);
}

static bool table_is_mine(void)
{
	return __atomic_load_n(&g_table_held, __ATOMIC_ACQUIRE) && pthread_equal(g_table_owner, pthread_self());
}

/* Same loaded object: same place, same program headers, same name (two
 * libraries can be loaded at one address one after the other). */
static bool same_object(const struct et_object *a, const struct et_object *b)
{
	/* (the main program's path is resolved after the list is read) */
	return a->base == b->base && a->phdr == b->phdr &&
	       ((a->is_main && b->is_main) || !strcmp(a->path, b->path));
}

/* Make room for `more` objects in the global table. */
static int table_reserve(struct et_run *run, size_t more)
{
	if (run->nobjs + more <= g_objs_cap)
		return 0;
	size_t cap = g_objs_cap ? g_objs_cap * 2 : 32;
	while (cap < run->nobjs + more)
		cap *= 2;
	struct et_object *t = et_scratch_alloc(cap * sizeof *t);
	if (!t)
		return -ENOMEM;
	if (run->objs) {
		memcpy(t, run->objs, run->nobjs * sizeof *t);
		et_scratch_free(run->objs, g_objs_cap * sizeof *t);
	}
	run->objs = t;
	g_objs_cap = cap;
	return 0;
}

/* The main program's name is "" from glibc and argv[0] from musl: its
 * path is always the executable's. */
static void name_main(struct et_object *o)
{
	if (o->is_main) {
		et_os_exe_path(o->path, sizeof o->path);
	}
}

/*
 * One pass: objects that are gone leave the table, the objects the loader
 * has that the table does not go through the pipeline, then into the
 * table.  Called with g_lock held, from inside dl_iterate_phdr (see
 * process_new).  Returns how many objects were new.
 */
/* RLIMIT_AS short of headroom: see et_as_headroom_ok. */
static bool as_headroom(struct et_run *run)
{
	if (et_as_headroom_ok())
		return true;
	run->reason = ET_R_RLIMIT_AS;
	return false;
}

/*
 * ENORMOUSTEXT_DEFER_RATE: the worker moves its windows a piece at a time
 * — one window a pass, the hottest first — and between pieces lets go of
 * both locks and sleeps as long as the rate asks (et_pass_pace).  A paced
 * object is in the table with what it has so far; each piece runs it
 * through the pipeline again (runtime/pipeline.c remembers the windows
 * already moved).  Passes in the program's threads (enormoustext_refresh)
 * are not paced: they finish what is left.
 */
static bool g_paced_left;        /* an object in the table is paced */
static uint64_t g_piece_moved;   /* windows moved by the passes since the last look */

static size_t piece_limit(void)
{
	return g_run.opt.defer_rate && et_defer_is_worker() ? 1 : 0;
}

/*
 * One pass, in three steps:
 *   1. under the loader's lock (collect_locked): the loader's counts (a
 *      pass over the process's own namespace is skipped when no object was
 *      added or removed since the last complete one), the list of objects
 *      (this namespace's and dlmopen's others), and, with the table lock,
 *      the objects gone from it leave the table;
 *   2. with no lock but the pass lock: the objects the table does not have
 *      (and the paced ones) go through the pipeline, which takes the
 *      loader's lock again only to swap each prepared window in, after
 *      checking that the loader has unloaded nothing since step 1;
 *   3. with the table lock: they go into the table.
 * Called with the pass lock held.  Returns how many objects were new.
 */
struct collected {
	const struct link_map *head;   /* a dlmopen namespace alone, or NULL: the whole process */
	struct et_object *tmp;
	size_t n, len;
	unsigned long long adds, subs;
	bool counted;                  /* the loader gave its counts */
	bool skip;                     /* ... and they did not move */
	bool short_of_memory;
};

/* The loader counts the objects it ever added and removed (dl_phdr_info's
 * dlpi_adds and dlpi_subs, glibc and musl).  A pass over the process's own
 * namespace is needed only when either moved since the last complete one:
 * a dlopen of a library that is already loaded, or a dlclose that leaves
 * it loaded, costs nothing more than reading them. */
static unsigned long long g_seen_adds = ~0ull, g_seen_subs = ~0ull;

/*
 * The other namespaces (dlmopen): dl_iterate_phdr shows only the caller's.
 * glibc (2.35 on) chains one r_debug per namespace from _r_debug
 * (r_version 2, r_next); each one's r_map heads that namespace's objects.
 * So a namespace made by a dlmopen that went to the loader untouched
 * (dlhooks.c), or a dlopen inside one, is seen by the next pass too.  The
 * lists change only under the loader's lock, which step 1 holds.
 */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define ET_NAMESPACES 1
static const struct r_debug_extended *namespaces(void)
{
	if (_r_debug.r_version < 2)
		return NULL;
	/* _r_debug is declared as the short struct; it is the extended one
	 * from version 2 on (hide the cast from the bounds checker). */
	const void *p = &_r_debug;
	__asm__("" : "+r"(p));
	return ((const struct r_debug_extended *)p)->r_next;
}
#endif

static size_t collect_into(const struct collected *c, struct et_object *out, size_t cap)
{
	if (c->head)
		return et_objects_collect_linkmap(c->head, out, cap);
	size_t n = et_objects_collect(out, cap, NULL, NULL);
#ifdef ET_NAMESPACES
	for (const struct r_debug_extended *r = namespaces(); r; r = r->r_next) {
		if (!r->base.r_map)
			continue;
		size_t from = n;
		n += et_objects_collect_linkmap(r->base.r_map, out && n < cap ? out + n : NULL,
		                                out && n < cap ? cap - n : 0);
		for (size_t i = from; out && i < n && i < cap; i++)
			out[i].foreign = true;
	}
#endif
	return n;
}

/* Step 1's prune: whatever the loader no longer has (dlclose, a failed
 * dlopen, an unload we did not see) leaves the table.  Table lock held. */
static void prune(struct et_run *run, const struct et_object *now, size_t n)
{
	size_t kept = 0;
	for (size_t j = 0; j < run->nobjs; j++) {
		bool present = false;
		for (size_t i = 0; i < n && !present; i++)
			present = same_object(&run->objs[j], &now[i]);
		if (!present && run->objs[j].foreign)
			present = et_object_still_mapped(&run->objs[j]);
		if (present) {
			run->objs[kept++] = run->objs[j];
			continue;
		}
		/* Gone: the loader unmapped its span; padding we mapped beyond
		 * it is ours to take away. */
		if (run->objs[j].kinds)
			et_scratch_free(run->objs[j].kinds, run->objs[j].kinds_len);
		for (int p = 0; p < 2; p++)
			if (run->objs[j].pad_hi[p] > run->objs[j].pad_lo[p])
				et_os_unmap((void *)(uintptr_t)run->objs[j].pad_lo[p],
				            run->objs[j].pad_hi[p] - run->objs[j].pad_lo[p]);
	}
	run->nobjs = kept;
}

static void collect_locked(void *arg, unsigned long long adds, unsigned long long subs)
{
	struct collected *c = arg;
	c->adds = adds;
	c->subs = subs;
	c->counted = !c->head && subs != ET_LOADER_SUBS_UNKNOWN;
	if (c->counted && adds == g_seen_adds && subs == g_seen_subs) {
		c->skip = true;
		return;
	}
	size_t cap = collect_into(c, NULL, 0) + 8;
	c->len = cap * sizeof(struct et_object);
	c->tmp = et_scratch_alloc(c->len);
	if (!c->tmp) {
		c->short_of_memory = true;
		return;
	}
	c->n = collect_into(c, c->tmp, cap);
	if (c->n > cap)
		c->n = cap;
	for (size_t i = 0; i < c->n; i++)
		if (c->head)
			c->tmp[i].foreign = true;
	if (!c->head) {
		table_lock();
		prune(&g_run, c->tmp, c->n);
		table_unlock();
	}
}

static size_t process_new_timed(struct et_run *run, const struct link_map *ns_head);

/*
 * Priming again later (ENORMOUSTEXT_PRIME, runtime/remap.c): a window
 * copied because the page cache held it small cannot be read back huge
 * while other processes still map those small pages (the kernel keeps
 * mapped pages) — four compilers started together all map them until
 * each has its copy.  So the worker tries again, 1 s after the pass, then
 * 4 s, then 16 s (ET_PRIME_TRIES in all): by then the others have their
 * copies, the small pages are nobody's, and the first try that drops them
 * reads the window back as one huge folio, which every process then maps
 * — each copy becomes the page cache's, shared.
 */
#define ET_PRIME_TRIES 3u
#define ET_PRIME_FIRST_NS 1000000000ull
static uint64_t g_prime_due;   /* CLOCK_MONOTONIC ns of the next try, 0: none */

/* One pass, its CPU time counted (the report's cpu_ns: what the library
 * cost the process, on whichever thread ran it). */
static size_t process_new(struct et_run *run, const struct link_map *ns_head)
{
	uint64_t c0 = et_thread_cpu_ns();
	size_t k = process_new_timed(run, ns_head);
	__atomic_add_fetch(&run->cpu_ns, et_thread_cpu_ns() - c0, __ATOMIC_RELAXED);
	return k;
}

static size_t process_new_timed(struct et_run *run, const struct link_map *ns_head)
{
	uint64_t t0 = et_now_ns();
	g_pass_short = false;
	/* where a seccomp filter may kill for a call of ours: nothing, and the
	 * reason in the table (runtime/sandbox.c) */
	const char *why = NULL;
	if (et_sandbox_blocks(&why)) {
		run->reason = ET_R_SANDBOX;
		run->reason_detail = why;
		return 0;
	}
	if (!as_headroom(run)) {
		g_pass_short = true;   /* tried again at the next pass: the program may have freed some */
		return 0;
	}
	struct collected c = { .head = ns_head };
	et_loader_locked(collect_locked, &c);
	if (c.skip)
		return 0;
	if (c.short_of_memory) {
		run->reason = ET_R_SCRATCH;
		g_pass_short = true;
		return 0;
	}
	struct et_object *tmp = c.tmp;
	size_t n = c.n;
	for (size_t i = 0; i < n; i++)
		name_main(&tmp[i]);   /* (a readlink: outside the loader's lock) */
	/* The new objects, and the paced ones (ENORMOUSTEXT_DEFER_RATE, or
	 * left for a later pass: run again, their padding so far carried over,
	 * the entry replaced). */
	size_t k = 0, fresh = 0;
	table_lock();
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < run->nobjs && !same_object(&run->objs[j], &tmp[i]))
			j++;
		tmp[i].replaces = 0;
		if (j < run->nobjs && !run->objs[j].paced)
			continue;
		if (j < run->nobjs) {
			tmp[i].replaces = (uint32_t)j + 1;
			memcpy(tmp[i].pad_lo, run->objs[j].pad_lo, sizeof tmp[i].pad_lo);
			memcpy(tmp[i].pad_hi, run->objs[j].pad_hi, sizeof tmp[i].pad_hi);
			tmp[i].elapsed_ns = run->objs[j].elapsed_ns;
			tmp[i].prime_tries = run->objs[j].prime_tries;
		} else {
			fresh++;
		}
		tmp[k++] = tmp[i];
	}
	int reserved = k > 0 ? table_reserve(run, fresh) : 0;
	struct et_run pass = { .opt = run->opt, .si = run->si, .objs = tmp, .nobjs = k, .t0_ns = t0,
	                       .win_limit = piece_limit(), .loader_subs = c.subs,
	                       .deferred = et_defer_is_worker() && !et_defer_hurried() };
	table_unlock();
	if (k > 0 && reserved == 0) {
		et_pipeline_run(&pass);
		table_lock();
		run->si = pass.si;
		if (pass.reason != ET_R_NONE && run->reason == ET_R_NONE) {
			run->reason = pass.reason;
			run->reason_detail = pass.reason_detail;
		}
		__atomic_add_fetch(&g_piece_moved, pass.pieces_moved, __ATOMIC_RELAXED);
		/* entries replaced are found again by identity: the table may
		 * have lost some (a dlclose's prune) since step 1 */
		bool said = __atomic_load_n(&run->summarised, __ATOMIC_ACQUIRE);
		for (size_t i = 0; i < k; i++) {
			size_t at = run->nobjs;
			if (tmp[i].replaces) {
				for (at = 0; at < run->nobjs && !same_object(&run->objs[at], &tmp[i]); at++)
					;
				if (at < run->nobjs && run->objs[at].kinds)
					et_scratch_free(run->objs[at].kinds, run->objs[at].kinds_len);
			}
			if (at == run->nobjs) {
				if (run->nobjs >= g_objs_cap && table_reserve(run, 1) != 0) {
					if (tmp[i].kinds)
						et_scratch_free(tmp[i].kinds, tmp[i].kinds_len);
					continue;
				}
				run->nobjs++;
			}
			run->objs[at] = tmp[i];
			run->objs[at].replaces = 0;
			/* after start-up, a line per object once it is done (the
			 * start-up's summary speaks for its pieces) */
			if (run->passes > 0 && !run->objs[at].paced && (said || !pass.win_limit))
				et_report_objects(run, at, 1);
		}
		run->quick = false;   /* the table now speaks for the process */
		run->passes++;
		if (pass.unloaded)
			g_pass_short = true;   /* the loader unloaded objects meanwhile: again at the next pass */
	} else {
		table_lock();
		g_pass_short = k > 0;
		k = 0;
	}
	/* a paced object left: the next pass must not be skipped on the
	 * loader's counts; copies priming may turn into zero-copy later: a
	 * try scheduled (et_pass_prime_due) */
	bool paced = false, later = false;
	unsigned tries = ET_PRIME_TRIES;
	for (size_t j = 0; j < run->nobjs; j++) {
		paced |= run->objs[j].paced;
		if (run->objs[j].prime_later && run->objs[j].prime_tries < ET_PRIME_TRIES) {
			later = true;
			if (run->objs[j].prime_tries < tries)
				tries = run->objs[j].prime_tries;
		}
	}
	if (paced)
		g_pass_short = true;
	else if (!later)
		et_pipeline_moved_forget();
	if (later && !__atomic_load_n(&g_prime_due, __ATOMIC_ACQUIRE))
		__atomic_store_n(&g_prime_due, et_now_ns() + (ET_PRIME_FIRST_NS << (2 * tries)), __ATOMIC_RELEASE);
	__atomic_store_n(&g_paced_left, paced, __ATOMIC_RELEASE);
	run->elapsed_ns += et_now_ns() - t0;
	table_unlock();
	et_scratch_free(tmp, c.len);
	if (c.counted && !g_pass_short) {
		g_seen_adds = c.adds;
		g_seen_subs = c.subs;
	}
	return k;
}

static void write_report(struct et_run *run)
{
	et_report_write(run);   /* logs a failure itself, naming the path and why */
}

/* The passes asked for while we held the pass lock, then let go of it; a
 * request made after the last look is run here too (see g_pending).  At
 * most ET_DRAIN_PASSES in one go: the loader's lock is not held during a
 * pass, so threads that dlopen and dlclose without pause would ask for one
 * more each time, and the thread holding the pass lock (in its own dlopen,
 * or refresh waiting for the lock) would never get out.  What is still
 * asked for is run by the next dlopen, refresh, reader or worker round. */
#define ET_DRAIN_PASSES 4
static unsigned drain(unsigned budget)
{
	bool changed = false;
	while (budget > 0 && __atomic_load_n(&g_active, __ATOMIC_ACQUIRE) && !et_defer_stop_asked() &&
	       __atomic_exchange_n(&g_pending, 0, __ATOMIC_ACQ_REL)) {
		changed |= process_new(&g_run, NULL) > 0;
		budget--;
	}
	if (changed && g_run.opt.report)
		write_report(&g_run);
	return budget;
}

static void drain_and_unlock(unsigned budget)
{
	for (;;) {
		unsigned left = drain(budget);
		pass_unlock();
		/* (no pass run: the worker stands down, or the copy does not act:
		 * the request stays for whoever can) */
		if (!left || left == budget || !__atomic_load_n(&g_pending, __ATOMIC_ACQUIRE) || !pass_trylock())
			return;
		budget = left;
	}
}

/* RUN_TRY (after dlopen): only if the pass lock is free, and nothing but
 * what was asked for; RUN_WAIT (start-up, the worker): wait for it, and
 * first run what is pending; RUN_WAIT_API (refresh, range): the same,
 * waiting at most ET_PASS_WAIT_NS. */
enum run_mode { RUN_WAIT, RUN_WAIT_API, RUN_TRY, RUN_AFTER_DLOPEN };

/* Run fn(arg) with the pass lock held.  From inside a pass (the lock
 * already this thread's), fn just runs.  Returns whether fn ran. */
static bool run_locked(void (*fn)(void *), void *arg, enum run_mode mode)
{
	if (pass_is_mine()) {
		if (fn)
			fn(arg);
		return true;
	}
	if (mode == RUN_TRY) {
		if (!pass_trylock())
			return false;
	} else if (mode == RUN_AFTER_DLOPEN) {
		if (!pass_lock_polite())
			return false;
	} else if (mode == RUN_WAIT_API) {
		if (!pass_lock_bounded())
			return false;
	} else {
		pass_lock();
	}
	unsigned budget = ET_DRAIN_PASSES;
	if (mode != RUN_TRY && mode != RUN_AFTER_DLOPEN)
		budget = drain(budget);
	if (fn)
		fn(arg);
	drain_and_unlock(budget);
	return true;
}

static bool lazy_ready(void);
static void register_atfork(void);

/* Set in a forked child: see atfork_child. */
static bool g_forked_child;

/* A pass that was asked for and not run, run now if nobody is running one. */
static void run_pending(void)
{
	if (!g_forked_child && __atomic_load_n(&g_pending, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&g_active, __ATOMIC_ACQUIRE) && lazy_ready())
		run_locked(NULL, NULL, RUN_TRY);
}

/*
 * The API's readers (stats, objects): the table lock alone, held only
 * while the table is copied out.  A pass that was asked for runs first
 * (if nobody runs one: never waiting), and one asked for while we held the
 * lock runs after it.
 */
static void read_locked(void (*fn)(void *), void *arg)
{
	if (table_is_mine()) {
		fn(arg);
		return;
	}
	/* After a quick start-up the table is empty: the first reader has it
	 * filled (a cheap pass when nothing has a whole window), so that the
	 * API describes the objects it looked at. */
	if (__atomic_load_n(&g_run.quick, __ATOMIC_ACQUIRE) && !g_forked_child) {
		__atomic_store_n(&g_seen_adds, ~0ull, __ATOMIC_RELEASE);
		__atomic_store_n(&g_pending, 1, __ATOMIC_RELEASE);
	}
	run_pending();
	register_atfork();   /* before the lock is ever taken: see atfork_child */
	table_lock();
	fn(arg);
	table_unlock();
	run_pending();
}

/*
 * fork: nothing of ours is held across it by a thread that is not the
 * forking one, unless a pass or a reader was running then.  The child
 * checks: a lock taken at the fork by a thread that does not exist there
 * means a pass (or a reader) was half-way — the table cannot be trusted,
 * so the child starts with an empty one, fresh locks and no more passes of
 * its own but those its own dlopen/dlclose/enormoustext_refresh ask for;
 * readers never run a pending pass in a child (the parent's request is
 * not its own).  The loader's lock itself is never held across a fork by
 * a pass of ours (runtime/loader.c).
 */
static void atfork_child(void)
{
	g_forked_child = true;
	__atomic_store_n(&g_pending, 0, __ATOMIC_RELEASE);
	/* (a flag can be clear with its mutex still locked: a thread forked
	 * from between the two; the mutex itself tells) */
	bool pass_held = false, table_held = false;
	if (!pass_is_mine()) {
		pass_held = pthread_mutex_trylock(&g_pass) != 0;
		if (!pass_held)
			pthread_mutex_unlock(&g_pass);
	}
	if (!table_is_mine()) {
		table_held = pthread_mutex_trylock(&g_table) != 0;
		if (!table_held)
			pthread_mutex_unlock(&g_table);
	}
	if (!pass_held && !table_held)
		return;
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	if (pass_held) {
		memcpy(&g_pass, &fresh, sizeof fresh);
		__atomic_store_n(&g_pass_held, 0, __ATOMIC_RELEASE);
	}
	if (table_held) {
		memcpy(&g_table, &fresh, sizeof fresh);
		__atomic_store_n(&g_table_held, 0, __ATOMIC_RELEASE);
	}
	g_run.nobjs = 0;
	g_run.reason = ET_R_FORKED;
}

/* Once, by whichever comes first: a pass, a reader of the API.  Not at a
 * quick start-up (its cost would be paid by every process of a preloaded
 * tree), but always before the lock can be held at a fork. */
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
static void atfork_register_now(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}
static void register_atfork(void)
{
	pthread_once(&g_atfork_once, atfork_register_now);
}

/* The start-up was quick and silent: the checks it left for the first
 * dlopen.  Done by one thread; the others never wait for it (the checks
 * look symbols up, which takes the loader's lock, which a thread inside
 * dlopen — say, in a constructor that dlopens — holds): they leave their
 * request pending for it. */
static int g_lazy_state;   /* 0 not done, 1 in progress, 2 done */

static void lazy_init(void)
{
	bool (*decide)(struct et_run *) = g_run.decide_later;
	if (decide) {
		g_run.decide_later = NULL;
		if (!decide(&g_run)) {
			__atomic_store_n(&g_active, false, __ATOMIC_RELEASE);
			return;
		}
	}
	if (et_other_find()) {
		__atomic_store_n(&g_active, false, __ATOMIC_RELEASE);
		return;
	}
	register_atfork();
}

static bool lazy_ready(void)
{
	if (!g_run.quick_lazy)
		return true;
	int st = __atomic_load_n(&g_lazy_state, __ATOMIC_ACQUIRE);
	if (st == 2)
		return true;
	int zero = 0;
	if (st == 0 && __atomic_compare_exchange_n(&g_lazy_state, &zero, 1, false, __ATOMIC_ACQ_REL,
	                                           __ATOMIC_ACQUIRE)) {
		lazy_init();
		__atomic_store_n(&g_lazy_state, 2, __ATOMIC_RELEASE);
		return true;
	}
	return false;
}

/* After the loader added or removed objects (dlopen, dlclose): ask for a
 * pass, and run it unless someone holds the lock — then they run it. */
void et_after_dlopen(void)
{
	__atomic_store_n(&g_pending, 1, __ATOMIC_RELEASE);
	if (!lazy_ready())
		return;
	if (et_other.refresh) {
		et_other.refresh();
		return;
	}
	if (!__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
		return;
	/* ENORMOUSTEXT_DEFER: the worker runs the pass, off this dlopen */
	if (et_defer_poke())
		return;
	run_locked(NULL, NULL, RUN_AFTER_DLOPEN);   /* drains g_pending (or leaves it, see pass_lock_polite) */
}

/* The deferred worker's service (runtime/defer.c): what was asked for. */
void et_pass_serve(void)
{
	if (__atomic_load_n(&g_pending, __ATOMIC_ACQUIRE) && !g_forked_child) {
		run_locked(NULL, NULL, RUN_WAIT);
		et_pass_pace();
	}
}

static void piece_locked(void *arg)
{
	(void)arg;
	process_new(&g_run, NULL);
}

/* On the worker, after a pass: the pieces left, at ENORMOUSTEXT_DEFER_RATE
 * (each piece's windows count a whole huge page of copying, zero-copy ones
 * too: reading the file in is the same traffic).  Ends early when the
 * worker is asked to stand down (what is left stays small, its reason
 * ET_R_PACED). */
void et_pass_pace(void)
{
	const uint64_t rate = g_run.opt.defer_rate;
	if (!rate || !et_defer_is_worker())
		return;
	bool changed = false;
	while (__atomic_load_n(&g_paced_left, __ATOMIC_ACQUIRE) && !g_forked_child) {
		uint64_t n = __atomic_exchange_n(&g_piece_moved, 0, __ATOMIC_RELAXED);
		uint64_t bytes = (n ? n : 1) * g_run.si.pmd_size;
		if (!et_defer_sleep(bytes / rate * 1000000000ull + bytes % rate * 1000000000ull / rate))
			break;
		run_locked(piece_locked, NULL, RUN_WAIT);
		changed = true;
	}
	if (changed && g_run.opt.report)
		write_report(&g_run);
}

void et_after_untracked_dlopen(void)
{
	__atomic_store_n(&g_pending, 1, __ATOMIC_RELEASE);
}

void et_after_dlclose(void)
{
	et_after_dlopen();
}

/* A dlopen that failed: the loader may have mapped objects and unmapped
 * them again, which the next pass sees in its counts.  The first pass
 * after start-up looks a symbol up (lazy_init), and a successful dlsym
 * clears the loader's error text that the caller is about to read with
 * dlerror: until that is done, only ask. */
void et_after_failed_dlopen(void)
{
	if (g_run.quick_lazy && __atomic_load_n(&g_lazy_state, __ATOMIC_ACQUIRE) != 2) {
		__atomic_store_n(&g_pending, 1, __ATOMIC_RELEASE);
		return;
	}
	et_after_dlopen();
}

static void dlmopen_pass(void *head)
{
	if (process_new(&g_run, head) > 0 && g_run.opt.report)
		write_report(&g_run);
}

void et_after_dlmopen(const struct link_map *head)
{
	if (!lazy_ready() || et_other.refresh || !__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
		return;
	/* Never wait here (see THE LOCK ORDER): when a pass is running, this
	 * namespace's objects are left as they are. */
	run_locked(dlmopen_pass, (void *)head, RUN_TRY);
}

static void startup_pass(void *arg)
{
	struct et_run *run = arg;
	run->ran = true;
	if (!run->quick)
		process_new(run, NULL);
	__atomic_store_n(&g_active, true, __ATOMIC_RELEASE);
}

/* The worker (runtime/defer.c): when the next try of priming is due. */
uint64_t et_pass_prime_due(void)
{
	return __atomic_load_n(&g_prime_due, __ATOMIC_ACQUIRE);
}

static void prime_later_locked(void *arg)
{
	(void)arg;
	bool any = false;
	table_lock();
	for (size_t j = 0; j < g_run.nobjs; j++) {
		struct et_object *o = &g_run.objs[j];
		if (o->prime_later && o->prime_tries < ET_PRIME_TRIES) {
			o->paced = true;      /* run again: its copies primed (pipeline.c) */
			o->prime_tries++;
			any = true;
		}
	}
	table_unlock();
	if (!any)
		return;
	g_seen_adds = ~0ull;          /* not skipped on the loader's counts */
	if (process_new(&g_run, NULL) > 0 && g_run.opt.report)
		write_report(&g_run);
}

void et_pass_prime_later(void)
{
	__atomic_store_n(&g_prime_due, 0, __ATOMIC_RELEASE);
	if (!g_forked_child && __atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
		run_locked(prime_later_locked, NULL, RUN_WAIT);
}

/* ------------------------------------------------------- for init.c, api.c */

void et_pass_reserve(size_t nobjs)
{
	table_lock();
	(void)table_reserve(&g_run, nobjs);
	table_unlock();
}

ET_STARTUP struct et_run *et_pass_state(void)
{
	return &g_run;
}

/* The quick start-up (nothing to move, nothing to say): everything loaded
 * now has been looked at; the checks wait for the first dlopen. */
ET_STARTUP static int counts_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		g_seen_adds = info->dlpi_adds;
		g_seen_subs = info->dlpi_subs;
	}
	return 1;
}

ET_STARTUP void et_pass_start_quick(void)
{
	/* the loader's counts read without a fork gate's handlers (their
	 * registration is a cost every process of a preloaded tree would pay):
	 * one short walk at start-up, before the program's threads */
	dl_iterate_phdr(counts_cb, NULL);
	g_run.quick_lazy = true;
	__atomic_store_n(&g_active, true, __ATOMIC_RELEASE);
}

void et_pass_start(void)
{
	register_atfork();
	run_locked(startup_pass, &g_run, RUN_WAIT);
}

struct read_call {
	void (*fn)(const struct et_run *, void *);
	void *arg;
};

static void read_cb(void *a)
{
	struct read_call *c = a;
	c->fn(&g_run, c->arg);
}

void et_pass_read(void (*fn)(const struct et_run *, void *), void *arg)
{
	struct read_call c = { fn, arg };
	read_locked(read_cb, &c);
}

/* ------------------------------------------------- enormoustext_refresh() */

static void refresh_locked(void *arg)
{
	/* run_locked has run what was pending; one more pass for what
	 * the caller loaded without telling us (or through the loader's own
	 * dlopen, see dlhooks.c): it is skipped when the loader's counts did
	 * not move. */
	size_t before = g_run.nobjs;
	process_new(&g_run, NULL);
	*(int *)arg = g_run.nobjs > before ? (int)(g_run.nobjs - before) : 0;
	if (*(int *)arg && g_run.opt.report)
		write_report(&g_run);
}

int et_pass_refresh(void)
{
	if (et_other.refresh)
		return et_other.refresh();
	if (!lazy_ready())
		return -EAGAIN;
	if (et_other.refresh)
		return et_other.refresh();
	if (!__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
		return 0;
	if (pass_is_mine() || table_is_mine())
		return -EDEADLK;
	int n = 0;
	if (!run_locked(refresh_locked, &n, RUN_WAIT_API))
		return -EAGAIN;
	return n;
}

/* ---------------------------------------------- enormoustext_remap_range() */

struct range_ctx {
	const void *start;
	size_t len;
	int moved;
};

struct range_subs {
	unsigned long long subs;
};

static void range_subs_locked(void *arg, unsigned long long adds, unsigned long long subs)
{
	(void)adds;
	((struct range_subs *)arg)->subs = subs;
}

/* A pass like the others: the swaps happen under the loader's lock, and
 * only if it has unloaded nothing since this began. */
static void range_locked(void *arg)
{
	struct range_ctx *c = arg;
	const void *start = c->start;
	size_t len = c->len;
	struct et_object obj;
	memset(&obj, 0, sizeof obj);
	obj.nsegs = 1;
	obj.segs[0].start = (uintptr_t)start;
	obj.segs[0].end = (uintptr_t)start + len;
	obj.segs[0].flags = PF_R_FLAG | PF_X_FLAG;
	obj.skip = ET_R_NONE;
	et_strlcpy(obj.path, "(range)", sizeof obj.path);
	const char *why = NULL;
	if (et_sandbox_blocks(&why)) {
		c->moved = -EPERM;
		return;
	}
	struct range_subs rs = { ET_LOADER_SUBS_UNKNOWN };
	et_loader_locked(range_subs_locked, &rs);
	struct et_run pass = { .opt = g_run.opt, .si = g_run.si, .objs = &obj, .nobjs = 1,
	                       .again = true, .t0_ns = et_now_ns(), .loader_subs = rs.subs };
	pass.opt.include = pass.opt.exclude = NULL;
	pass.opt.min_bytes = 0;
	pass.opt.prime = false;
	et_pipeline_run(&pass);
	g_run.si = pass.si;
	c->moved = (int)obj.windows_huge;
}

int et_pass_range(const void *start, size_t len)
{
	if (!start || len == 0)
		return -EINVAL;
	if (!lazy_ready())
		return -EAGAIN;
	if (!__atomic_load_n(&g_active, __ATOMIC_ACQUIRE) || et_other.stats)
		return -EPERM;
	if (pass_is_mine() || table_is_mine())
		return -EDEADLK;
	struct range_ctx c = { start, len, 0 };
	if (!run_locked(range_locked, &c, RUN_WAIT_API))
		return -EAGAIN;
	return c.moved;
}
