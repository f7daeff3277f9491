/*
 * runtime/pass.c — the object table, the passes over it, and THE LOCK.
 *
 * Owns: the process's run (g_run: options, facts, the table of every
 * object looked at), the one lock that guards it and every pass, the
 * requests for a pass made after dlopen/dlclose (g_pending), what a forked
 * child keeps, and the lazy checks a quick start-up leaves for the first
 * dlopen.  The place a background worker would live.
 * May call: core, runtime/objects (the loader's list), runtime/pipeline
 * (one pass over new objects), runtime/report (the report file after a
 * pass that found something), runtime/other.
 * Never: calls a wrapper in interpose/ (they call in here, through
 * et_after_*); waits for our lock inside dl_iterate_phdr except as the
 * lock order below allows; holds our lock while it waits for the
 * loader's.  READ "THE LOCK ORDER" BELOW BEFORE CHANGING ANYTHING HERE.
 */
#include "runtime/pass.h"

#include "core/log.h"
#include "core/util.h"
#include "os/os.h"
#include "runtime/defer.h"
#include "runtime/objects.h"
#include "runtime/other.h"
#include "runtime/pipeline.h"
#include "runtime/report.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static struct et_run g_run;
static bool g_active;          /* this copy acts: set by the constructor */
static size_t g_objs_cap;      /* capacity of g_run.objs */
static bool g_pass_short;      /* the last pass could not take every object in */

/* The lock of the object table and of every pass.  Only the constructor,
 * dlclose and the API wait for it; after dlopen a thread only tries it,
 * and whoever holds it runs the pass that was asked for (g_pending) —
 * so a dlopen from a constructor, a destructor or a signal-free nested
 * loader path can never deadlock on it. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_pending;
static pthread_t g_lock_owner;   /* valid while g_lock_held */
static int g_lock_held;

static void lock(void)
{
	pthread_mutex_lock(&g_lock);
	g_lock_owner = pthread_self();
	__atomic_store_n(&g_lock_held, 1, __ATOMIC_RELEASE);
}

static bool trylock(void)
{
	if (pthread_mutex_trylock(&g_lock) != 0)
		return false;
	g_lock_owner = pthread_self();
	__atomic_store_n(&g_lock_held, 1, __ATOMIC_RELEASE);
	return true;
}

static void unlock(void)
{
	__atomic_store_n(&g_lock_held, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_lock);
}

static bool lock_is_mine(void)
{
	return __atomic_load_n(&g_lock_held, __ATOMIC_ACQUIRE) && pthread_equal(g_lock_owner, pthread_self());
}

/* Same loaded object: same place, same program headers, same name (two
 * libraries can be loaded at one address one after the other). */
