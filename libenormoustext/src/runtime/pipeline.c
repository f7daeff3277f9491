/*
 * runtime/pipeline.c — the stage driver: one pass of the pipeline over the
 * objects of a pass (run->objs, run->nobjs):
 *
 *   plan ─▶ verify (before) ─▶ remap ─▶ verify (after) ─▶ report (summary)
 *
 * Owns: the order of the stages, the windows table of a pass (it lives
 * only for the pass), and ENORMOUSTEXT_PROFILE's parsed profile (read once,
 * kept for the passes after dlopen).
 * May call: core (plan, sysinfo, smaps, profile), runtime stages (verify,
 * remap, report).
 * Never: takes a lock (the caller, runtime/pass.c, holds the pass lock;
 * the remap stage takes the loader's for its swaps); looks at the object
 * table beyond the pass's objects.
 */
#include "runtime/pipeline.h"

#include "core/log.h"
#include "core/memcg.h"
#include "core/profile.h"
#include "core/smaps.h"
#include "core/util.h"
#include "runtime/remap.h"
#include "runtime/report.h"
#include "runtime/sandbox.h"
#include "runtime/verify.h"

#include <errno.h>
#include <string.h>

/*
 * ENORMOUSTEXT_PROFILE: read once, at the first pass that has windows, and
 * kept for the passes after dlopen.  A profile that cannot be used (missing,
 * truncated, corrupt, too large) moves nothing: one warning names the file
 * and says why, and the program runs on as it would without the library.
 */
static struct et_profile g_profile;
static int g_profile_state;      /* 0 not read, 1 usable, -1 unusable */
static bool g_profile_auto;      /* ENORMOUSTEXT_HOT=auto's, not a file's */

void et_pipeline_use_profile(const struct et_profile *p)
{
	g_profile = *p;
	g_profile_auto = true;
	g_profile_state = 1;
}

static int profile_get(const struct et_run *run)
{
	if (g_profile_state == 1 && g_profile_auto)
		return 1;
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

/*
 * ENORMOUSTEXT_DEFER_RATE: the windows a paced object already had moved by
 * an earlier piece.  When the next piece runs that object again, those
 * windows are anonymous copies (or its file mapped huge) where the plan
 * expects the file: they are taken as moved, with the backend that moved
 * them, and checked huge by smaps like the others.  Forgotten when no
 * object is paced any more (et_pipeline_moved_forget).
 */
struct moved {
	uint64_t addr;
	enum et_backend backend;
	/* the file behind it, as the pass that moved it found it (a copy is
	 * anonymous now: smaps no longer says), for priming it later */
	uint64_t inode, file_off, copy_off;
	uint32_t dev_major, dev_minor;
	bool congruent;
};
static struct moved *g_moved;
static size_t g_nmoved, g_moved_cap;

static const struct moved *moved_find(uint64_t addr)
{
	for (size_t i = 0; i < g_nmoved; i++)
		if (g_moved[i].addr == addr)
			return &g_moved[i];
	return NULL;
}

static void moved_add(const struct et_window *w)
{
	const struct moved *had = moved_find(w->addr);
	if (had) {
		/* what it is now (a copy primed since is the file's) */
		struct moved *m = (struct moved *)had;
		m->backend = w->backend;
		return;
	}
	if (g_nmoved == g_moved_cap) {
		size_t cap = g_moved_cap ? g_moved_cap * 2 : 64;
		struct moved *t = et_scratch_alloc(cap * sizeof *t);
		if (!t)
			return;     /* the window is then seen as not a plain mapping: left as it is */
		if (g_moved) {
			memcpy(t, g_moved, g_nmoved * sizeof *t);
			et_scratch_free(g_moved, g_moved_cap * sizeof *t);
		}
		g_moved = t;
		g_moved_cap = cap;
	}
	g_moved[g_nmoved++] = (struct moved){ w->addr, w->backend, w->inode, w->file_off, w->copy_off,
	                                      w->dev_major, w->dev_minor, w->congruent };
}

void et_pipeline_moved_forget(void)
{
	g_nmoved = 0;
}

/* A paced object run again: its windows moved by earlier pieces. */
static void moved_take(struct et_run *run, struct et_object *o)
{
	for (uint32_t k = 0; k < o->nwindows; k++) {
		struct et_window *w = &run->wins[o->first_window + k];
		const struct moved *m = moved_find(w->addr);
		if (!m)
			continue;
		w->candidate = false;
		w->remapped = true;
		w->backend = m->backend;
		w->reason = ET_R_NONE;
		w->err = 0;
		if (m->backend != ET_BACKEND_FILE) {
			w->inode = m->inode;
			w->file_off = m->file_off;
			w->copy_off = m->copy_off;
			w->dev_major = m->dev_major;
			w->dev_minor = m->dev_minor;
			w->congruent = m->congruent;
		}
	}
}

/* The most windows a piece moves: the others wait (ET_R_PACED), the
 * hottest kept when a profile gave heat, else the first in plan order. */
static void pace(struct et_run *run)
{
	size_t pending = 0;
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		w->held_back = w->candidate && !w->remapped;
		pending += w->held_back;
	}
	if (pending <= run->win_limit) {
		for (size_t j = 0; j < run->nwins; j++)
			run->wins[j].held_back = false;
		return;
	}
	(void)et_memcg_keep_best(run->wins, run->nwins, run->win_limit);
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->held_back)
			continue;
		w->held_back = false;
		w->candidate = false;
		w->reason = ET_R_PACED;
		w->err = 0;
	}
}

