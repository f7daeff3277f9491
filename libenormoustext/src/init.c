/*
 * init.c — start-up, later passes (objects loaded with dlopen), and the
 * public API.
 *
 * The constructor runs the pipeline once per process, whether the library
 * is preloaded, linked, or both:
 *
 *   options ─▶ sysinfo ─▶ objects ─▶ plan ─▶ remap ─▶ verify ─▶ report
 *
 * Each later pass (after dlopen, see dlhooks.c) runs the same pipeline over
 * the objects the table does not hold yet.  One lock guards the table and
 * the passes; the dlopen side never waits for it (see et_after_dlopen).
 *
 * "Once" holds across copies too: if this copy (say, linked statically
 * into the program) finds another copy's public symbol first in the global
 * scope (say, a preloaded libenormoustext.so), it leaves the work to that
 * one and answers the API calls with its figures.
 *
 * In a secure-execution process (AT_SECURE) nothing is read from the
 * environment and nothing is done: the environment is the caller's, not
 * the program's.
 */

#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

static struct et_run g_run;
static int g_started;
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

/* Another copy of the library that does the work (see above). */
static int (*g_other_stats)(struct enormoustext_stats *);
static int (*g_other_count)(void);
static int (*g_other_object)(unsigned, struct enormoustext_object *);
static int (*g_other_refresh)(void);

/*
 * Reading the options: the ENORMOUSTEXT* entries of the environment are
 * gathered in one pass over environ (seven getenv calls would scan it seven
 * times, at every start of every process of a preloaded tree); warnings
 * are kept until we know this copy is the one that speaks.
 */
extern char **environ;

struct pending_warning {
	const char *name, *value, *accepts;
};

/* Up to ET_ENV_KEEP entries are kept; with more (a long-lived shell that
 * exports everything), lookups scan environ itself: nothing is dropped, so
 * ENORMOUSTEXT=0 always wins. */
#define ET_ENV_KEEP 32
#define ET_UNKNOWN_KEEP 4

struct start_ctx {
	const char *env[ET_ENV_KEEP];
	int nenv;
	bool overflow;
	struct pending_warning w[ET_OPT__COUNT];
	int nwarn;
	/* ENORMOUSTEXT* variables that are not options (misspelt?) */
	const char *unknown[ET_UNKNOWN_KEEP];
	int nunknown;
};

/* If s starts with prefix, what follows it; else NULL.  Written out rather
 * than strncmp: on this path every first call of a libc function costs a
 * lazy symbol binding, in every process. */
static const char *after_prefix(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (*s != *prefix)
			return NULL;
	return s;
}

static void env_snapshot_take(struct start_ctx *c)
{
	c->nenv = 0;
	c->overflow = false;
	c->nunknown = 0;
	for (char **e = environ; e && *e; e++) {
		const char *v = *e;
		if (v[0] != 'E' || !after_prefix(v, "ENORMOUSTEXT"))
			continue;
		if (c->nenv < ET_ENV_KEEP)
			c->env[c->nenv++] = v;
		else
			c->overflow = true;
		if (!et_option_known(v)) {
			if (c->nunknown < ET_UNKNOWN_KEEP)
				c->unknown[c->nunknown] = v;
			c->nunknown++;
		}
	}
}

static const char *env_get(const char *name, void *ctx)
{
	const struct start_ctx *c = ctx;
	const char *const *list = c->env;
	int n = c->nenv;
	if (c->overflow) {
		list = (const char *const *)environ;
		n = -1;
	}
	for (int i = 0; n < 0 ? list && list[i] != NULL : i < n; i++) {
		const char *rest = after_prefix(list[i], name);
		if (rest && *rest == '=')
			return rest + 1;
	}
	return NULL;
}

/* "ENORMOUSTEXT_VERBOS=1": one line naming it and the nearest real name. */
static void warn_unknown(const struct start_ctx *c)
{
	for (int i = 0; i < c->nunknown && i < ET_UNKNOWN_KEEP; i++) {
		char name[64];
		size_t n = 0;
		for (const char *p = c->unknown[i]; *p && *p != '=' && n + 1 < sizeof name; p++)
			name[n++] = *p;
		name[n] = '\0';
		const char *near = et_option_nearest(name);
		if (near)
			et_log(0, "%s is not a variable of libenormoustext (did you mean %s?): ignored", name, near);
		else
			et_log(0, "%s is not a variable of libenormoustext: ignored", name);
	}
	if (c->nunknown > ET_UNKNOWN_KEEP)
		et_log(0, "and %d more ENORMOUSTEXT* variables that are not libenormoustext's: ignored",
		       c->nunknown - ET_UNKNOWN_KEEP);
}

static void env_warn(const char *name, const char *value, const char *accepts, void *ctx)
{
	struct start_ctx *c = ctx;
	if (c->nwarn < ET_OPT__COUNT)
		c->w[c->nwarn++] = (struct pending_warning){ name, value, accepts };
}

