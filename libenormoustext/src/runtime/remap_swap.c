/*
 * runtime/remap_swap.c — step 5 of the remap stage: THE SWAP, under the
 * loader's lock, of every staged window of a round; and what a padded
 * window needs around it (the free parts claimed just before, the padding
 * noted in its object after, for dlclose to take away).
 *
 * Owns: the one mremap that replaces live text (through os/mm.c's
 * et_os_swap), the claims of a padded window's free parts, the objects'
 * padding spans (pad_lo, pad_hi).
 * May call: core (util: the clock), os (et_os_swap, et_os_reserve,
 * et_os_unmap), runtime/remap_file (is the window still the text
 * planned?).
 * Never: unmaps or maps over live text (only the one mremap replaces it);
 * maps over anything in a padded window's free parts (MAP_FIXED_NOREPLACE);
 * runs but under the loader's lock (et_loader_locked); waits for
 * anything; allocates.
 */
#include "runtime/remap_swap.h"

#include "core/util.h"
#include "os/os.h"
#include "runtime/remap_file.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* Padded windows: take the free parts of the window before the swap, so
 * that a mapping made there since the check (by another thread) makes the
 * swap fail instead of being covered. */
static void release_claims(struct et_window *w)
{
	for (int i = 0; i < 2; i++)
		if (w->claim_hi[i] > w->claim_lo[i])
			et_os_unmap((void *)(uintptr_t)w->claim_lo[i], w->claim_hi[i] - w->claim_lo[i]);
}

static bool claim_free_parts(struct et_window *w)
{
	for (int i = 0; i < 2; i++) {
		if (w->claim_hi[i] <= w->claim_lo[i])
			continue;
		void *want = (void *)(uintptr_t)w->claim_lo[i];
		size_t len = w->claim_hi[i] - w->claim_lo[i];
		void *p = et_os_reserve(want, len, true);
		if (p != want) {
			int e = p == MAP_FAILED ? errno : EEXIST;
			if (p != MAP_FAILED)
				et_os_unmap(p, len);     /* an old kernel took the hint elsewhere */
			for (int k = 0; k < i; k++)
				if (w->claim_hi[k] > w->claim_lo[k])
					et_os_unmap((void *)(uintptr_t)w->claim_lo[k], w->claim_hi[k] - w->claim_lo[k]);
			w->reason = ET_R_PAD_NOT_FREE;
			w->err = e;
			return false;
		}
	}
	return true;
}

/* What the padding added outside the object's own span: it outlives the
 * object's unmapping by the loader, so dlclose must take it away too. */
static void note_padding(struct et_object *o, const struct et_window *w, uint64_t H)
{
	uint64_t lo = w->addr, hi = w->addr + H;
	if (lo < o->map_lo) {
		uint64_t e = hi < o->map_lo ? hi : o->map_lo;
		if (!o->pad_hi[0] || lo < o->pad_lo[0])
			o->pad_lo[0] = lo;
		if (e > o->pad_hi[0])
			o->pad_hi[0] = e;
	}
	if (hi > o->map_hi) {
		uint64_t b = lo > o->map_hi ? lo : o->map_hi;
		if (!o->pad_hi[1] || b < o->pad_lo[1])
			o->pad_lo[1] = b;
		if (hi > o->pad_hi[1])
			o->pad_hi[1] = hi;
	}
}

/*
 * ====================================================================
 *  Step 5: THE SWAP.  One mremap moves the huge replacement onto the
 *  live text.  The kernel does it under the mmap write lock: every
 *  thread sees either the old page tables or the new ones, the bytes
 *  are identical, and there is no instant where [w, w+H) is unmapped.
 *  If mremap fails, the old mapping is untouched.  Do not "simplify"
 *  this into munmap + mmap or MAP_FIXED over the text: that opens a
 *  hole that a running thread (or this code) would fall into.
 *
 *  Run with the loader's lock held (nothing is unloaded meanwhile), and
 *  only for windows still in the text of the object they were planned for
 *  (et_remap_file_still_planned: nothing unloaded since the pass read its
 *  list, or their object still loaded from the same file).  Each window's
 *  pages are checked once more just before: a uprobe or a breakpoint set
 *  since the check before the copy (its page is then a private copy) keeps
 *  its window where it is.
 * ====================================================================
 */
void et_remap_swap_locked(void *arg, unsigned long long adds, unsigned long long subs)
{
	(void)adds;
	struct et_swap_ctx *c = arg;
	struct et_run *run = c->run;
	const uint64_t H = c->H;
	et_remap_file_presence_forget();
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->slot || !w->staged)
			continue;
		uint64_t t = et_now_ns();
		w->staged = false;
		if (!et_remap_file_still_planned(run, w, subs)) {
			w->reason = ET_R_UNLOADED;
			w->err = 0;
			run->unloaded = true;
			continue;
		}
		/* A copy read back from its file (repriming): the file must
		 * still say what the copy says — a file rewritten in place
		 * since the copy, or copied up on overlayfs (same st_ino, other
		 * bytes), keeps the copy.  The slot is one PMD-mapped folio
		 * (checked by smaps): nothing faults here. */
		if (w->repriming && memcmp((const void *)(uintptr_t)w->slot, (const void *)(uintptr_t)w->addr, H) != 0) {
			w->reason = ET_R_FILE_CHANGED;
			w->err = 0;
			run->objs[w->object].elapsed_ns += et_now_ns() - t;
			continue;
		}
		if (w->pad && !claim_free_parts(w)) {
			run->objs[w->object].elapsed_ns += et_now_ns() - t;
			continue;
		}
		void *p = et_os_swap((void *)(uintptr_t)w->slot, H, (void *)(uintptr_t)w->addr);
		if (p == (void *)(uintptr_t)w->addr) {
			w->remapped = true;
			w->backend = c->b;
			w->reason = ET_R_NONE;
			w->err = 0;
			if (w->pad)
				note_padding(&run->objs[w->object], w, H);
		} else {
			w->reason = ET_R_MREMAP;
			w->err = errno;
			if (w->pad)
				release_claims(w);
		}
		run->objs[w->object].elapsed_ns += et_now_ns() - t;
	}
}
