/*
 * init.c — start-up and the public API.
 *
 * The constructor runs the pipeline once per process, whether the library
 * is preloaded, linked, or both:
 *
 *   options ─▶ sysinfo ─▶ objects ─▶ plan ─▶ remap ─▶ verify ─▶ report
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

static struct et_run g_run;
static int g_started;

/* Another copy of the library that does the work (see above). */
static int (*g_other_stats)(struct enormoustext_stats *);
static int (*g_other_count)(void);
static int (*g_other_object)(unsigned, struct enormoustext_object *);

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

struct start_ctx {
	const char *env[16];
	int nenv;
	struct pending_warning w[ET_OPT__COUNT];
	int nwarn;
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
	for (char **e = environ; e && *e; e++) {
		const char *v = *e;
		if (v[0] == 'E' && after_prefix(v, "ENORMOUSTEXT") && c->nenv < 16)
			c->env[c->nenv++] = v;
	}
}

static const char *env_get(const char *name, void *ctx)
{
	const struct start_ctx *c = ctx;
	for (int i = 0; i < c->nenv; i++) {
		const char *rest = after_prefix(c->env[i], name);
		if (rest && *rest == '=')
			return rest + 1;
	}
	return NULL;
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
	if (!g_other_count || !g_other_object) {
		g_other_stats = NULL;
		return false;
	}
	return true;
}

/* Object-level decisions that need the path. */
static void classify_object(struct et_run *run, struct et_object *o, bool need_path)
{
	/* The main program's name is "" from the loader (glibc); readlink costs
	 * a few microseconds, so only when the path is used. */
	if (!o->path[0] && o->is_main && need_path) {
		ssize_t n = readlink("/proc/self/exe", o->path, sizeof o->path - 1);
		o->path[n > 0 ? n : 0] = '\0';
	}
	if (o->skip != ET_R_NONE)
		return;
	if (run->opt.include && !et_glob_list_match(run->opt.include, o->path))
		o->skip = ET_R_NOT_INCLUDED;
	else if (run->opt.exclude && et_glob_list_match(run->opt.exclude, o->path))
		o->skip = ET_R_EXCLUDED;
}

/* Window-level checks against the mappings as they are now. */
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
	const struct et_vma *v = sm ? et_smaps_find(sm, w->addr) : NULL;
	if (!v || w->addr + H > v->end || v->prot != (PROT_READ | PROT_EXEC) || v->shared ||
	    v->inode == 0) {
		w->reason = ET_R_MAPPING;
		return;
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
			if (run->wins[k].candidate)
				in_vma += H;
			k++;
		}
		if (k == j)
			k = j + 1;
		if (v && in_vma > 0 && v->file_pmd >= in_vma) {
			for (size_t i = j; i < k; i++) {
				if (run->wins[i].candidate) {
					run->wins[i].candidate = false;
					run->wins[i].file_huge = true;
					run->wins[i].backend = ET_BACKEND_FILE;
				}
			}
		}
		j = k;
	}
}

