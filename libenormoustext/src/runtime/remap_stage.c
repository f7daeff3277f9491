/*
 * runtime/remap_stage.c — steps 1 to 3 of the remap stage, for one window
 * in its slot (see remap.c for the whole dance):
 *   1. the replacement, off to the side in the slot: an anonymous mapping
 *      read-write with huge pages asked for by the backend (thp, collapse,
 *      hugetlb), or, for the file backend, the window's own file at the
 *      window's own offset, read+execute from the start, MADV_HUGEPAGE and
 *      one fault;
 *   2. the window's bytes copied in: from its file (the page cache) where
 *      the window has one that is still the one it maps, else from memory
 *      under the loader's lock, only while the window is still the text
 *      planned;
 *   3. mprotect read+execute (and MADV_COLLAPSE for collapse).
 * On overlayfs the slot's bytes are compared with the window's before it
 * counts as staged (a copy-up may say something else).
 *
 * Owns: a slot's contents until the round checks it (w->staged, and the
 * window's reason when staging fails).
 * May call: os (every mapping change goes through os/mm.c),
 * runtime/remap_file (the window's file, still planned?), runtime/loader
 * (its lock, for the copies from memory and the comparisons),
 * runtime/sandbox (was execute permission refused?).
 * Never: makes a mapping writable and executable at once; touches the live
 * window (only reads it); allocates; reads an object's memory without the
 * loader's lock.
 */
#include "runtime/remap_stage.h"

#include "os/os.h"
#include "runtime/loader.h"
#include "runtime/remap_file.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

/* The MAP_FIXED that was to fill window w's slot returned p, not the slot.
 * A failed MAP_FIXED may already have unmapped our reservation there: take
 * the range back only if it is free, else it is no longer ours and must
 * not be unmapped at the end of the round. */
static void slot_failed(struct et_window *w, void *p, uint64_t H)
{
	void *slot = (void *)(uintptr_t)w->slot;
	w->reason = ET_R_NOMEM;
	w->err = p == MAP_FAILED ? errno : EEXIST;
	void *q = et_os_reserve(slot, H, true);
	if (q != slot) {
		if (q != MAP_FAILED)
			et_os_unmap(q, H);    /* an old kernel took the hint elsewhere */
		w->slot_lost = true;
	}
}

/* Fault the slot in with one read.  Where the page cache holds the window
 * as one PMD-sized folio, that one fault maps all of it with a PMD entry;
 * where none of it is cached yet, readahead through a MADV_HUGEPAGE mapping
 * reads it in as such a folio first.  Where it holds small pages, one fault
 * maps a few of them and the smaps check says "small": a failure that
 * costs one fault, not 512 (most windows of a program that has just
 * started are cached small). */
static void touch_first(const char *slot)
{
	(void)*(volatile const char *)slot;
}

static bool window_same_locked(struct et_run *run, struct et_window *w, const void *slot, uint64_t H);

static void stage_file(struct et_run *run, struct et_window *w, uint64_t H, struct et_file_cache *fc)
{
	void *slot = (void *)(uintptr_t)w->slot;
	int fd = et_remap_file_open(run, w, fc);
	if (fd < 0)
		return;
	/* Mapped read+execute from the start: it is never writable. */
	void *p = et_os_place_file(slot, H, (int)w->prot, fd, w->file_off);
	if (p != slot) {
		slot_failed(w, p, H);
		return;
	}
	if (et_os_advise(slot, H, MADV_HUGEPAGE) != 0) {
		w->reason = ET_R_FILE_SMALL;
		w->err = errno;
		return;
	}
	/* a copied window just dropped from the cache (runtime/remap_prime.c)
	 * is read back now: readahead takes a free huge page if there is one
	 * and never waits for compaction, so one is made first (os.h) */
	if (w->repriming)
		(void)et_os_make_room(H);
	touch_first(slot);
	/* Kernels with CONFIG_READ_ONLY_THP_FOR_FS can gather small cached
	 * pages into a huge folio; elsewhere this is EINVAL, and smaps says. */
	(void)et_os_advise(slot, H, MADV_COLLAPSE);
	/* overlayfs: the slot maps whatever file the path opens now — a
	 * copy-up since the load may say something else than the lower file
	 * the window maps: the window's own bytes decide (a copy read back,
	 * repriming, is compared at its swap) */
	if (fc->overlay && !w->repriming && !window_same_locked(run, w, slot, H))
		return;
	w->staged = true;
}

/* A copy from memory, under the loader's lock (nothing is unloaded while
 * it reads), only if the window is still the text the pass planned. */
struct mem_copy {
	struct et_run *run;
	const struct et_window *w;
	char *dst;
	const char *src;
	size_t len;
	bool done;
};

static void mem_copy_locked(void *arg, unsigned long long adds, unsigned long long subs)
{
	(void)adds;
	struct mem_copy *m = arg;
	et_remap_file_presence_forget();
	if (!et_remap_file_still_planned(m->run, m->w, subs))
		return;
	memcpy(m->dst, m->src, m->len);
	m->done = true;
}

/* Do the slot's H bytes say what window w's do?  Read under the loader's
 * lock, only if w is still the text the pass planned; false with the
 * reason set otherwise.  Costs a read of both (the slot's pages faulted
 * in): for overlayfs only (stage_file). */
struct same_check {
	struct et_run *run;
	const struct et_window *w;
	const void *slot;
	uint64_t H;
	int same;    /* -1: not compared (unloaded) */
};

