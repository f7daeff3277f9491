/*
 * runtime/pass_one.c — one pass over the loader's objects, into the
 * process's object table (pass.c decides when one runs).
 *
 *   1. under the loader's lock: its counts (nothing to do when they did
 *      not move), its list of objects (dlmopen's namespaces too), and the
 *      objects gone from it leave the table;
 *   2. with no lock but the pass lock: the new objects (and the paced ones)
 *      through the pipeline (runtime/pipeline.c);
 *   3. with the table lock: they go into the table, a log line each after
 *      start-up.
 *
 * Owns: the table's room (its capacity), the loader's counts last seen,
 * whether the last pass fell short (then the next one is not skipped),
 * ENORMOUSTEXT_DEFER_RATE's pieces (what is paced, how much moved), when
 * priming is next tried (ENORMOUSTEXT_PRIME: 1 s, 4 s, 16 s after).
 * May call: core (util), os (the executable's path, munmap of an unloaded
 * object's padding), runtime/pass_locks (the table lock), runtime/loader
 * (its lock, for step 1), runtime/objects (the loader's list),
 * runtime/pipeline, runtime/report (an object's line), runtime/defer (on
 * the worker? hurried?), runtime/sandbox (may the library act now?).
 * Never: runs without the pass lock held (the caller's, pass.c); waits for
 * the loader's lock while holding the table lock; holds the loader's lock
 * during step 2; allocates with malloc (the table is scratch memory).
 */
#include "runtime/pass_one.h"

#include "core/util.h"
#include "os/os.h"
#include "runtime/defer.h"
#include "runtime/loader.h"
#include "runtime/objects.h"
#include "runtime/pass_locks.h"
#include "runtime/pipeline.h"
#include "runtime/report.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

static size_t g_objs_cap;      /* capacity of the table (run->objs) */
static bool g_pass_short;      /* the last pass could not take every object in */

/* Same loaded object: same place, same program headers, same name (two
 * libraries can be loaded at one address one after the other). */
static bool same_object(const struct et_object *a, const struct et_object *b)
{
	/* (the main program's path is resolved after the list is read) */
	return a->base == b->base && a->phdr == b->phdr &&
	       ((a->is_main && b->is_main) || !strcmp(a->path, b->path));
}

/* Make room for `more` objects in the global table. */
ET_STARTUP int et_pass_one_reserve(struct et_run *run, size_t more)
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

static size_t piece_limit(const struct et_run *run)
{
	return run->opt.defer_rate && et_defer_is_worker() ? 1 : 0;
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
	struct et_run *run;            /* whose table loses what is gone */
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
		et_pass_locks_table_hold();
		prune(c->run, c->tmp, c->n);
		et_pass_locks_table_release();
	}
}

static size_t process_new_timed(struct et_run *run, const struct link_map *ns_head);

/*
 * Priming again later (ENORMOUSTEXT_PRIME, runtime/remap_prime.c): a window
 * copied because the page cache held it small cannot be read back huge
 * while other processes still map those small pages (the kernel keeps
 * mapped pages) — four compilers started together all map them until
 * each has its copy.  So the worker tries again, 1 s after the pass, then
 * 4 s, then 16 s (ET_PRIME_TRIES in all): by then the others have their
 * copies, the small pages are nobody's, and the first try that drops them
 * reads the window back as one huge folio, which every process then maps
 * — each copy becomes the page cache's, shared.
 */
#define ET_PRIME_FIRST_NS 1000000000ull
static uint64_t g_prime_due;   /* CLOCK_MONOTONIC ns of the next try, 0: none */

/* One pass, its CPU time counted (the report's cpu_ns: what the library
 * cost the process, on whichever thread ran it). */
size_t et_pass_one_run(struct et_run *run, const struct link_map *ns_head)
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
	struct collected c = { .run = run, .head = ns_head };
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
	et_pass_locks_table_hold();
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
	int reserved = k > 0 ? et_pass_one_reserve(run, fresh) : 0;
	struct et_run pass = { .opt = run->opt, .si = run->si, .objs = tmp, .nobjs = k, .t0_ns = t0,
	                       .win_limit = piece_limit(run), .loader_subs = c.subs,
	                       .deferred = et_defer_is_deferred() && !et_defer_hurried() };
	et_pass_locks_table_release();
	if (k > 0 && reserved == 0) {
		et_pipeline_run(&pass);
		et_pass_locks_table_hold();
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
				if (run->nobjs >= g_objs_cap && et_pass_one_reserve(run, 1) != 0) {
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
		et_pass_locks_table_hold();
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
	et_pass_locks_table_release();
	et_scratch_free(tmp, c.len);
	if (c.counted && !g_pass_short) {
		g_seen_adds = c.adds;
		g_seen_subs = c.subs;
	}
	return k;
}

/* ------------------------------------------------------------ for pass.c */

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

ET_STARTUP void et_pass_one_counts_read(void)
{
	dl_iterate_phdr(counts_cb, NULL);
}

void et_pass_one_counts_forget(void)
{
	__atomic_store_n(&g_seen_adds, ~0ull, __ATOMIC_RELEASE);
}

bool et_pass_one_paced_left(void)
{
	return __atomic_load_n(&g_paced_left, __ATOMIC_ACQUIRE);
}

uint64_t et_pass_one_pieces_taken(void)
{
	return __atomic_exchange_n(&g_piece_moved, 0, __ATOMIC_RELAXED);
}

uint64_t et_pass_one_prime_due(void)
{
	return __atomic_load_n(&g_prime_due, __ATOMIC_ACQUIRE);
}

void et_pass_one_prime_due_clear(void)
{
	__atomic_store_n(&g_prime_due, 0, __ATOMIC_RELEASE);
}
