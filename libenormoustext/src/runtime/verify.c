/*
 * runtime/verify.c — the verify stage, on both sides of the swap.
 *
 * Owns: the checks of each planned window against the mappings as they are
 * (et_verify_window: one plain private r-x mapping of the object's file,
 * not mlock'ed, not patched by a debugger or a uprobe; for a padded
 * window, the rest of it free address space), the windows the kernel
 * already maps huge from the file (et_verify_file_huge), and, after the
 * swap, what smaps confirms huge (et_verify).  Only what smaps confirms is
 * ever called huge.
 * May call: core (smaps, util), os (the page map).
 * Never: changes a mapping; allocates with malloc.
 */
#include "runtime/verify.h"

#include "os/os.h"

#include <sys/mman.h>

/* ---------------------------------------------------------- before the swap */

/* Window-level checks against the mappings as they are now. */
static void check_pad(struct et_run *run, struct et_window *w, const struct et_smaps *sm);

void et_verify_window(struct et_run *run, struct et_window *w, const struct et_smaps *sm)
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
	if (v->inode != 0 && v->anonymous && et_os_pages_private(w->addr, H)) {
		w->reason = ET_R_PATCHED;
		return;
	}
	if (v->inode != 0) {
		/* what the file backend needs: the file and the offset */
		w->file_off = v->offset + (w->addr - v->start);
		w->copy_off = w->file_off;
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
	if (v->anonymous && et_os_pages_private(lo, hi - lo)) {
		w->reason = ET_R_PATCHED;
		return;
	}
	w->copy_lo = lo;
	w->copy_hi = hi;
	/* the text part's file, for the copy (never the file backend: the
	 * window is not all the file's) */
	w->copy_off = v->offset + (lo - v->start);
	w->inode = v->inode;
	w->dev_major = v->dev_major;
	w->dev_minor = v->dev_minor;
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
void et_verify_file_huge(struct et_run *run, const struct et_smaps *sm)
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

/* ----------------------------------------------------------- after the swap */

/*
 * Step 8: confirm from smaps.  A VMA may hold several windows (neighbouring
 * anonymous replacements can merge, a file mapping spans many): its huge
 * bytes are handed out window by window, so the totals are exact and no
 * window is counted huge that its VMA cannot account for.
 */
void et_verify(struct et_run *run)
{
	const uint64_t H = run->si.pmd_size;
	struct et_smaps sm;
	if (et_smaps_read_self(&sm) != 0) {
		for (size_t j = 0; j < run->nwins; j++)
			if (run->wins[j].remapped || run->wins[j].file_huge)
				run->wins[j].reason = ET_R_UNVERIFIED;
		return;
	}
	const struct et_vma *cur = NULL;
	uint64_t budget = 0;
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->remapped && !w->file_huge)
			continue;
		const struct et_vma *v = et_smaps_find(&sm, w->addr);
		if (v != cur) {
			cur = v;
			budget = v ? et_vma_huge_bytes(v) : 0;
		}
		if (v && w->addr + H <= v->end && budget >= H) {
			budget -= H;
			w->huge = true;
		} else {
			w->huge = false;
			w->reason = ET_R_UNVERIFIED;
		}
	}
	et_smaps_free(&sm);
}