static bool same_object(const struct et_object *a, const struct et_object *b)
{
	return a->base == b->base && a->phdr == b->phdr && !strcmp(a->path, b->path);
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
		ssize_t n = readlink("/proc/self/exe", o->path, sizeof o->path - 1);
		o->path[n > 0 ? n : 0] = '\0';
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

static size_t process_new_locked(struct et_run *run, const struct link_map *ns_head)
{
	uint64_t t0 = et_now_ns();
	if (!as_headroom(run)) {
		g_pass_short = true;   /* tried again at the next pass: the program may have freed some */
		return 0;
	}
	size_t cap = (ns_head ? et_objects_collect_linkmap(ns_head, NULL, 0)
	                      : et_objects_collect(NULL, 0, NULL, NULL)) + 8;
	size_t len = cap * sizeof(struct et_object);
	struct et_object *tmp = et_scratch_alloc(len);
	if (!tmp) {
		run->reason = ET_R_SCRATCH;
		g_pass_short = true;
		return 0;
	}
	size_t n = ns_head ? et_objects_collect_linkmap(ns_head, tmp, cap)
	                   : et_objects_collect(tmp, cap, NULL, NULL);
	if (n > cap)
		n = cap;
	for (size_t i = 0; i < n; i++) {
		tmp[i].foreign = ns_head != NULL;
		name_main(&tmp[i]);
	}
	/* Prune: whatever the loader no longer has (dlclose, a failed dlopen,
	 * an unload we did not see) leaves the table. */
	if (!ns_head) {
		size_t kept = 0;
		for (size_t j = 0; j < run->nobjs; j++) {
			bool present = false;
			for (size_t i = 0; i < n && !present; i++)
				present = same_object(&run->objs[j], &tmp[i]);
			if (!present && run->objs[j].foreign)
				present = et_object_still_mapped(&run->objs[j]);
			if (present) {
				run->objs[kept++] = run->objs[j];
				continue;
			}
			/* Gone: the loader unmapped its span; padding we mapped
			 * beyond it is ours to take away. */
			if (run->objs[j].kinds)
				et_scratch_free(run->objs[j].kinds, run->objs[j].kinds_len);
			for (int p = 0; p < 2; p++)
				if (run->objs[j].pad_hi[p] > run->objs[j].pad_lo[p])
					et_os_unmap((void *)(uintptr_t)run->objs[j].pad_lo[p],
					       run->objs[j].pad_hi[p] - run->objs[j].pad_lo[p]);
		}
		run->nobjs = kept;
	}
	/* The new objects, and the paced ones (ENORMOUSTEXT_DEFER_RATE: run
	 * again, their padding so far carried over, the entry replaced). */
	size_t k = 0, fresh = 0;
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
		} else {
			fresh++;
		}
		tmp[k++] = tmp[i];
	}
	if (k > 0 && table_reserve(run, fresh) == 0) {
		struct et_run pass = { .opt = run->opt, .si = run->si, .objs = tmp, .nobjs = k, .t0_ns = t0,
		                       .win_limit = piece_limit() };
		et_pipeline_run(&pass);
		run->si = pass.si;
		if (pass.reason != ET_R_NONE && run->reason == ET_R_NONE) {
			run->reason = pass.reason;
			run->reason_detail = pass.reason_detail;
		}
		__atomic_add_fetch(&g_piece_moved, pass.pieces_moved, __ATOMIC_RELAXED);
		for (size_t i = 0; i < k; i++) {
			size_t at = run->nobjs;
			if (tmp[i].replaces) {
				at = tmp[i].replaces - 1;
				if (run->objs[at].kinds)
					et_scratch_free(run->objs[at].kinds, run->objs[at].kinds_len);
			} else {
				run->nobjs++;
			}
			run->objs[at] = tmp[i];
			run->objs[at].replaces = 0;
			/* after start-up, a line per object once it is done (the
			 * start-up's summary speaks for its pieces) */
			bool said = __atomic_load_n(&run->summarised, __ATOMIC_ACQUIRE);
			if (run->passes > 0 && !run->objs[at].paced && (said || !pass.win_limit))
				et_report_objects(run, at, 1);
		}
		run->quick = false;   /* the table now speaks for the process */
		run->passes++;
	} else {
		g_pass_short = k > 0;
		k = 0;
	}
	/* a paced object left: the next pass must not be skipped on the
	 * loader's counts (see pass_cb) */
	bool paced = false;
	for (size_t j = 0; j < run->nobjs && !paced; j++)
		paced = run->objs[j].paced;
	if (paced)
		g_pass_short = true;
	else
		et_pipeline_moved_forget();
	__atomic_store_n(&g_paced_left, paced, __ATOMIC_RELEASE);
	et_scratch_free(tmp, len);
	run->elapsed_ns += et_now_ns() - t0;
	return k;
}

struct pass_ctx {
	struct et_run *run;
	const struct link_map *head;
	size_t result;
};

/*
 * The loader counts the objects it ever added and removed (dl_phdr_info's
 * dlpi_adds and dlpi_subs, glibc and musl).  A pass over the process's own
 * namespace is needed only when either moved since the last complete one:
 * a dlopen of a library that is already loaded, or a dlclose that leaves
 * it loaded, costs nothing more than reading them.
 */
static unsigned long long g_seen_adds = ~0ull, g_seen_subs = ~0ull;

static bool loader_counts(const struct dl_phdr_info *info, size_t size, unsigned long long c[2])
{
	if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
		return false;
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return true;
}

static int counts_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long c[2];
	if (loader_counts(info, size, c)) {
		g_seen_adds = c[0];
		g_seen_subs = c[1];
	}
	(void)arg;
	return 1;
}

/*
 * The other namespaces (dlmopen): dl_iterate_phdr shows only the caller's.
 * glibc (2.35 on) chains one r_debug per namespace from _r_debug
 * (r_version 2, r_next); each one's r_map heads that namespace's objects.
 * So a namespace made by a dlmopen that went to the loader untouched
 * (dlhooks.c), or a dlopen inside one, is seen by the next pass too.  The
 * lists change only under the loader's lock, which a pass holds.
 */
