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
 * Never: takes a lock (the caller, runtime/pass.c, holds the one lock and
 * the loader's); looks at the object table beyond the pass's objects.
 */
#include "runtime/pipeline.h"

#include "core/log.h"
#include "core/profile.h"
#include "core/smaps.h"
#include "core/util.h"
#include "runtime/remap.h"
#include "runtime/report.h"
#include "runtime/verify.h"

#include <errno.h>

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
void et_pipeline_run(struct et_run *run)
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
		o->nwindows = (uint32_t)et_plan_object(run, o, (uint32_t)i, NULL);
		et_plan_classify(run, o);
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
		et_plan_object(run, o, (uint32_t)i, run->wins + o->first_window);
		o->eligible_bytes = 0;
		for (uint32_t k = 0; k < o->nwindows; k++) {
			et_verify_window(run, &run->wins[o->first_window + k], smp);
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
		et_verify_file_huge(run, smp);
		et_smaps_free(&sm);
	}
	/* hot windows only */
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
	et_report_summarise(run);
	if (run->opt.perfmap) {
		et_perfmap_write(run);   /* logs a failure itself */
	}
	et_scratch_free(run->wins, wins_len);
	run->wins = NULL;
	run->nwins = 0;
}