static bool other_copy_active(void)
{
	void *p = dlsym(RTLD_DEFAULT, "enormoustext_get_stats");
	if (!p || p == (void *)&enormoustext_get_stats)
		return false;
	g_other_stats = (int (*)(struct enormoustext_stats *))p;
	g_other_count = (int (*)(void))dlsym(RTLD_DEFAULT, "enormoustext_object_count");
	g_other_object = (int (*)(unsigned, struct enormoustext_object *))
		dlsym(RTLD_DEFAULT, "enormoustext_get_object");
	g_other_refresh = (int (*)(void))dlsym(RTLD_DEFAULT, "enormoustext_refresh");
	if (!g_other_count || !g_other_object || !g_other_refresh) {
		g_other_stats = NULL;
		return false;
	}
	return true;
}

/* Object-level decisions that need the path. */
static void classify_object(struct et_run *run, struct et_object *o)
{
	if (o->skip != ET_R_NONE)
		return;
	if (run->opt.include && !et_glob_list_match(run->opt.include, o->path))
		o->skip = ET_R_NOT_INCLUDED;
	else if (run->opt.exclude && et_glob_list_match(run->opt.exclude, o->path))
		o->skip = ET_R_EXCLUDED;
}

/* Does any page of [addr, addr + len) hold a private (anonymous) copy?
 * From /proc/self/pagemap: present (bit 63) and not file-backed (bit 61).
 * When pagemap cannot be read, say yes: the careful answer. */
static bool window_patched(uint64_t addr, uint64_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	if (pg <= 0)
		return true;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	bool patched = false;
	uint64_t e[512];
	uint64_t pages = len / (uint64_t)pg;
	for (uint64_t done = 0; done < pages && !patched;) {
		uint64_t n = pages - done < 512 ? pages - done : 512;
		off_t off = (off_t)((addr / (uint64_t)pg + done) * 8);
		ssize_t r = pread(fd, e, n * 8, off);
		if (r != (ssize_t)(n * 8)) {
			patched = true;
			break;
		}
		for (uint64_t i = 0; i < n; i++)
			if ((e[i] >> 63) & 1 && !((e[i] >> 61) & 1))
				patched = true;
		done += n;
	}
	close(fd);
	return patched;
}

/* Window-level checks against the mappings as they are now. */
static void check_pad(struct et_run *run, struct et_window *w, const struct et_smaps *sm);

static void check_window(struct et_run *run, struct et_window *w, const struct et_smaps *sm)
{
	const uint64_t H = run->si.pmd_size;
	const struct et_object *o = &run->objs[w->object];
	const struct et_segment *s = &o->segs[w->seg];
	if (!(s->flags & PF_R_FLAG) || (s->flags & PF_W_FLAG)) {
		w->reason = ET_R_NOT_READABLE;
		return;
	}
	w->prot = PROT_READ | PROT_EXEC;
	if (w->pad) {
		check_pad(run, w, sm);
		return;
	}
	const struct et_vma *v = sm ? et_smaps_find(sm, w->addr) : NULL;
	if (!v || w->addr + H > v->end || v->prot != (PROT_READ | PROT_EXEC) || v->shared ||
	    (v->inode == 0 && !run->again)) {
		w->reason = ET_R_MAPPING;
		return;
	}
	/* mlock'ed text would become swappable in a new mapping. */
	if (v->locked) {
		w->reason = ET_R_LOCKED;
		return;
	}
	/* Private copies of file pages in a text mapping mean someone changed
	 * the text in memory: a debugger's breakpoint or a uprobe.  A uprobe's
	 * int3 copied into anonymous memory is no longer the kernel's and would
	 * kill the process when hit: leave such windows alone. */
	if (v->inode != 0 && v->anonymous && window_patched(w->addr, H)) {
		w->reason = ET_R_PATCHED;
		return;
	}
	if (v->inode != 0) {
		/* what the file backend needs: the file and the offset */
		w->file_off = v->offset + (w->addr - v->start);
		w->inode = v->inode;
		w->dev_major = v->dev_major;
		w->dev_minor = v->dev_minor;
		w->congruent = (w->file_off & (H - 1)) == 0;
	}
	w->candidate = true;
}

/*
 * A padded window: the text part must be one plain r-x mapping of the
 * object's file (copied as it is, up to the mapping's ends inside the
 * window), and the rest of the window free — unmapped, or a PROT_NONE hole
 * that the loader reserved inside the object's own span.  Never anything
 * else: padding covers no one's data.
 */