static size_t process_namespaces(struct et_run *run)
{
	size_t n = 0;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	if (_r_debug.r_version < 2)
		return 0;
	/* _r_debug is declared as the short struct; it is the extended one
	 * from version 2 on (hide the cast from the bounds checker). */
	const void *p = &_r_debug;
	__asm__("" : "+r"(p));
	for (const struct r_debug_extended *r = ((const struct r_debug_extended *)p)->r_next; r; r = r->r_next)
		if (r->base.r_map)
			n += process_new_locked(run, r->base.r_map);
#else
	(void)run;
#endif
	return n;
}

static int pass_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct pass_ctx *c = arg;
	unsigned long long now[2];
	bool counted = !c->head && loader_counts(info, size, now);
	if (counted && now[0] == g_seen_adds && now[1] == g_seen_subs) {
		c->result = 0;
		return 1;
	}
	g_pass_short = false;
	c->result = process_new_locked(c->run, c->head);
	if (!c->head)
		c->result += process_namespaces(c->run);
	if (counted && !g_pass_short) {
		g_seen_adds = now[0];
		g_seen_subs = now[1];
	}
	return 1;
}

/*
 * A pass runs inside a dl_iterate_phdr callback: glibc holds its
 * dl_load_write_lock there, the lock it also holds while it unmaps an
 * object (dlclose, or a dlopen that failed after mapping).  So no object
 * can vanish while the pass copies from it.  (musl never unmaps.)
 */
static size_t process_new(struct et_run *run, const struct link_map *ns_head)
{
	struct pass_ctx c = { run, ns_head, 0 };
	dl_iterate_phdr(pass_cb, &c);
	return c.result;
}

static void write_report(struct et_run *run)
{
	et_report_write(run);   /* logs a failure itself, naming the path and why */
}

/* Run every pass that was asked for, then let go of the lock; a request
 * made while we held it is run here too (see g_lock). */
static void drain_and_unlock(void)
{
	for (;;) {
		bool changed = false;
		while (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE) &&
		       __atomic_exchange_n(&g_pending, 0, __ATOMIC_ACQ_REL))
			changed |= process_new(&g_run, NULL) > 0;
		if (changed && g_run.opt.report)
			write_report(&g_run);
		unlock();
		if (!__atomic_load_n(&g_pending, __ATOMIC_ACQUIRE) || !trylock())
			return;
	}
}

/* For the passes that wait (start-up, enormoustext_refresh, the range
 * pass), inside dl_iterate_phdr: take the lock and first run any pass that
 * was asked for (the dlopen that asked has returned to its caller already). */
static void lock_and_drain(void)
{
	lock();
	bool changed = false;
	while (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE) &&
	       __atomic_exchange_n(&g_pending, 0, __ATOMIC_ACQ_REL))
		changed |= process_new(&g_run, NULL) > 0;
	if (changed && g_run.opt.report)
		write_report(&g_run);
}

/*
 * THE LOCK ORDER.  Two locks matter: the loader's (glibc's
 * dl_load_write_lock, held around every dl_iterate_phdr callback and while
 * the loader unmaps an object) and ours, g_lock.  The loader's is always
 * the outer one: whoever needs both takes the loader's first, by running
 * inside dl_iterate_phdr (glibc allows that recursively) — every pass, the
 * start-up, enormoustext_refresh, the range pass.  Whoever holds g_lock
 * outside dl_iterate_phdr (the API's readers, see read_locked) never waits
 * for the loader's lock while holding it.  So no cycle: a program's own
 * dl_iterate_phdr callback that calls the API takes ours after the
 * loader's, like everyone else.  Inside dl_iterate_phdr, waiting for ours
 * only ever waits for a reader (glibc lets one thread in at a time; musl
 * holds no lock there), so a dlopen from a constructor or a destructor
 * cannot deadlock on it either.  RUN_TRY (after dlopen) runs what was asked
 * for and nothing else; RUN_WAIT first runs what is pending.
 */
enum run_mode { RUN_WAIT, RUN_TRY };

struct locked_call {
	void (*fn)(void *);
	void *arg;
	enum run_mode mode;
	bool ran;
};

static int locked_cb(struct dl_phdr_info *info, size_t size, void *a)
{
	(void)info;
	(void)size;
	struct locked_call *c = a;
	/* Waiting here is safe: inside dl_iterate_phdr no other pass can hold
	 * our lock (glibc lets one thread at a time in), only a reader, and a
	 * reader waits for nothing while it holds it. */
	if (c->mode == RUN_TRY)
		lock();
	else
		lock_and_drain();
	if (c->fn)
		c->fn(c->arg);
	c->ran = true;
	drain_and_unlock();
	return 1;
}