/* Debug (ENORMOUSTEXT_VERBOSE=3): time since the pass began at each stage. */
#define ET_MARK(run, what) \
	do { \
		if (et_log_enabled(3)) \
			et_log(3, "%s at %llu us", what, \
			       (unsigned long long)((et_now_ns() - (run)->t0_ns) / 1000)); \
	} while (0)

/* The PMD size, read at the first pass: the size of a window. */
static void read_pmd_size(struct et_run *run)
{
	if (!run->si.pmd_size_read) {
		et_sysinfo_read_pmd(&run->si, "/");
		/* no sysfs (THP not built in): the page size still tells */
		uint64_t floor = et_pmd_size_floor();
		if (!run->si.pmd_size_read && floor)
			run->si.pmd_size = floor;
	}
}

/* The plan, counting only: each object's windows (none for one skipped),
 * placed one after another; the windows of them all. */
static size_t plan_all(struct et_run *run, bool usable)
{
	size_t total = 0;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		o->first_window = (uint32_t)total;
		o->nwindows = (uint32_t)et_plan_object(run, o, (uint32_t)i, NULL);
		et_plan_classify(run, o);
		if (!usable && o->skip == ET_R_NONE)
			o->skip = ET_R_PMD_TOO_LARGE;
		if (o->skip != ET_R_NONE)
			o->nwindows = 0;
		total += o->nwindows;
	}
	return total;
}

/* The windows planned into run->wins and checked against the mappings
 * (smaps, read here with the policy): what each object could move, and
 * an object with less than ENORMOUSTEXT_MIN_BYTES of it left alone. */
static void check_windows(struct et_run *run, size_t total, uint64_t H)
{
	/* Each pass: the policy may have changed, the pool certainly has. */
	et_sysinfo_read_policy(&run->si, "/");
	struct et_smaps sm;
	int smerr = et_smaps_read_self(&sm);
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
		et_plan_object(run, o, (uint32_t)i, run->wins + o->first_window);
		o->eligible_bytes = 0;
		for (uint32_t k = 0; k < o->nwindows; k++) {
			et_verify_window(run, &run->wins[o->first_window + k], smp);
			if (!smp && run->wins[o->first_window + k].reason == ET_R_MAPPING)
				run->wins[o->first_window + k].reason = smreason;
			if (!run->wins[o->first_window + k].pad)
				o->eligible_bytes += H;
		}
		if (o->replaces)
			moved_take(run, o);
		if (o->eligible_bytes < run->opt.min_bytes) {
			o->skip = ET_R_MIN_BYTES;
			for (uint32_t k = 0; k < o->nwindows; k++) {
				run->wins[o->first_window + k].candidate = false;
				run->wins[o->first_window + k].reason = ET_R_MIN_BYTES;
			}
		}
	}
	if (smp) {
		et_verify_file_huge(run, smp);
		et_smaps_free(&sm);
	}
}

/* ENORMOUSTEXT_PROFILE (or ENORMOUSTEXT_HOT=auto's): hot windows only;
 * a profile that cannot be used moves nothing. */
static void keep_hot(struct et_run *run)
{
	int prof = run->again ? 0 : profile_get(run);
	if (prof > 0) {
		et_plan_hot(run, &g_profile);
	} else if (prof < 0) {
		for (size_t j = 0; j < run->nwins; j++)
			if (run->wins[j].candidate) {
				run->wins[j].candidate = false;
				run->wins[j].reason = ET_R_PROFILE;
			}
		run->reason = ET_R_PROFILE;
		run->reason_detail = g_profile.err;
	}
}