static void check_pad(struct et_run *run, struct et_window *w, const struct et_smaps *sm)
{
	const uint64_t H = run->si.pmd_size;
	const struct et_object *o = &run->objs[w->object];
	const uint64_t W = w->addr, E = w->addr + H;
	const struct et_vma *v = sm ? et_smaps_find(sm, w->copy_lo) : NULL;
	if (!v || v->prot != (PROT_READ | PROT_EXEC) || v->shared || v->inode == 0 ||
	    v->end < w->copy_hi) {
		w->reason = ET_R_MAPPING;
		return;
	}
	if (v->locked) {
		w->reason = ET_R_LOCKED;
		return;
	}
	uint64_t lo = v->start > W ? v->start : W;
	uint64_t hi = v->end < E ? v->end : E;
	if (v->anonymous && window_patched(lo, hi - lo)) {
		w->reason = ET_R_PATCHED;
		return;
	}
	w->copy_lo = lo;
	w->copy_hi = hi;
	/* the rest: [W, lo) and [hi, E) */
	int nclaim = 0;
	const uint64_t part_lo[2] = { W, hi }, part_hi[2] = { lo, E };
	for (int p = 0; p < 2; p++) {
		uint64_t cur = part_lo[p];
		while (cur < part_hi[p]) {
			const struct et_vma *x = NULL;
			/* the first mapping that ends after cur, if it starts before the part ends */
			for (size_t i = 0; i < sm->count; i++)
				if (sm->vmas[i].end > cur && sm->vmas[i].start < part_hi[p] &&
				    (!x || sm->vmas[i].start < x->start))
					x = &sm->vmas[i];
			uint64_t gap_end = x ? (x->start > cur ? x->start : cur) : part_hi[p];
			if (gap_end > cur) {
				if (nclaim == 2) {
					w->reason = ET_R_PAD_NOT_FREE;
					return;
				}
				w->claim_lo[nclaim] = cur;
				w->claim_hi[nclaim] = gap_end;
				nclaim++;
			}
			if (!x)
				break;
			/* a loader's hole of this very object may be covered */
			if (x->prot != 0 || x->shared || x->start < o->map_lo || x->end > o->map_hi) {
				w->reason = ET_R_PAD_NOT_FREE;
				return;
			}
			cur = x->end;
		}
	}
	w->candidate = true;
}

/* After planning: windows the kernel already maps huge from the file need
 * nothing from us.  A file VMA's FilePmdMapped bytes can only come from
 * whole aligned windows, so it is enough to compare totals per VMA. */
static void mark_file_huge(struct et_run *run, const struct et_smaps *sm)
{
	const uint64_t H = run->si.pmd_size;
	for (size_t j = 0; j < run->nwins;) {
		const struct et_vma *v = et_smaps_find(sm, run->wins[j].addr);
		size_t k = j;
		uint64_t in_vma = 0;
		while (k < run->nwins && v && et_smaps_find(sm, run->wins[k].addr) == v) {
			if (run->wins[k].candidate && !run->wins[k].pad)
				in_vma += H;
			k++;
		}
		if (k == j)
			k = j + 1;
		if (v && in_vma > 0 && v->file_pmd >= in_vma) {
			for (size_t i = j; i < k; i++) {
				if (run->wins[i].candidate && !run->wins[i].pad) {
					run->wins[i].candidate = false;
					run->wins[i].file_huge = true;
					run->wins[i].backend = ET_BACKEND_FILE;
				}
			}
		}
		j = k;
	}
}

/* What each counted window became, for the report: z zero-copy, c copied,
 * h copied to the hugetlb pool, p padded copy, . left small.  Not for the
 * test-only range passes, whose object does not outlive them. */
static void record_kinds(const struct et_run *run, struct et_object *o, uint32_t counted)
{
	if (run->again || counted == 0)
		return;
	if (o->kinds && o->kinds_len < (size_t)counted + 1) {
		et_scratch_free(o->kinds, o->kinds_len);
		o->kinds = NULL;
	}
	if (!o->kinds) {
		o->kinds = et_scratch_alloc((size_t)counted + 1);
		o->kinds_len = o->kinds ? (size_t)counted + 1 : 0;
		if (!o->kinds)
			return;
	}
	uint32_t n = 0;
	for (uint32_t k = 0; k < o->nwindows && n < counted; k++) {
		const struct et_window *w = &run->wins[o->first_window + k];
		if (w->pad && !w->huge && (!w->candidate || w->reason == ET_R_PAD_NOT_FREE))
			continue;
		o->kinds[n++] = !w->huge ? '.' : w->backend == ET_BACKEND_FILE ? 'z'
		              : w->pad ? 'p' : w->backend == ET_BACKEND_HUGETLB ? 'h' : 'c';
	}
	o->kinds[n] = '\0';
}