/* Run fn(arg) with the loader's lock and ours held (pending passes run
 * first with RUN_WAIT; with RUN_TRY, only if our lock is free).  From
 * inside a pass (the lock already ours), fn just runs.  Returns whether fn
 * ran. */
static bool run_locked(void (*fn)(void *), void *arg, enum run_mode mode)
{
	if (lock_is_mine()) {
		if (fn)
			fn(arg);
		return true;
	}
	struct locked_call c = { fn, arg, mode, false };
	dl_iterate_phdr(locked_cb, &c);
	return c.ran;
}

static bool lazy_ready(void);
static void register_atfork(void);

/* Set in a forked child: see atfork_child. */
static bool g_forked_child;

/* A pass that was asked for and not run, run now the loader's way round. */
static void run_pending(void)
{
	if (!g_forked_child && __atomic_load_n(&g_pending, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&g_active, __ATOMIC_ACQUIRE) && lazy_ready())
		run_locked(NULL, NULL, RUN_TRY);
}

/*
 * The API's readers (stats, objects): our lock alone, outside
 * dl_iterate_phdr, held only while the table is copied out.  A pass that
 * was asked for runs first (through dl_iterate_phdr, never waiting), and
 * one asked for while we held the lock runs after it: RUN_TRY left it to
 * the holder, and a reader cannot run a pass with our lock held (the
 * loader's lock would then come second).  Living outside dl_iterate_phdr
 * matters for fork too: glibc does not reset its dl_iterate_phdr lock in a
 * child, so a thread of the parent that sat inside dl_iterate_phdr at the
 * fork leaves it taken for good there.
 */
static void read_locked(void (*fn)(void *), void *arg)
{
	if (lock_is_mine()) {
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
	lock();
	fn(arg);
	unlock();
	run_pending();
}

/*
 * fork: nothing is held across it (holding our lock there made threads
 * queue up inside dl_iterate_phdr for it, and a child of such a fork finds
 * glibc's dl_iterate_phdr lock taken for good).  The child checks instead:
 * our lock taken at the fork means a thread that does not exist there was
 * half-way through a pass — the table cannot be trusted, so the child
 * starts with an empty one, a fresh lock and no more passes of its own
 * but those its own dlopen/dlclose/enormoustext_refresh ask for; readers
 * never run a pending pass in a child (the parent's request is not its own,
 * and that dl_iterate_phdr could be the one left locked).
 */
static void atfork_child(void)
{
	g_forked_child = true;
	__atomic_store_n(&g_pending, 0, __ATOMIC_RELEASE);
	if (lock_is_mine())
		return;   /* forked from inside a pass: the same thread goes on */
	if (pthread_mutex_trylock(&g_lock) == 0) {
		unlock();
		return;
	}
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	memcpy(&g_lock, &fresh, sizeof fresh);
	__atomic_store_n(&g_lock_held, 0, __ATOMIC_RELEASE);
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
	run_locked(NULL, NULL, RUN_TRY);   /* drains g_pending, or the holder will */
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
	/* Never wait here (see g_lock): when a pass is running, this
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

/* ------------------------------------------------------- for init.c, api.c */

struct et_run *et_pass_state(void)
{
	return &g_run;
}

/* The quick start-up (nothing to move, nothing to say): everything loaded
 * now has been looked at; the checks wait for the first dlopen. */
void et_pass_start_quick(void)
{
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
	/* lock_and_drain has run what was pending; one more pass for what
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
	if (lock_is_mine())
		return -EDEADLK;
	int n = 0;
	run_locked(refresh_locked, &n, RUN_WAIT);
	return n;
}

/* ---------------------------------------------- enormoustext_remap_range() */

struct range_ctx {
	const void *start;
	size_t len;
	int moved;
};

/* Inside dl_iterate_phdr like every pass: nothing is unmapped meanwhile. */
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
	struct et_run pass = { .opt = g_run.opt, .si = g_run.si, .objs = &obj, .nobjs = 1,
	                       .again = true, .t0_ns = et_now_ns() };
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
	if (lock_is_mine())
		return -EDEADLK;
	struct range_ctx c = { start, len, 0 };
	run_locked(range_locked, &c, RUN_WAIT);
	return c.moved;
}
