/*
 * runtime/remap_round.c — one round of the remap stage: one backend over
 * every pending window.
 *
 * Every pending window is staged (steps 1 to 3, remap_stage.c) in its own
 * slot of one reservation; one smaps read checks all slots (step 4); each
 * window's pages are checked once more (a uprobe or a breakpoint set since
 * keeps its window); the huge ones are swapped in (step 5, remap_swap.c,
 * under the loader's lock); the rest are released and wait for the next
 * backend of the chain.  Slots are separated by PROT_NONE gaps so that the
 * kernel cannot merge two of them into one VMA, which is what lets smaps
 * speak for each slot separately.
 *
 * Owns: a round's reservation, its slots and gaps (w->slot), the smaps
 * check of the slots, the last check of the windows' pages.
 * May call: core (smaps, util), os (every mapping change goes through
 * os/mm.c; the page map), runtime/remap_stage, runtime/remap_swap (through
 * runtime/loader's lock), runtime/defer (has the worker been asked to
 * stand down?).
 * Never: unmaps a slot that was swapped in (its range is no longer ours)
 * or one that was lost; holds the loader's lock but for the swaps;
 * allocates.
 */
#include "runtime/remap_round.h"

#include "core/smaps.h"
#include "core/util.h"
#include "os/os.h"
#include "runtime/defer.h"
#include "runtime/loader.h"
#include "runtime/remap_file.h"
#include "runtime/remap_stage.h"
#include "runtime/remap_swap.h"

#include <errno.h>
#include <unistd.h>
#include <sys/mman.h>

static void round_fail_all(struct et_run *run, enum et_backend b, enum et_reason r, int err)
{
	for (size_t i = 0; i < run->nwins; i++) {
		struct et_window *w = &run->wins[i];
		if (et_remap_pending(w, b)) {
			w->reason = r;
			w->err = err;
		}
	}
}

/* One backend over every pending window. */
void et_remap_round(struct et_run *run, enum et_backend b, size_t k, long *pool_left)
{
	const uint64_t H = run->si.pmd_size;
	const size_t span = (2 * k - 1) * H;
	const size_t len = span + H;

	char *r = et_os_reserve(NULL, len, false);
	if (r == MAP_FAILED) {
		round_fail_all(run, b, ET_R_NOMEM, errno);
		return;
	}
	uintptr_t base = ((uintptr_t)r + H - 1) & ~(uintptr_t)(H - 1);
	if (base > (uintptr_t)r)
		et_os_unmap(r, base - (uintptr_t)r);
	if ((uintptr_t)r + len > base + span)
		et_os_unmap((void *)(base + span), (uintptr_t)r + len - (base + span));

	/* Steps 1-3.  A worker asked to stand down stops here, between two
	 * windows: those not staged stay as they are. */
	size_t i = 0;
	struct et_file_cache fc = { -1, 0, false, false };
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!et_remap_pending(w, b))
			continue;
		w->slot = base + 2 * i * H;
		i++;
		if (et_defer_stop_asked()) {
			w->staged = false;
			w->reason = ET_R_STOOD_DOWN;
			w->err = 0;
			continue;
		}
		uint64_t t = et_now_ns();
		et_remap_stage_one(run, w, H, b, pool_left, &fc);
		run->objs[w->object].elapsed_ns += et_now_ns() - t;
	}
	if (fc.fd >= 0)
		close(fc.fd);

	/* Step 4: one smaps read speaks for every slot. */
	struct et_smaps sm;
	int err = et_smaps_read_self(&sm);
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->slot || !w->staged)
			continue;
		const struct et_vma *v = err ? NULL : et_smaps_find(&sm, w->slot);
		uint64_t got = !v ? 0 : b == ET_BACKEND_FILE ? v->file_pmd : v->anon_huge + v->hugetlb;
		bool huge = v && v->start == w->slot && v->end == w->slot + H && got >= H;
		if (!huge) {
			w->staged = false;
			w->reason = err ? ET_R_UNVERIFIED : b == ET_BACKEND_FILE ? ET_R_FILE_SMALL : ET_R_NOT_HUGE;
			w->err = err ? -err : 0;
		}
	}
	if (!err)
		et_smaps_free(&sm);

	/* Each window's pages checked once more (a uprobe or a breakpoint set
	 * since the check before the copy keeps its window where it is), just
	 * before the swaps; then step 5, under the loader's lock (et_remap_swap_locked,
	 * kept short: every fork of the process waits for it). */
	struct et_swap_ctx sc = { run, H, b, et_os_pagemap_open(), false };
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->slot || !w->staged)
			continue;
		const uint64_t lo = w->pad ? w->copy_lo : w->addr, hi = w->pad ? w->copy_hi : w->addr + H;
		/* (a window read back from its file replaces our own copy, whose
		 * pages are private by nature) */
		if (w->inode && !w->repriming && et_os_pages_private_in(sc.pagemap, lo, hi - lo)) {
			w->staged = false;
			w->reason = ET_R_PATCHED;
			w->err = 0;
		}
	}
	if (et_defer_stop_asked()) {
		for (size_t j = 0; j < run->nwins; j++)
			if (run->wins[j].slot && run->wins[j].staged) {
				run->wins[j].staged = false;
				run->wins[j].reason = ET_R_STOOD_DOWN;
			}
	} else {
		for (size_t j = 0; j < run->nwins && !sc.any; j++)
			sc.any = run->wins[j].slot && run->wins[j].staged;
		if (sc.any)
			et_loader_locked(et_remap_swap_locked, &sc);
	}
	if (sc.pagemap >= 0)
		close(sc.pagemap);

	/* Release what was not swapped, and the gaps.  A swapped slot's range
	 * is no longer ours (another thread may have mapped something there
	 * since), so it is never unmapped. */
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->slot)
			continue;
		if (!w->remapped && !w->slot_lost)
			et_os_unmap((void *)(uintptr_t)w->slot, H);
		w->slot = 0;
		w->slot_lost = false;
	}
	for (size_t g = 0; g + 1 < k; g++)
		et_os_unmap((void *)(base + (2 * g + 1) * H), H);
}