static void summarise(struct et_run *run)
{
	const uint64_t H = run->si.pmd_size;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		unsigned used[ET_BACKEND__COUNT] = { 0 };
		o->remapped_bytes = o->huge_bytes = o->zero_copy_bytes = o->padded_bytes = 0;
		o->eligible_bytes = 0;
		o->windows_huge = 0;
		o->reason = o->skip;
		o->reason_mask = 0;
		o->err = 0;
		uint32_t counted = 0;
		for (uint32_t k = 0; k < o->nwindows; k++) {
			const struct et_window *w = &run->wins[o->first_window + k];
			/* A padded window is a bonus: one that could not be had (the
			 * rest of the window not free) is not a window left small. */
			if (w->pad && !w->huge && (!w->candidate || w->reason == ET_R_PAD_NOT_FREE))
				continue;
			counted++;
			/* a padded window's text is the part of its segment inside it */
			const struct et_segment *sg = &o->segs[w->seg];
			uint64_t text = H;
			if (w->pad) {
				uint64_t a = sg->start > w->addr ? sg->start : w->addr;
				uint64_t e = sg->end < w->addr + H ? sg->end : w->addr + H;
				text = e - a;
			}
			o->eligible_bytes += text;
			if (w->remapped)
				o->remapped_bytes += text;
			if (w->huge) {
				o->huge_bytes += text;
				o->windows_huge++;
				used[w->backend]++;
				if (w->backend == ET_BACKEND_FILE)
					o->zero_copy_bytes += H;
				if (w->pad)
					o->padded_bytes += H - text;
			} else {
				if (o->reason == ET_R_NONE)
					o->reason = w->reason;
				if (w->reason != ET_R_NONE)
					o->reason_mask |= 1ull << w->reason;
				if (!o->err)
					o->err = w->err;
			}
		}
		if (o->skip == ET_R_NONE) {
			record_kinds(run, o, counted);
			o->nwindows = counted;
		}
		o->backend = ET_BACKEND_NONE;
		unsigned best = 0;
		for (int b = 0; b < ET_BACKEND__COUNT; b++)
			if (used[b] > best) {
				best = used[b];
				o->backend = (enum et_backend)b;
			}
	}
}

/*
 * ENORMOUSTEXT_PROFILE: read once, at the first pass that has windows, and
 * kept for the passes after dlopen.  A profile that cannot be used (missing,
 * truncated, corrupt, too large) moves nothing: one warning names the file
 * and says why, and the program runs on as it would without the library.
 */
static struct et_profile g_profile;
static int g_profile_state;      /* 0 not read, 1 usable, -1 unusable */

static int profile_get(const struct et_run *run)
{
	if (!run->opt.profile)
		return 0;
	if (g_profile_state == 0) {
		if (et_profile_load(&g_profile, run->opt.profile) == 0) {
			g_profile_state = 1;
		} else {
			g_profile_state = -1;
			et_log(0, "ENORMOUSTEXT_PROFILE=%s: %s: nothing moved", run->opt.profile, g_profile.err);
		}
	}
	return g_profile_state;
}

struct heat {
	uint64_t samples;
	uint32_t win;
};

/* Keep the hottest windows: those covering ENORMOUSTEXT_HOT_COVERAGE percent
 * of the samples in the windows this pass could move (of the objects the
 * profile has), within ENORMOUSTEXT_HOT_BUDGET bytes.  Samples elsewhere (a
 * library too small for a window, a part of a window that cannot be
 * padded) do not count: no choice of windows could cover them.  The others are not moved ("cold").
 * Objects the profile does not have follow the normal rules; a profile of
 * another build of an object's path is not used for it (one warning). */
static void choose_hot(struct et_run *run)
{
	const uint64_t H = run->si.pmd_size;
	size_t n = 0;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		if (o->skip != ET_R_NONE || !o->nwindows)
			continue;
		const struct et_prof_obj *po = et_profile_find(&g_profile, o->build_id);
		if (!po) {
			for (size_t k = 0; k < g_profile.nobjs; k++)
				if (!strcmp(et_profile_path(&g_profile, &g_profile.objs[k]), o->path))
					et_log(0, "ENORMOUSTEXT_PROFILE=%s: recorded for another build of %s: not used for it",
					       run->opt.profile, o->path);
			if (run->opt.profile_strict)
				for (uint32_t k = 0; k < o->nwindows; k++) {
					struct et_window *w = &run->wins[o->first_window + k];
					if (w->candidate) {
						w->candidate = false;
						w->reason = ET_R_NOT_PROFILED;
					}
				}
			continue;
		}
		for (uint32_t k = 0; k < o->nwindows; k++)
			if (run->wins[o->first_window + k].candidate)
				n++;
	}
	if (n == 0)
		return;
	size_t len = n * sizeof(struct heat);
	struct heat *h = et_scratch_alloc(len);
	if (!h)
		return;
	size_t m = 0;
	uint64_t total = 0;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		if (o->skip != ET_R_NONE || !o->nwindows)
			continue;
		const struct et_prof_obj *po = et_profile_find(&g_profile, o->build_id);
		if (!po)
			continue;
		for (uint32_t k = 0; k < o->nwindows; k++) {
			struct et_window *w = &run->wins[o->first_window + k];
			if (!w->candidate)
				continue;
			uint64_t lo = w->pad ? w->copy_lo : w->addr, hi = w->pad ? w->copy_hi : w->addr + H;
			h[m].samples = et_profile_heat(&g_profile, po, lo - o->base, hi - o->base);
			h[m].win = o->first_window + k;
			total = total > UINT64_MAX - h[m].samples ? UINT64_MAX : total + h[m].samples;
			m++;
		}
	}
	/* hottest first (insertion sort: a process has hundreds of windows at most) */
	for (size_t i = 1; i < m; i++) {
		struct heat x = h[i];
		size_t j = i;
		while (j > 0 && h[j - 1].samples < x.samples) {
			h[j] = h[j - 1];
			j--;
		}
		h[j] = x;
	}
	unsigned __int128 want = (unsigned __int128)total * run->opt.hot_coverage;
	unsigned __int128 got = 0;
	uint64_t bytes = 0;
	for (size_t i = 0; i < m; i++) {
		struct et_window *w = &run->wins[h[i].win];
		bool keep = h[i].samples > 0 && got * 100 < want &&
		            (!run->opt.hot_budget || bytes + H <= run->opt.hot_budget);
		w->heat = h[i].samples;
		w->heat_known = true;
		if (keep) {
			got += h[i].samples;
			bytes += H;
		} else {
			w->candidate = false;
			w->reason = ET_R_COLD;
		}
	}
	et_log(3, "profile: %llu of %zu window(s) hot, %llu of %llu samples",
	       (unsigned long long)(bytes / H), m, (unsigned long long)got, (unsigned long long)total);
	et_scratch_free(h, len);
}