/* The candidates moved by the first backend of the chain that takes each;
 * with no backend, or none but the file where a copy cannot be made
 * executable, each says why. */
static void remap_windows(struct et_run *run)
{
	enum et_backend chain[4];
	const char *why = NULL;
	int nchain = et_backend_chain(&run->si, run->opt.backend, chain, &why);
	/* memory-deny-write-execute, or a security module that refused an
	 * earlier copy execute permission: no copy can be made executable; only
	 * the file backend is tried, and what it cannot take says why */
	bool mdwe = false;
	const bool refused = et_sandbox_exec_refused();
	if (nchain > 0 && (refused || et_sandbox_mdwe())) {
		int kept = 0;
		for (int c = 0; c < nchain; c++)
			if (chain[c] == ET_BACKEND_FILE)
				chain[kept++] = chain[c];
		mdwe = kept < nchain;
		nchain = kept;
		if (mdwe) {
			run->reason = refused ? ET_R_EXEC_REFUSED : ET_R_MDWE;
			run->reason_detail = refused ? "a security module (SELinux: execmem)"
			                             : "prctl(PR_SET_MDWE) or MemoryDenyWriteExecute=";
		}
	}
	const enum et_reason no_copy = refused ? ET_R_EXEC_REFUSED : ET_R_MDWE;
	if (nchain == 0 && mdwe) {
		for (size_t j = 0; j < run->nwins; j++)
			if (run->wins[j].candidate)
				run->wins[j].reason = no_copy;
	} else if (nchain == 0) {
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
		for (size_t j = 0; mdwe && j < run->nwins; j++)
			if (run->wins[j].candidate && !run->wins[j].remapped)
				run->wins[j].reason = no_copy;
	}
}

/* What this pass moved itself; a paced object's are remembered for the
 * piece that runs it next. */
static void note_moved(struct et_run *run)
{
	for (size_t j = 0; j < run->nwins; j++)
		if (run->wins[j].remapped && !moved_find(run->wins[j].addr))
			run->pieces_moved++;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		o->paced = false;
		/* waiting for a later piece, or left for a later pass (objects
		 * were unloaded meanwhile; the worker stood down): run again */
		o->prime_later = false;
		for (uint32_t k = 0; k < o->nwindows; k++) {
			const struct et_window *w = &run->wins[o->first_window + k];
			enum et_reason r = w->reason;
			o->paced |= r == ET_R_PACED || r == ET_R_UNLOADED || r == ET_R_STOOD_DOWN;
			/* a copy priming could still turn into zero-copy */
			o->prime_later |= run->opt.prime && !run->again && w->remapped && w->huge &&
			                  w->backend != ET_BACKEND_FILE && !w->pad && w->inode && w->congruent;
			/* too little of it had run: looked at again then too */
			o->prime_later |= r == ET_R_LITTLE_RUN;
		}
		for (uint32_t k = 0; (o->paced || o->prime_later) && k < o->nwindows; k++)
			if (run->wins[o->first_window + k].remapped)
				moved_add(&run->wins[o->first_window + k]);
	}
}

/* The pipeline over the objects of one pass (run->objs, run->nobjs): plan,
 * check against the mappings, remap, verify, summarise into the objects.
 * The windows table lives only for the pass. */
void et_pipeline_run(struct et_run *run)
{
	read_pmd_size(run);
	ET_MARK(run, "pmd size");
	const uint64_t H = run->si.pmd_size;
	/* 64 KiB-page arm64 kernels: 512 MiB windows.  Every object is left
	 * alone, so nothing is copied, padded or touched. */
	const bool usable = et_pmd_size_usable(H);
	if (!usable)
		run->reason = ET_R_PMD_TOO_LARGE;
	size_t total = plan_all(run, usable);
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
	check_windows(run, total, H);
	keep_hot(run);
	if (run->win_limit)
		pace(run);
	remap_windows(run);
	ET_MARK(run, "remap");
	et_verify(run);
	ET_MARK(run, "verify");
	note_moved(run);
	et_report_summarise(run);
	if (run->opt.perfmap) {
		et_perfmap_write(run);   /* logs a failure itself */
	}
	et_scratch_free(run->wins, wins_len);
	run->wins = NULL;
	run->nwins = 0;
}
