/*
 * core/plan.h — planning: from an object's segments, the facts and the
 * options to the huge-page windows a pass may move (et_window), and, with
 * a profile, which of them are hot.  Pure: no memory is touched but the
 * tables given; unit-tested on made-up objects (tests/unit/test_plan.c).
 */
#ifndef ET_CORE_PLAN_H
#define ET_CORE_PLAN_H

#include "core/object.h"

struct et_window {
	uint64_t addr;          /* PMD-aligned start */
	uint32_t object;        /* index into the object table */
	uint32_t seg;           /* index of the segment in the object */
	uint32_t prot;          /* PROT_* of the text */
	enum et_backend backend;/* what worked (after remap) */
	enum et_reason reason;  /* why it stayed small */
	int err;                /* errno of the step that failed, 0 if none */
	bool candidate;         /* planned and allowed: the remapper may move it */
	bool staged;            /* replacement ready (during a round) */
	bool remapped;          /* swapped in */
	bool file_huge;         /* the kernel already maps it huge from the file */
	bool huge;              /* confirmed by smaps */
	uint64_t slot;          /* staging address during remap (0 = none) */
	bool slot_lost;         /* the slot's range stopped being ours (failed MAP_FIXED) */
	/* the file behind the window (from smaps): the file backend maps it,
	 * the copying ones read the window's bytes from it (runtime/remap.c) */
	uint64_t file_off;      /* offset in the file of `addr` (whole windows) */
	uint64_t copy_off;      /* offset in the file of the first byte copied (addr, or copy_lo) */
	uint64_t inode;         /* 0: no file (anonymous text: the range API) */
	uint32_t dev_major, dev_minor;
	bool congruent;         /* file_off is a multiple of H */
	/* a padded window: only [copy_lo, copy_hi) holds text mapped now; the
	 * rest of the window is free address space that the copy fills with
	 * zeros (ENORMOUSTEXT_PAD_THRESHOLD) */
	bool pad;
	uint64_t copy_lo, copy_hi;
	/* ENORMOUSTEXT_PRIME: a copied window read back from its file */
	bool repriming, held_back;
	enum et_backend prev_backend;
	uint64_t claim_lo[2], claim_hi[2];   /* free parts reserved before the swap */
	/* ENORMOUSTEXT_PROFILE: samples in the window (0 without a profile),
	 * so that a budget (memcg) can keep the hottest */
	uint64_t heat;
	bool heat_known;
};

/* The pure planner: every PMD window [w, w+pmd) that lies wholly inside one
 * of the segments, in address order of the input.  Writes at most `cap`
 * windows and returns how many there are in all (so a caller can size its
 * table with a first call where cap = 0). */
ET_HIDDEN size_t et_plan_windows(const struct et_segment *segs, size_t nsegs,
                                 uint64_t pmd, uint32_t object,
                                 struct et_window *out, size_t cap);

/* Padded windows (pure, like et_plan_windows): for each segment, its first
 * and last partial window when the text in it is more than `threshold`
 * bytes (0 = never).  Fills addr, object, seg, pad, copy_lo/hi (the text
 * part).  Returns how many there are; writes at most cap. */
ET_HIDDEN size_t et_plan_pads(const struct et_segment *segs, size_t nsegs, uint64_t pmd,
                              uint64_t threshold, uint32_t object,
                              struct et_window *out, size_t cap);
struct et_run;
struct et_profile;
/* The windows of object `idx` of the run in address order, segment by
 * segment: a padded first window, the whole windows, a padded last window
 * (padding only where the run may copy: not with the file backend alone,
 * not when windows move again).  With out == NULL, only counts. */
ET_HIDDEN size_t et_plan_object(const struct et_run *run, const struct et_object *o, uint32_t idx,
                                struct et_window *out);
/* Object-level decisions that need the path: ENORMOUSTEXT_INCLUDE/EXCLUDE. */
ET_HIDDEN void et_plan_classify(const struct et_run *run, struct et_object *o);
/* Keep the hottest candidate windows of the run (ENORMOUSTEXT_HOT_COVERAGE,
 * ENORMOUSTEXT_HOT_BUDGET); the others become ET_R_COLD (see plan.c). */
ET_HIDDEN void et_plan_hot(struct et_run *run, const struct et_profile *prof);

#endif
