/*
 * runtime/pass.c — when a pass runs, and the process's run.
 *
 * A pass (one pass over the loader's objects: pass_one.c) runs at
 * start-up, after dlopen/dlclose/dlmopen (asked for by the wrappers
 * through et_after_*), on the deferred worker, for the API's refresh and
 * range, and, paced, for ENORMOUSTEXT_DEFER_RATE's pieces and priming
 * tried again later.  Each one runs with the pass lock held, and the API's
 * readers see the table with the table lock held (pass_locks.c).
 *
 * Owns: the process's run (g_run: options, facts, the table of every
 * object looked at), whether this copy acts (g_active), the requests for
 * a pass made after dlopen/dlclose (g_pending), which way each caller
 * waits for the pass lock, what a forked child keeps, and the lazy checks
 * a quick start-up leaves for the first dlopen.
 * May call: core, runtime/pass_one (one pass), runtime/pass_locks (the
 * locks), runtime/loader (its lock, briefly), runtime/pipeline (a range's
 * pass), runtime/report (the report file after a pass that found
 * something), runtime/other, runtime/defer (the worker), runtime/sandbox
 * (may the library act here, now?).
 * Never: calls a wrapper in interpose/ (they call in here, through
 * et_after_*); waits for the pass lock while it holds the loader's lock
 * or the table lock; holds the loader's lock during the long work of a
 * pass.  READ "THE LOCK ORDER" (runtime/pass_locks.c) BEFORE CHANGING
 * ANYTHING HERE.
 */
#include "runtime/pass.h"

#include "core/util.h"
#include "runtime/defer.h"
#include "runtime/loader.h"
#include "runtime/other.h"
#include "runtime/pass_locks.h"
#include "runtime/pass_one.h"
#include "runtime/pipeline.h"
#include "runtime/report.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

static struct et_run g_run;
static bool g_active;          /* this copy acts: set by the constructor */
/* A pass was asked for (after dlopen/dlclose, or by a quick start-up's
 * first reader): whoever holds the pass lock runs it (THE LOCK ORDER). */
static int g_pending;

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
		changed |= et_pass_one_run(&g_run, NULL) > 0;
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
		et_pass_locks_release();
		/* (no pass run: the worker stands down, or the copy does not act:
		 * the request stays for whoever can) */
		if (!left || left == budget || !__atomic_load_n(&g_pending, __ATOMIC_ACQUIRE) || !et_pass_locks_try())
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
	if (et_pass_locks_mine()) {
		if (fn)
			fn(arg);
		return true;
	}
	if (mode == RUN_TRY) {
		if (!et_pass_locks_try())
			return false;
	} else if (mode == RUN_AFTER_DLOPEN) {
		if (!et_pass_locks_wait_polite())
			return false;
	} else if (mode == RUN_WAIT_API) {
		if (!et_pass_locks_wait_bounded())
			return false;
	} else {
		et_pass_locks_wait();
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
	if (et_pass_locks_table_mine()) {
		fn(arg);
		return;
	}
	/* After a quick start-up the table is empty: the first reader has it
	 * filled (a cheap pass when nothing has a whole window), so that the
	 * API describes the objects it looked at. */
	if (__atomic_load_n(&g_run.quick, __ATOMIC_ACQUIRE) && !g_forked_child) {
		et_pass_one_counts_forget();
		__atomic_store_n(&g_pending, 1, __ATOMIC_RELEASE);
	}
	run_pending();
	register_atfork();   /* before the lock is ever taken: see atfork_child */
	et_pass_locks_table_hold();
	fn(arg);
	et_pass_locks_table_release();
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
	if (!et_pass_locks_fork_child())
		return;
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
	et_pass_one_run(&g_run, NULL);
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
	while (et_pass_one_paced_left() && !g_forked_child) {
		uint64_t n = et_pass_one_pieces_taken();
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
	if (et_pass_one_run(&g_run, head) > 0 && g_run.opt.report)
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
		et_pass_one_run(run, NULL);
	__atomic_store_n(&g_active, true, __ATOMIC_RELEASE);
}

/* The worker (runtime/defer.c): when the next try of priming is due. */
uint64_t et_pass_prime_due(void)
{
	return et_pass_one_prime_due();
}

static void prime_later_locked(void *arg)
{
	(void)arg;
	bool any = false;
	et_pass_locks_table_hold();
	for (size_t j = 0; j < g_run.nobjs; j++) {
		struct et_object *o = &g_run.objs[j];
		if (o->prime_later && o->prime_tries < ET_PRIME_TRIES) {
			o->paced = true;      /* run again: its copies primed (pipeline.c) */
			o->prime_tries++;
			any = true;
		}
	}
	et_pass_locks_table_release();
	if (!any)
		return;
	et_pass_one_counts_forget();   /* not skipped on the loader's counts */
	if (et_pass_one_run(&g_run, NULL) > 0 && g_run.opt.report)
		write_report(&g_run);
}

void et_pass_prime_later(void)
{
	et_pass_one_prime_due_clear();
	if (!g_forked_child && __atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
		run_locked(prime_later_locked, NULL, RUN_WAIT);
}

/* ------------------------------------------------------- for init.c, api.c */

ET_STARTUP void et_pass_reserve(size_t nobjs)
{
	et_pass_locks_table_hold();
	(void)et_pass_one_reserve(&g_run, nobjs);
	et_pass_locks_table_release();
}

ET_STARTUP struct et_run *et_pass_state(void)
{
	return &g_run;
}

/* The quick start-up (nothing to move, nothing to say): everything loaded
 * now has been looked at; the checks wait for the first dlopen. */
ET_STARTUP void et_pass_start_quick(void)
{
	/* the loader's counts read without a fork gate's handlers (their
	 * registration is a cost every process of a preloaded tree would pay):
	 * one short walk at start-up, before the program's threads */
	et_pass_one_counts_read();
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
	et_pass_one_run(&g_run, NULL);
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
	if (et_pass_locks_mine() || et_pass_locks_table_mine())
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
	if (et_pass_locks_mine() || et_pass_locks_table_mine())
		return -EDEADLK;
	struct range_ctx c = { start, len, 0 };
	if (!run_locked(range_locked, &c, RUN_WAIT_API))
		return -EAGAIN;
	return c.moved;
}
