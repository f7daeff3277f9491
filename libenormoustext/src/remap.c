/*
 * remap.c — moving text windows onto huge pages (DESIGN section 2).
 *
 * For each window [w, w + H) of executable text:
 *   1. prepare a replacement off to the side, H-aligned, read-write,
 *      huge pages asked for by the backend;
 *   2. copy the bytes of the window from memory (never from the file: the
 *      bytes in memory are the ones running);
 *   3. mprotect the replacement read+execute — it is never writable and
 *      executable at once;
 *   4. check in /proc/self/smaps that the replacement is on a huge page;
 *   5. swap it in with one mremap(MREMAP_MAYMOVE | MREMAP_FIXED) onto w.
 *
 * Windows are handled in rounds, one backend per round: every pending
 * window is staged in its own slot of one reservation, one smaps read
 * checks all slots, the huge ones are swapped, the rest are released and
 * wait for the next backend of the chain.  Slots are separated by PROT_NONE
 * gaps so that the kernel cannot merge two of them into one VMA, which is
 * what lets smaps speak for each slot separately.
 *
 * Nothing here allocates: the remap path may run inside the windows it
 * moves (libc's memcpy, this very code when linked statically), which is
 * safe only because nothing is ever unmapped before the swap.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* mremap: without its prototype the result is truncated */
#endif
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MREMAP_MAYMOVE
#define MREMAP_MAYMOVE 1
#endif
#ifndef MREMAP_FIXED
#define MREMAP_FIXED 2
#endif

static unsigned log2u64(uint64_t v)
{
	unsigned n = 0;
	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

/* Steps 1 to 3 for one window.  On failure the slot is left as whatever it
 * became (it is unmapped with the rest of the round) and the reason set. */
static void stage_one(struct et_window *w, uint64_t H, enum et_backend b, long *pool_left)
{
	void *slot = (void *)(uintptr_t)w->slot;
	const void *src = (const void *)(uintptr_t)w->addr;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;

	w->staged = false;
	if (b == ET_BACKEND_HUGETLB) {
		if (*pool_left <= 0) {
			w->reason = ET_R_NOMEM;
			w->err = ENOMEM;
			return;
		}
		flags |= MAP_HUGETLB | (int)(log2u64(H) << MAP_HUGE_SHIFT);
	}
	void *p = mmap(slot, H, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p != slot) {
		w->reason = ET_R_NOMEM;
		w->err = p == MAP_FAILED ? errno : EEXIST;
		/* A failed MAP_FIXED may already have unmapped our reservation
		 * there: take the range back only if it is free, else it is no
		 * longer ours and must not be unmapped at the end of the round. */
		void *q = mmap(slot, H, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		               MAP_FIXED_NOREPLACE, -1, 0);
		if (q != slot) {
			if (q != MAP_FAILED)
				munmap(q, H);    /* an old kernel took the hint elsewhere */
			w->slot_lost = true;
		}
		return;
	}
	if (b == ET_BACKEND_HUGETLB) {
		(*pool_left)--;
		/* Fault the pool pages in now: a hugetlb cgroup limit turns the
		 * first write into SIGBUS, which here becomes an error instead. */
		if (madvise(slot, H, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
			w->reason = ET_R_NOMEM;
			w->err = errno;
			return;
		}
	}
	/* thp: the first write fault of an aligned MADV_HUGEPAGE range takes a
	 * whole huge page (policy and defrag permitting). */
	if (b == ET_BACKEND_THP && madvise(slot, H, MADV_HUGEPAGE) != 0) {
		w->reason = ET_R_NOT_HUGE;
		w->err = errno;
		return;
	}
	memcpy(slot, src, H);
	if (mprotect(slot, H, (int)w->prot) != 0) {
		w->reason = ET_R_NOMEM;
		w->err = errno;
		return;
	}
	/* collapse: the filled small pages are gathered into one huge page; it
	 * does not depend on the sysfs policy, only on the process and memory. */
	if (b == ET_BACKEND_COLLAPSE && madvise(slot, H, MADV_COLLAPSE) != 0) {
		w->reason = ET_R_NOT_HUGE;
		w->err = errno;
		return;
	}
	w->staged = true;
}

static void round_fail_all(struct et_run *run, enum et_reason r, int err)
{
	for (size_t i = 0; i < run->nwins; i++) {
		struct et_window *w = &run->wins[i];
		if (w->candidate && !w->remapped) {
			w->reason = r;
			w->err = err;
		}
	}
}

/* One backend over every pending window. */
static void remap_round(struct et_run *run, enum et_backend b, size_t k, long *pool_left)
{
	const uint64_t H = run->si.pmd_size;
	const size_t span = (2 * k - 1) * H;
	const size_t len = span + H;

	char *r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED) {
		round_fail_all(run, ET_R_NOMEM, errno);
		return;
	}
	uintptr_t base = ((uintptr_t)r + H - 1) & ~(uintptr_t)(H - 1);
	if (base > (uintptr_t)r)
		munmap(r, base - (uintptr_t)r);
	if ((uintptr_t)r + len > base + span)
		munmap((void *)(base + span), (uintptr_t)r + len - (base + span));

	/* Steps 1-3. */
	size_t i = 0;
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->candidate || w->remapped)
			continue;
		uint64_t t = et_now_ns();
		w->slot = base + 2 * i * H;
		i++;
		stage_one(w, H, b, pool_left);
		run->objs[w->object].elapsed_ns += et_now_ns() - t;
	}

	/* Step 4: one smaps read speaks for every slot. */
	struct et_smaps sm;
	int err = et_smaps_read(&sm, "/proc/self/smaps");
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->slot || !w->staged)
			continue;
		const struct et_vma *v = err ? NULL : et_smaps_find(&sm, w->slot);
		bool huge = v && v->start == w->slot && v->end == w->slot + H &&
		            v->anon_huge + v->hugetlb >= H;
		if (!huge) {
			w->staged = false;
			w->reason = err ? ET_R_UNVERIFIED : ET_R_NOT_HUGE;
			w->err = err ? -err : 0;
		}
	}
	if (!err)
		et_smaps_free(&sm);

	/*
	 * ================================================================
	 *  Step 5: THE SWAP.  One mremap moves the huge replacement onto the
	 *  live text.  The kernel does it under the mmap write lock: every
	 *  thread sees either the old page tables or the new ones, the bytes
	 *  are identical, and there is no instant where [w, w+H) is unmapped.
	 *  If mremap fails, the old mapping is untouched.  Do not "simplify"
	 *  this into munmap + mmap or MAP_FIXED over the text: that opens a
	 *  hole that a running thread (or this code) would fall into.
	 * ================================================================
	 */
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->slot || !w->staged)
			continue;
		uint64_t t = et_now_ns();
		void *p = mremap((void *)(uintptr_t)w->slot, H, H, MREMAP_MAYMOVE | MREMAP_FIXED,
		                 (void *)(uintptr_t)w->addr);
		if (p == (void *)(uintptr_t)w->addr) {
			w->remapped = true;
			w->backend = b;
			w->reason = ET_R_NONE;
			w->err = 0;
		} else {
			w->reason = ET_R_MREMAP;
			w->err = errno;
		}
		w->staged = false;
		run->objs[w->object].elapsed_ns += et_now_ns() - t;
	}

	/* Release what was not swapped, and the gaps.  A swapped slot's range
	 * is no longer ours (another thread may have mapped something there
	 * since), so it is never unmapped. */
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->slot)
			continue;
		if (!w->remapped && !w->slot_lost)
			munmap((void *)(uintptr_t)w->slot, H);
		w->slot = 0;
		w->slot_lost = false;
	}
	for (size_t g = 0; g + 1 < k; g++)
		munmap((void *)(base + (2 * g + 1) * H), H);
}