static void summarise(struct et_run *run)
{
	const uint64_t H = run->si.pmd_size;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		unsigned used[ET_BACKEND__COUNT] = { 0 };
		o->remapped_bytes = o->huge_bytes = 0;
		o->windows_huge = 0;
		o->reason = o->skip;
		for (uint32_t k = 0; k < o->nwindows; k++) {
			const struct et_window *w = &run->wins[o->first_window + k];
			if (w->remapped)
				o->remapped_bytes += H;
			if (w->huge) {
				o->huge_bytes += H;
				o->windows_huge++;
				used[w->backend]++;
			} else if (o->reason == ET_R_NONE) {
				o->reason = w->reason;
			}
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

/* Debug (ENORMOUSTEXT_VERBOSE=3): time since start-up at each stage. */
#define ET_MARK(run, what) \
	do { \
		if (et_log_enabled(3)) \
			et_log(3, "%s at %llu us", what, \
			       (unsigned long long)((et_now_ns() - (run)->t0_ns) / 1000)); \
	} while (0)

/* Everything after the start-up checks (see et_constructor); `nobjs` is
 * the count from the first pass over the loaded objects. */
static void run_pipeline(struct et_run *run, size_t nobjs)
{
	run->ran = true;
	ET_MARK(run, "options");
	/* Room for a few more objects: another thread may dlopen meanwhile
	 * (extras are ignored). */
	size_t n = nobjs + 8;
	bool account = et_log_enabled(2) || run->opt.report;
	et_sysinfo_read_pmd(&run->si, "/");
	ET_MARK(run, "pmd size");
	const uint64_t H = run->si.pmd_size;

	size_t objs_len = n * sizeof(struct et_object);
	run->objs = et_scratch_alloc(objs_len);
	if (!run->objs) {
		run->reason = ET_R_SCRATCH;
		return;
	}
	run->nobjs = et_objects_collect(run->objs, n, NULL, NULL);
	if (run->nobjs > n)
		run->nobjs = n;

	ET_MARK(run, "objects");
	size_t total = 0;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		o->first_window = (uint32_t)total;
		o->nwindows = (uint32_t)et_plan_windows(o->segs, o->nsegs, H, (uint32_t)i, NULL, 0);
		classify_object(run, o, account || run->opt.include || run->opt.exclude || o->nwindows);
		if (o->skip != ET_R_NONE)
			o->nwindows = 0;
		total += o->nwindows;
	}
	/* Most processes stop here: no object has a whole window, so there is
	 * no need to read the policy or the (costly) smaps. */
	ET_MARK(run, "plan");
	if (total == 0)
		return;
	run->wins = et_scratch_alloc(total * sizeof(struct et_window));
	if (!run->wins) {
		run->reason = ET_R_SCRATCH;
		return;
	}
	et_sysinfo_read_policy(&run->si, "/");
	struct et_smaps sm;
	int smerr = et_smaps_read(&sm, "/proc/self/smaps");
	const struct et_smaps *smp = smerr ? NULL : &sm;
	ET_MARK(run, "policy and smaps");
	run->nwins = total;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		if (!o->nwindows)
			continue;
		et_plan_windows(o->segs, o->nsegs, H, (uint32_t)i, run->wins + o->first_window, o->nwindows);
		o->eligible_bytes = (uint64_t)o->nwindows * H;
		for (uint32_t k = 0; k < o->nwindows; k++)
			check_window(run, &run->wins[o->first_window + k], smp);
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

	uint64_t max_seg = 0;
	size_t nobjs = et_objects_collect(NULL, 0, &max_seg, &run->quick_text);
	uint64_t floor = et_pmd_size_floor();
	/* "quick": nothing can be moved; "account": the user wants every object
	 * described, which needs the whole pipeline anyway. */
	bool quick = floor && max_seg < floor;
	bool account = run->opt.enabled && (run->opt.verbose >= 2 || run->opt.report);
	bool speak = (c.nwarn > 0 && !silenced) || run->opt.verbose >= 1 || run->opt.report;

	run->reason = run->opt.enabled ? ET_R_NONE : ET_R_OFF;
	if (run->opt.enabled && quick && !account) {
		run->ran = true;
		run->quick = true;
		run->si.pmd_size = floor;
	}
	if ((!run->opt.enabled || run->quick) && !speak)
		return;

	/* From here on this copy acts or speaks: unless another copy of the
	 * library in this process does. */
	if (other_copy_active())
		return;
	et_log_setup(run->opt.verbose, silenced);
	for (int i = 0; i < c.nwarn; i++)
		et_log(0, "%s=%s is not valid: it accepts %s; using the default", c.w[i].name,
		       c.w[i].value, c.w[i].accepts);
	if (run->opt.enabled && !run->quick) {
		run->t0_ns = et_now_ns();
		run_pipeline(run, nobjs);
		run->elapsed_ns = et_now_ns() - run->t0_ns;
	}
	et_report_log(run);
	if (run->opt.report) {
		int err = et_report_json(run, run->opt.report);
		if (err)
			et_log(0, "ENORMOUSTEXT_REPORT=%s: cannot write the report: %s", run->opt.report,
			       strerror(-err));
	}
}

/* ---------------------------------------------------------------- API */

int enormoustext_get_stats(struct enormoustext_stats *out)
{
	if (!out || out->size < offsetof(struct enormoustext_stats, elapsed_ns))
		return -EINVAL;
	if (g_other_stats)
		return g_other_stats(out);
	struct enormoustext_stats st;
	memset(&st, 0, sizeof st);
	st.size = out->size < sizeof st ? out->size : (uint32_t)sizeof st;
	st.ran = g_run.ran;
	st.pmd_size = g_run.si.pmd_size;
	st.elapsed_ns = g_run.elapsed_ns;
	unsigned used[ET_BACKEND__COUNT] = { 0 };
	for (size_t i = 0; i < g_run.nobjs; i++) {
		/* Every object the API lists, so that per-object figures add up. */
		const struct et_object *o = &g_run.objs[i];
		st.objects++;
		st.text_bytes += o->text_bytes;
		st.eligible_bytes += o->skip == ET_R_NONE ? o->eligible_bytes : 0;
		st.remapped_bytes += o->remapped_bytes;
		st.huge_bytes += o->huge_bytes;
		if (o->huge_bytes)
			st.objects_huge++;
	}
	for (size_t j = 0; j < g_run.nwins; j++)
		if (g_run.wins[j].huge)
			used[g_run.wins[j].backend]++;
	enum et_backend best = ET_BACKEND_NONE;
	for (int b = 0, m = 0; b < ET_BACKEND__COUNT; b++)
		if ((int)used[b] > m) {
			m = (int)used[b];
			best = (enum et_backend)b;
		}
	et_strlcpy(st.backend, et_backend_name(best), sizeof st.backend);

	/* The process-level reason, else the first reason a window stayed small. */
	const char *r = NULL, *detail = g_run.reason_detail;
	if (g_run.reason != ET_R_NONE)
		r = et_reason_text(g_run.reason);
	for (size_t j = 0; !r && j < g_run.nwins; j++)
		if (!g_run.wins[j].huge && g_run.wins[j].reason != ET_R_NONE &&
		    g_run.wins[j].reason != ET_R_MIN_BYTES)
			r = et_reason_text(g_run.wins[j].reason);
	if (g_run.quick) {
		st.text_bytes = g_run.quick_text;
		r = "no loaded object has a text segment as large as one huge page";
	}
	if (!r && g_run.ran && st.eligible_bytes == 0)
		r = "no whole huge-page window in any object's text";
	if (r) {
		if (detail)
			snprintf(st.reason, sizeof st.reason, "%s: %s", r, detail);
		else
			et_strlcpy(st.reason, r, sizeof st.reason);
	}
	memcpy(out, &st, st.size);
	return 0;
}

int enormoustext_object_count(void)
{
	if (g_other_count)
		return g_other_count();
	return (int)g_run.nobjs;
}

int enormoustext_get_object(unsigned i, struct enormoustext_object *out)
{
	if (!out || out->size < offsetof(struct enormoustext_object, elapsed_ns))
		return -EINVAL;
	if (g_other_object)
		return g_other_object(i, out);
	if (i >= g_run.nobjs)
		return -ERANGE;
	const struct et_object *o = &g_run.objs[i];
	struct enormoustext_object x;
	memset(&x, 0, sizeof x);
	x.size = out->size < sizeof x ? out->size : (uint32_t)sizeof x;
	x.windows = o->nwindows;
	x.windows_huge = o->windows_huge;
	et_strlcpy(x.path, o->path, sizeof x.path);
	et_strlcpy(x.build_id, o->build_id, sizeof x.build_id);
	et_strlcpy(x.backend, et_backend_name(o->backend), sizeof x.backend);
	if (o->reason != ET_R_NONE) {
		if (o->skip_detail)
			snprintf(x.reason, sizeof x.reason, "%s: %s", et_reason_text(o->reason), o->skip_detail);
		else
			et_strlcpy(x.reason, et_reason_text(o->reason), sizeof x.reason);
	} else if (o->skip == ET_R_NONE && o->nwindows == 0) {
		et_strlcpy(x.reason, et_reason_text(ET_R_NO_WINDOW), sizeof x.reason);
	}
	for (uint32_t s = 0; s < o->nsegs; s++) {
		if (!x.text_start || o->segs[s].start < x.text_start)
			x.text_start = o->segs[s].start;
		if (o->segs[s].end > x.text_end)
			x.text_end = o->segs[s].end;
	}
	x.text_bytes = o->text_bytes;
	x.eligible_bytes = o->skip == ET_R_NONE ? o->eligible_bytes : 0;
	x.remapped_bytes = o->remapped_bytes;
	x.huge_bytes = o->huge_bytes;
	x.elapsed_ns = o->elapsed_ns;
	memcpy(out, &x, x.size);
	return 0;
}

const char *enormoustext_version(void)
{
	return ENORMOUSTEXT_VERSION_STRING;
}