/* The windows of one object in address order, segment by segment: a
 * padded first window, the whole windows, a padded last window.  With
 * out == NULL, only counts. */
static size_t plan_object(const struct et_run *run, const struct et_object *o, uint32_t idx,
                          struct et_window *out)
{
	const uint64_t H = run->si.pmd_size;
	/* padding needs a copy: not with the file backend alone */
	uint64_t thr = run->opt.backend == ET_BACKEND_FILE || run->again ? 0 : run->opt.pad_threshold;
	size_t n = 0;
	for (uint32_t s = 0; s < o->nsegs; s++) {
		struct et_window pads[2];
		size_t np = et_plan_pads(&o->segs[s], 1, H, thr, idx, pads, 2);
		size_t nf = et_plan_windows(&o->segs[s], 1, H, idx, NULL, 0);
		if (!out) {
			n += np + nf;
			continue;
		}
		size_t first = n, p = 0;
		if (p < np && (pads[p].addr < o->segs[s].start || nf == 0))
			out[n++] = pads[p++];
		et_plan_windows(&o->segs[s], 1, H, idx, out + n, nf);
		n += nf;
		while (p < np)
			out[n++] = pads[p++];
		for (size_t k = first; k < n; k++)
			out[k].seg = s;
	}
	return n;
}

/* Debug (ENORMOUSTEXT_VERBOSE=3): time since the pass began at each stage. */
#define ET_MARK(run, what) \
	do { \
		if (et_log_enabled(3)) \
			et_log(3, "%s at %llu us", what, \
			       (unsigned long long)((et_now_ns() - (run)->t0_ns) / 1000)); \
	} while (0)

/* The pipeline over the objects of one pass (run->objs, run->nobjs): plan,
 * check against the mappings, remap, verify, summarise into the objects.
 * The windows table lives only for the pass. */