/* mremap of hugetlb mappings works from Linux 5.16; before, a failed
 * mremap_to has already unmapped the destination — the live text. */
static bool hugetlb_mremap_safe(void)
{
	struct utsname u;
	unsigned maj = 0, min = 0;
	if (uname(&u) != 0 || sscanf(u.release, "%u.%u", &maj, &min) != 2)
		return false;
	return maj > 5 || (maj == 5 && min >= 16);
}

void et_remap_all(struct et_run *run, const enum et_backend *chain, int nchain)
{
	long pool_left = run->si.hugetlb_free;
	for (int c = 0; c < nchain; c++) {
		size_t k = 0;
		for (size_t j = 0; j < run->nwins; j++)
			if (run->wins[j].candidate && !run->wins[j].remapped)
				k++;
		if (k == 0)
			break;
		if (chain[c] == ET_BACKEND_HUGETLB && !hugetlb_mremap_safe()) {
			et_log(3, "round %d: hugetlb skipped: this kernel cannot move hugetlb mappings safely", c + 1);
			for (size_t j = 0; j < run->nwins; j++)
				if (run->wins[j].candidate && !run->wins[j].remapped &&
				    run->wins[j].reason == ET_R_NONE)
					run->wins[j].reason = ET_R_NO_BACKEND;
			continue;
		}
		et_log(3, "round %d: %zu window(s) with %s", c + 1, k, et_backend_name(chain[c]));
		remap_round(run, chain[c], k, &pool_left);
	}
}

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
	if (et_smaps_read(&sm, "/proc/self/smaps") != 0) {
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