static void same_check_locked(void *arg, unsigned long long adds, unsigned long long subs)
{
	(void)adds;
	struct same_check *m = arg;
	et_remap_file_presence_forget();
	if (!et_remap_file_still_planned(m->run, m->w, subs))
		return;
	m->same = memcmp(m->slot, (const void *)(uintptr_t)m->w->addr, m->H) == 0;
}

static bool window_same_locked(struct et_run *run, struct et_window *w, const void *slot, uint64_t H)
{
	struct same_check m = { run, w, slot, H, -1 };
	et_loader_locked(same_check_locked, &m);
	if (m.same == 1)
		return true;
	w->reason = m.same < 0 ? ET_R_UNLOADED : ET_R_FILE_CHANGED;
	w->err = 0;
	if (m.same < 0)
		run->unloaded = true;
	return false;
}

/* Step 2 for [dst, dst + len), the window's bytes at src: from the file
 * where the window has one (see the banner), else from memory.  0 or an
 * errno (the reason set when it is not the file's fault). */
static int copy_in(struct et_run *run, struct et_window *w, char *dst, const char *src, size_t len,
                   struct et_file_cache *fc)
{
	if (w->inode) {
		int fd = et_remap_file_open(run, w, fc);
		if (fd >= 0 && !fc->overlay) {
			uint64_t off = w->copy_off;
			while (len > 0) {
				ssize_t r = pread(fd, dst, len, (off_t)off);
				if (r < 0 && errno == EINTR)
					continue;
				if (r <= 0)
					return r < 0 ? errno : EIO;   /* shorter than it was mapped: cut since */
				dst += r;
				len -= (size_t)r;
				off += (uint64_t)r;
			}
			return 0;
		}
		/* not at its path any more (replaced, deleted), or on
		 * overlayfs, where the path may open a copy-up that says
		 * something else (et_remap_file_open): from memory */
		w->reason = ET_R_NONE;
		w->err = 0;
	}
	struct mem_copy m = { run, w, dst, src, len, false };
	et_loader_locked(mem_copy_locked, &m);
	if (!m.done) {
		w->reason = ET_R_UNLOADED;
		run->unloaded = true;
		return ESRCH;
	}
	return 0;
}

/* Steps 1 to 3 for one window.  On failure the slot is left as whatever it
 * became (it is unmapped with the rest of the round) and the reason set. */
void et_remap_stage_one(struct et_run *run, struct et_window *w, uint64_t H, enum et_backend b,
                        long *pool_left, struct et_file_cache *fc)
{
	void *slot = (void *)(uintptr_t)w->slot;
	const void *src = (const void *)(uintptr_t)w->addr;
	uint64_t hugetlb = 0;

	w->staged = false;
	if (b == ET_BACKEND_FILE) {
		stage_file(run, w, H, fc);
		return;
	}
	/* an earlier copy was refused execute permission: so would this one */
	if (et_sandbox_exec_refused()) {
		w->reason = ET_R_EXEC_REFUSED;
		w->err = EACCES;
		return;
	}
	if (b == ET_BACKEND_HUGETLB) {
		if (*pool_left <= 0) {
			w->reason = ET_R_NOMEM;
			w->err = ENOMEM;
			return;
		}
		hugetlb = H;
	}
	void *p = et_os_place_anon(slot, H, PROT_READ | PROT_WRITE, hugetlb);
	if (p != slot) {
		slot_failed(w, p, H);
		return;
	}
	if (b == ET_BACKEND_HUGETLB) {
		(*pool_left)--;
		/* Fault the pool pages in now: a hugetlb cgroup limit turns the
		 * first write into SIGBUS, which here becomes an error instead. */
		if (et_os_advise(slot, H, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
			w->reason = ET_R_NOMEM;
			w->err = errno;
			return;
		}
	}
	/* thp: the first write fault of an aligned MADV_HUGEPAGE range takes a
	 * whole huge page (policy and defrag permitting). */
	if (b == ET_BACKEND_THP && et_os_advise(slot, H, MADV_HUGEPAGE) != 0) {
		w->reason = ET_R_NOT_HUGE;
		w->err = errno;
		return;
	}
	/* padded: only the part mapped now; the rest stays zero */
	const uint64_t lo = w->pad ? w->copy_lo : w->addr, hi = w->pad ? w->copy_hi : w->addr + H;
	int e = copy_in(run, w, (char *)slot + (lo - w->addr), (const char *)src + (lo - w->addr), hi - lo, fc);
	if (e) {
		if (w->reason == ET_R_NONE) {
			w->reason = ET_R_FILE_CHANGED;
			w->err = e;
		}
		return;
	}
	/* the bytes are the file's: a core dump need not hold them */
	if (w->inode)
		(void)et_os_advise(slot, H, MADV_DONTDUMP);
	if (et_os_protect(slot, H, (int)w->prot) != 0) {
		w->err = errno;
		w->reason = ET_R_NOMEM;
		/* a security module's refusal (SELinux without execmem): no
		 * later copy is tried in this process */
		if (w->err == EACCES && (w->prot & PROT_EXEC)) {
			w->reason = ET_R_EXEC_REFUSED;
			et_sandbox_exec_refused_set();
		}
		return;
	}
	/* collapse: the filled small pages are gathered into one huge page; it
	 * does not depend on the sysfs policy, only on the process and memory. */
	if (b == ET_BACKEND_COLLAPSE && et_os_advise(slot, H, MADV_COLLAPSE) != 0) {
		w->reason = ET_R_NOT_HUGE;
		w->err = errno;
		return;
	}
	w->staged = true;
}