static void run_pipeline(struct et_run *run)
{
	if (!run->si.pmd_size_read) {
		et_sysinfo_read_pmd(&run->si, "/");
		/* no sysfs (THP not built in): the page size still tells */
		uint64_t floor = et_pmd_size_floor();
		if (!run->si.pmd_size_read && floor)
			run->si.pmd_size = floor;
	}
	ET_MARK(run, "pmd size");
	const uint64_t H = run->si.pmd_size;
	/* 64 KiB-page arm64 kernels: 512 MiB windows.  Every object is left
	 * alone, so nothing is copied, padded or touched. */
	const bool usable = et_pmd_size_usable(H);
	if (!usable)
		run->reason = ET_R_PMD_TOO_LARGE;

	size_t total = 0;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		o->first_window = (uint32_t)total;
		o->nwindows = (uint32_t)plan_object(run, o, (uint32_t)i, NULL);
		classify_object(run, o);
		if (!usable && o->skip == ET_R_NONE)
			o->skip = ET_R_PMD_TOO_LARGE;
		if (o->skip != ET_R_NONE)
			o->nwindows = 0;
		total += o->nwindows;
	}
	/* Most passes stop here: no object has a whole window, so there is no
	 * need to read the policy or the (costly) smaps. */
	ET_MARK(run, "plan");
	if (total == 0)
		return;
	size_t wins_len = total * sizeof(struct et_window);
	run->wins = et_scratch_alloc(wins_len);
	if (!run->wins) {
		run->reason = ET_R_SCRATCH;
		for (size_t i = 0; i < run->nobjs; i++)
			run->objs[i].nwindows = 0;
		return;
	}
	/* Each pass: the policy may have changed, the pool certainly has. */
	et_sysinfo_read_policy(&run->si, "/");
	struct et_smaps sm;
	int smerr = et_smaps_read(&sm, "/proc/self/smaps");
	const struct et_smaps *smp = smerr ? NULL : &sm;
	/* Without smaps nothing can be checked, so nothing moves: say why
	 * (working memory, or the file), not "not a plain mapping". */
	const enum et_reason smreason = smerr == -ENOMEM ? ET_R_SCRATCH : ET_R_SMAPS;
	ET_MARK(run, "policy and smaps");
	run->nwins = total;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		if (!o->nwindows)
			continue;
		plan_object(run, o, (uint32_t)i, run->wins + o->first_window);
		o->eligible_bytes = 0;
		for (uint32_t k = 0; k < o->nwindows; k++) {
			check_window(run, &run->wins[o->first_window + k], smp);
			if (!smp && run->wins[o->first_window + k].reason == ET_R_MAPPING)
				run->wins[o->first_window + k].reason = smreason;
			if (!run->wins[o->first_window + k].pad)
				o->eligible_bytes += H;
		}
		if (o->eligible_bytes < run->opt.min_bytes) {
			o->skip = ET_R_MIN_BYTES;
			for (uint32_t k = 0; k < o->nwindows; k++) {
				run->wins[o->first_window + k].candidate = false;
				run->wins[o->first_window + k].reason = ET_R_MIN_BYTES;
			}
		}
	}
	if (smp) {
		mark_file_huge(run, smp);
		et_smaps_free(&sm);
	}
	/* hot windows only */
	int prof = run->again ? 0 : profile_get(run);
	if (prof > 0) {
		choose_hot(run);
	} else if (prof < 0) {
		for (size_t j = 0; j < run->nwins; j++)
			if (run->wins[j].candidate) {
				run->wins[j].candidate = false;
				run->wins[j].reason = ET_R_PROFILE;
			}
		run->reason = ET_R_PROFILE;
		run->reason_detail = g_profile.err;
	}

	enum et_backend chain[4];
	const char *why = NULL;
	int nchain = et_backend_chain(&run->si, run->opt.backend, chain, &why);
	if (nchain == 0) {
		for (size_t j = 0; j < run->nwins; j++)
			if (run->wins[j].candidate)
				run->wins[j].reason = ET_R_NO_BACKEND;
		for (size_t i = 0; i < run->nobjs; i++)
			if (run->objs[i].skip == ET_R_NONE)
				run->objs[i].skip_detail = why;
		run->reason = ET_R_NO_BACKEND;
		run->reason_detail = why;
	} else {
		et_remap_all(run, chain, nchain);
	}
	ET_MARK(run, "remap");
	et_verify(run);
	ET_MARK(run, "verify");
	summarise(run);
	if (run->opt.perfmap) {
		et_perfmap_write(run);   /* logs a failure itself */
	}
	et_scratch_free(run->wins, wins_len);
	run->wins = NULL;
	run->nwins = 0;
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
					munmap((void *)(uintptr_t)run->objs[j].pad_lo[p],
					       run->objs[j].pad_hi[p] - run->objs[j].pad_lo[p]);
		}
		run->nobjs = kept;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool known = false;
		for (size_t j = 0; j < run->nobjs && !known; j++)
			known = same_object(&run->objs[j], &tmp[i]);
		if (!known)
			tmp[k++] = tmp[i];
	}
	if (k > 0 && table_reserve(run, k) == 0) {
		struct et_run pass = { .opt = run->opt, .si = run->si, .objs = tmp, .nobjs = k, .t0_ns = t0 };
		run_pipeline(&pass);
		run->si = pass.si;
		if (pass.reason != ET_R_NONE && run->reason == ET_R_NONE) {
			run->reason = pass.reason;
			run->reason_detail = pass.reason_detail;
		}
		memcpy(run->objs + run->nobjs, tmp, k * sizeof *tmp);
		run->nobjs += k;
		run->quick = false;   /* the table now speaks for the process */
		if (run->passes > 0)
			et_report_objects(run, run->nobjs - k, k);
		run->passes++;
	} else {
		g_pass_short = k > 0;
		k = 0;
	}
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
	if (other_copy_active()) {
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
	if (g_other_refresh) {
		g_other_refresh();
		return;
	}
	if (!__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
		return;
	run_locked(NULL, NULL, RUN_TRY);   /* drains g_pending, or the holder will */
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
	if (!lazy_ready() || g_other_refresh || !__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
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

/*
 * Start-up.  The common case — no text segment as large as a huge page,
 * nothing to say — must cost next to nothing: one pass over environ and
 * one over the loaded objects, no system call, no symbol lookup.
 */
__attribute__((constructor)) static void et_constructor(void)
{
	struct et_run *run = &g_run;
	if (__atomic_exchange_n(&g_started, 1, __ATOMIC_ACQ_REL))
		return;
	if (getauxval(AT_SECURE)) {
		run->reason = ET_R_SECURE;
		return;
	}
	struct start_ctx c = { .nenv = 0, .nwarn = 0 };
	env_snapshot_take(&c);
	et_options_parse(&run->opt, env_get, env_warn, &c);
	bool silenced = run->opt.verbose_set && run->opt.verbose == 0;
	/* recording is independent of moving text (a baseline can be recorded
	 * with ENORMOUSTEXT=0) */
	if (run->opt.record) {
		et_log_setup(run->opt.verbose, silenced);
		et_record_start(run->opt.record);
	}
	if (!run->opt.enabled)
		run->reason = ET_R_OFF;

	uint64_t max_seg = 0;
	et_objects_collect(NULL, 0, &max_seg, &run->quick_text);
	uint64_t floor = et_pmd_size_floor();
	/* "quick": nothing to move now; "account": the user wants every object
	 * described, which needs the whole pipeline anyway. */
	bool quick = floor && max_seg < floor;
	bool account = run->opt.enabled && (run->opt.verbose >= 2 || run->opt.report);
	bool speak = ((c.nwarn > 0 || c.nunknown > 0) && !silenced) || run->opt.verbose >= 1 || run->opt.report;

	/* Whatever is loaded later (dlopen) is handled unless the library is
	 * off or another copy does the work; that check costs a symbol lookup,
	 * so in the quick case it waits until a dlopen needs it. */
	if (run->opt.enabled && quick && !account) {
		run->ran = true;
		run->quick = true;
		run->si.pmd_size = floor;
		if (!speak) {
			et_log_setup(run->opt.verbose, silenced);
			/* everything loaded now has been looked at */
			dl_iterate_phdr(counts_cb, NULL);
			run->quick_lazy = true;
			__atomic_store_n(&g_active, true, __ATOMIC_RELEASE);
			return;
		}
	}
	if (!run->opt.enabled && !speak)
		return;

	/* From here on this copy acts or speaks: unless another copy of the
	 * library in this process does. */
	if (other_copy_active())
		return;
	et_log_setup(run->opt.verbose, silenced);
	for (int i = 0; i < c.nwarn; i++)
		et_log(0, "%s=%s is not valid: it accepts %s; using the default", c.w[i].name,
		       c.w[i].value, c.w[i].accepts);
	warn_unknown(&c);
	if (run->opt.enabled) {
		register_atfork();
		run_locked(startup_pass, run, RUN_WAIT);
	}
	et_report_log(run);
	if (run->opt.report)
		write_report(run);
}

/* ---------------------------------------------------------------- API */

/* Every entry point leaves errno as it found it (a pass opens files,
 * maps memory, may try a path that is not there). */
static void restore_errno(int *saved)
{
	errno = *saved;
}
#define ET_KEEP_ERRNO __attribute__((cleanup(restore_errno), unused)) int et_saved_errno_ = errno

struct stats_ctx {
	struct enormoustext_stats st;
	const char *r, *detail;
};
static void stats_locked(void *arg);

int enormoustext_get_stats(struct enormoustext_stats *out)
{
	ET_KEEP_ERRNO;
	if (!out || out->size < offsetof(struct enormoustext_stats, elapsed_ns))
		return -EINVAL;
	if (g_other_stats)
		return g_other_stats(out);
	struct stats_ctx c;
	memset(&c, 0, sizeof c);
	c.st.size = out->size < sizeof c.st ? out->size : (uint32_t)sizeof c.st;
	read_locked(stats_locked, &c);
	if (c.r) {
		if (c.detail)
			snprintf(c.st.reason, sizeof c.st.reason, "%s: %s", c.r, c.detail);
		else
			et_strlcpy(c.st.reason, c.r, sizeof c.st.reason);
	}
	memcpy(out, &c.st, c.st.size);
	return 0;
}

static void stats_locked(void *arg)
{
	struct stats_ctx *c = arg;
	struct enormoustext_stats st = c->st;
	st.ran = g_run.ran;
	st.pmd_size = g_run.si.pmd_size;
	st.elapsed_ns = g_run.elapsed_ns;
	unsigned used[ET_BACKEND__COUNT] = { 0 };
	const char *r = NULL, *detail = g_run.reason_detail;
	if (g_run.reason != ET_R_NONE)
		r = et_reason_text(g_run.reason);
	for (size_t i = 0; i < g_run.nobjs; i++) {
		/* Every object the API lists, so that per-object figures add up. */
		const struct et_object *o = &g_run.objs[i];
		st.objects++;
		st.text_bytes += o->text_bytes;
		st.eligible_bytes += o->skip == ET_R_NONE ? o->eligible_bytes : 0;
		st.remapped_bytes += o->remapped_bytes;
		st.huge_bytes += o->huge_bytes;
		st.zero_copy_bytes += o->zero_copy_bytes;
		st.padded_bytes += o->padded_bytes;
		if (o->huge_bytes)
			st.objects_huge++;
		used[o->backend] += o->windows_huge;
		/* Else the first reason a window stayed small. */
		if (!r && o->skip == ET_R_NONE && o->reason != ET_R_NONE && o->reason != ET_R_MIN_BYTES)
			r = et_reason_text(o->reason);
	}
	enum et_backend best = ET_BACKEND_NONE;
	for (int b = 0, m = 0; b < ET_BACKEND__COUNT; b++)
		if ((int)used[b] > m) {
			m = (int)used[b];
			best = (enum et_backend)b;
		}
	et_strlcpy(st.backend, et_backend_name(best), sizeof st.backend);
	if (g_run.quick) {
		st.text_bytes = g_run.quick_text;
		r = "no loaded object has a text segment as large as one huge page";
	}
	if (!r && g_run.ran && st.eligible_bytes == 0)
		r = "no whole huge-page window in any object's text";
	c->st = st;
	c->r = r;
	c->detail = detail;
}

static void count_locked(void *arg)
{
	*(int *)arg = (int)g_run.nobjs;
}

int enormoustext_object_count(void)
{
	ET_KEEP_ERRNO;
	if (g_other_count)
		return g_other_count();
	int n = 0;
	read_locked(count_locked, &n);
	return n;
}

static void object_to_public(const struct et_object *o, struct enormoustext_object *x)
{
	x->windows = o->nwindows;
	x->windows_huge = o->windows_huge;
	et_strlcpy(x->path, o->path, sizeof x->path);
	et_strlcpy(x->build_id, o->build_id, sizeof x->build_id);
	et_strlcpy(x->backend, et_backend_name(o->backend), sizeof x->backend);
	if (o->reason != ET_R_NONE) {
		if (o->skip_detail)
			snprintf(x->reason, sizeof x->reason, "%s: %s", et_reason_text(o->reason), o->skip_detail);
		else
			et_strlcpy(x->reason, et_reason_text(o->reason), sizeof x->reason);
	} else if (o->skip == ET_R_NONE && o->nwindows == 0) {
		et_strlcpy(x->reason, et_reason_text(ET_R_NO_WINDOW), sizeof x->reason);
	}
	for (uint32_t s = 0; s < o->nsegs; s++) {
		if (!x->text_start || o->segs[s].start < x->text_start)
			x->text_start = o->segs[s].start;
		if (o->segs[s].end > x->text_end)
			x->text_end = o->segs[s].end;
	}
	x->text_bytes = o->text_bytes;
	x->eligible_bytes = o->skip == ET_R_NONE ? o->eligible_bytes : 0;
	x->remapped_bytes = o->remapped_bytes;
	x->huge_bytes = o->huge_bytes;
	x->elapsed_ns = o->elapsed_ns;
	x->zero_copy_bytes = o->zero_copy_bytes;
	x->padded_bytes = o->padded_bytes;
}

struct object_ctx {
	unsigned i;
	struct enormoustext_object *x;
	bool ok;
};

static void object_locked(void *arg)
{
	struct object_ctx *c = arg;
	c->ok = c->i < g_run.nobjs;
	if (c->ok)
		object_to_public(&g_run.objs[c->i], c->x);
}

int enormoustext_get_object(unsigned i, struct enormoustext_object *out)
{
	ET_KEEP_ERRNO;
	if (!out || out->size < offsetof(struct enormoustext_object, elapsed_ns))
		return -EINVAL;
	if (g_other_object)
		return g_other_object(i, out);
	struct enormoustext_object x;
	memset(&x, 0, sizeof x);
	x.size = out->size < sizeof x ? out->size : (uint32_t)sizeof x;
	struct object_ctx c = { i, &x, false };
	read_locked(object_locked, &c);
	if (!c.ok)
		return -ERANGE;
	memcpy(out, &x, x.size);
	return 0;
}

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

int enormoustext_refresh(void)
{
	ET_KEEP_ERRNO;
	if (g_other_refresh)
		return g_other_refresh();
	if (!lazy_ready())
		return -EAGAIN;
	if (g_other_refresh)
		return g_other_refresh();
	if (!__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
		return 0;
	if (lock_is_mine())
		return -EDEADLK;
	int n = 0;
	run_locked(refresh_locked, &n, RUN_WAIT);
	return n;
}

struct range_ctx {
	const void *start;
	size_t len;
	int moved;
};

static void range_locked(void *arg);

int enormoustext_remap_range(const void *start, size_t len)
{
	ET_KEEP_ERRNO;
	if (!start || len == 0)
		return -EINVAL;
	if (!lazy_ready())
		return -EAGAIN;
	if (!__atomic_load_n(&g_active, __ATOMIC_ACQUIRE) || g_other_stats)
		return -EPERM;
	if (lock_is_mine())
		return -EDEADLK;
	struct range_ctx c = { start, len, 0 };
	run_locked(range_locked, &c, RUN_WAIT);
	return c.moved;
}

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
	run_pipeline(&pass);
	g_run.si = pass.si;
	c->moved = (int)obj.windows_huge;
}

const char *enormoustext_version(void)
{
	return ENORMOUSTEXT_VERSION_STRING;
}
