/*
 * runtime/remap.c — the remap stage: moving text windows onto huge pages.
 *
 * For each window [w, w + H) of executable text:
 *   1. prepare a replacement off to the side, H-aligned, read-write,
 *      huge pages asked for by the backend;
 *   2. copy the bytes of the window: from its file (the page cache), when
 *      the verify stage found every page of the window still the file's —
 *      then those are the very bytes in memory, and a probe's or a
 *      debugger's int3 is never among them (a uprobe replaces the page in
 *      the process, never the file's); from memory otherwise (anonymous
 *      text given to the range API, a file no longer at its path), under
 *      the loader's lock;
 *   3. mprotect the replacement read+execute — it is never writable and
 *      executable at once;
 *   4. check in /proc/self/smaps that the replacement is on a huge page;
 *   5. swap it in with one mremap(MREMAP_MAYMOVE | MREMAP_FIXED) onto w,
 *      under the loader's lock, only if the loader has unloaded nothing
 *      since the pass read its list (then w is still that object's text),
 *      and only if every page of w is still the file's (a uprobe or a
 *      breakpoint set meanwhile keeps its window where it is).
 *
 * Steps 1 to 4 run with no lock but the pass lock: the loader's lock is
 * held for the swaps alone (runtime/loader.c: a child forked while it is
 * held would wait for ever in its first dlopen).
 *
 * Windows are handled in rounds, one backend per round: every pending
 * window is staged in its own slot of one reservation, one smaps read
 * checks all slots, the huge ones are swapped, the rest are released and
 * wait for the next backend of the chain.  Slots are separated by PROT_NONE
 * gaps so that the kernel cannot merge two of them into one VMA, which is
 * what lets smaps speak for each slot separately.
 *
 * The `file` backend (zero-copy) is the same dance with a different
 * replacement: the slot maps the window's own file, at the window's own
 * offset (address and offset congruent modulo H), with MADV_HUGEPAGE and a
 * populate.  When the page cache holds that part of the file as one huge
 * folio — or can read it in as one, because none of it is cached yet —
 * the slot is mapped with a single PMD entry; nothing is copied, the pages
 * are the page cache's (shared with every process that maps the file), and
 * after the swap the window is still a mapping of the file at the same
 * offset, so debuggers, profilers and unwinders see the file as before.
 * Where the cache holds small pages the slot stays small, is released, and
 * the window waits for the next backend (an anonymous copy).
 *
 * Copies are anonymous memory charged to the process's memory cgroup: a
 * round of a copying backend stages no more windows than the cgroup's
 * limits leave room for (memcg.c; see budget_round below), the hottest
 * first; the others stay small with ET_R_MEMCG.
 *
 * Padded windows (et_plan_pads) hold text in only part of the window; the
 * rest is free address space, claimed with MAP_FIXED_NOREPLACE just before
 * the swap so that nothing that appeared there meanwhile is ever covered.
 *
 * Nothing here allocates: the remap path may run inside the windows it
 * moves (libc's memcpy, this very code when linked statically), which is
 * safe only because nothing is ever unmapped before the swap.
 *
 * Copies of a file's text are left out of core dumps (MADV_DONTDUMP): the
 * bytes are the file's, which a debugger reads from the file, as it does
 * for the mapping they replace (a core of a process with 60 MiB of copies
 * would otherwise hold 60 MiB more).
 *
 * Owns: staging, the rounds, the swap, the memory cgroup budget of a pass.
 * May call: core (memcg, smaps, log, util), os (every mapping change goes
 * through os/mm.c: et_os_swap is THE SWAP), runtime/loader (its lock, for
 * the swaps and the copies from memory), runtime/defer (has the worker
 * been asked to stand down?), runtime/sandbox (memory-deny-write-execute).
 * Never: makes a mapping writable and executable at once; unmaps or maps
 * over live text (only the one mremap replaces it); allocates; reads an
 * object's memory without the loader's lock; holds that lock but for a
 * swap or a copy from memory.
 */

#include "runtime/remap.h"

#include "core/log.h"
#include "core/memcg.h"
#include "core/smaps.h"
#include "core/util.h"
#include "os/os.h"
#include "os/pagecache.h"
#include "runtime/defer.h"
#include "runtime/loader.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/vfs.h>

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

/* The file behind the windows of one object, opened once per round. */
struct file_cache {
	int fd;
	uint32_t object;
	bool tried;
	bool overlay;   /* the file is on overlayfs (see window_file) */
};

#define OVERLAYFS_MAGIC 0x794c7630

static bool on_overlay(int fd)
{
	int saved = errno;
	struct statfs st;
	bool r = fstatfs(fd, &st) == 0 && (unsigned long)(unsigned int)st.f_type == OVERLAYFS_MAGIC;
	errno = saved;
	return r;
}

/* Is the file stat(2) gave st (open at fd, or at path) the one the window
 * maps?  Its inode, and its device as maps gives it: stat's, or the
 * device of the mount it is on (a btrfs subvolume's files stat with a
 * device of their own, while maps shows the file system's). */
static bool same_file(const struct et_window *w, const struct stat *st, int fd, const char *path)
{
	if ((uint64_t)st->st_ino != w->inode)
		return false;
	if (major(st->st_dev) == w->dev_major && minor(st->st_dev) == w->dev_minor)
		return true;
	uint32_t maj, min;
	return et_file_mount_dev(fd, path, &maj, &min) && maj == w->dev_major && min == w->dev_minor;
}

/* An open file descriptor for the file the window maps, or -1 with the
 * reason set.  The path is only a way to find the file: it must be the
 * very inode the mapping holds (a package upgrade replaces the file).
 * On overlayfs that is not enough: a file copied up to the upper layer
 * (opened for writing, or its metadata changed) keeps its st_dev and
 * st_ino, while the path now opens the upper copy, which may say
 * something else than the lower file the process maps — fc->overlay, and
 * the bytes are compared before they replace any (stage_file, copy_in,
 * swap_locked). */
static int window_file(struct et_run *run, struct et_window *w, struct file_cache *fc)
{
	if (!fc->tried || fc->object != w->object) {
		if (fc->fd >= 0)
			close(fc->fd);
		fc->fd = -1;
		fc->tried = true;
		fc->object = w->object;
		const char *path = run->objs[w->object].path;
		/* O_NONBLOCK: whatever is at the path now (a FIFO put there
		 * since the load?) must not block the open */
		int fd = path[0] ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) : -1;
		struct stat st;
		if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !same_file(w, &st, fd, NULL))) {
			close(fd);
			fd = -2;
		}
		fc->fd = fd;
		fc->overlay = fd >= 0 && on_overlay(fd);
	}
	if (fc->fd < 0) {
		w->reason = ET_R_FILE_CHANGED;
		w->err = 0;
		return -1;
	}
	/* the same file, but this window may come from another mapping of it */
	return fc->fd;
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

static void stage_file(struct et_run *run, struct et_window *w, uint64_t H, struct file_cache *fc)
{
	void *slot = (void *)(uintptr_t)w->slot;
	int fd = window_file(run, w, fc);
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

/*
 * Is window w still the text the pass planned it as?  Called with the
 * loader's lock held, with `subs` the loader's count of objects removed
 * now.  Yes when the loader has removed nothing since the pass read its
 * list (run->loader_subs).  Otherwise, yes when w's object is still
 * loaded (the loader unmaps an object only when it unloads it: a loaded
 * object's mappings are its own) and the file at its path is still the one
 * its window maps (an object unloaded and loaded again at the same place
 * from a file replaced meanwhile is not the same text).  Objects found
 * through a dlmopen namespace's link maps are not looked for: no.
 */
struct presence {
	struct et_run *run;
};

static int mark_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct et_run *run = ((struct presence *)arg)->run;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		if (!o->foreign && o->base == info->dlpi_addr && o->phdr == (uintptr_t)info->dlpi_phdr &&
		    (o->is_main || !strcmp(o->path, info->dlpi_name ? info->dlpi_name : "")))
			o->still_loaded = true;
	}
	return 0;
}

static bool g_presence_read;   /* still_loaded is up to date for this swap */

static void read_presence(struct et_run *run)
{
	for (size_t i = 0; i < run->nobjs; i++)
		run->objs[i].still_loaded = false;
	struct presence p = { run };
	et_loader_iterate(mark_loaded, &p);   /* nested: the lock is this thread's */
	g_presence_read = true;
}

static bool still_planned(struct et_run *run, const struct et_window *w, unsigned long long subs)
{
	if (run->loader_subs == ET_LOADER_SUBS_UNKNOWN || subs == run->loader_subs)
		return true;
	if (!g_presence_read)
		read_presence(run);
	const struct et_object *o = &run->objs[w->object];
	if (!o->still_loaded)
		return false;
	struct stat st;
	return !w->inode || (o->path[0] && stat(o->path, &st) == 0 && same_file(w, &st, -1, o->path));
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
	g_presence_read = false;
	if (!still_planned(m->run, m->w, subs))
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
	g_presence_read = false;
	if (!still_planned(m->run, m->w, subs))
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
                   struct file_cache *fc)
{
	if (w->inode) {
		int fd = window_file(run, w, fc);
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
		 * something else (window_file): from memory */
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
static void stage_one(struct et_run *run, struct et_window *w, uint64_t H, enum et_backend b,
                      long *pool_left, struct file_cache *fc)
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

/* Can backend b make this window huge?  The file backend maps the file
 * itself, so it needs the whole window to be file text at an offset
 * congruent to its address; padded windows need a copy. */
static bool suits(const struct et_window *w, enum et_backend b)
{
	if (b != ET_BACKEND_FILE)
		return true;
	return !w->pad && w->inode != 0 && w->congruent;
}

static bool pending(const struct et_window *w, enum et_backend b)
{
	return w->candidate && !w->remapped && suits(w, b);
}

static void round_fail_all(struct et_run *run, enum et_backend b, enum et_reason r, int err)
{
	for (size_t i = 0; i < run->nwins; i++) {
		struct et_window *w = &run->wins[i];
		if (pending(w, b)) {
			w->reason = r;
			w->err = err;
		}
	}
}

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

struct swap_ctx {
	struct et_run *run;
	uint64_t H;
	enum et_backend b;
	int pagemap;       /* /proc/self/pagemap, or -1 */
	bool any;
};

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
 *  (still_planned: nothing unloaded since the pass read its list, or their
 *  object still loaded from the same file).  Each window's pages are checked once more just before: a uprobe
 *  or a breakpoint set since the check before the copy (its page is then
 *  a private copy) keeps its window where it is.
 * ====================================================================
 */
static void swap_locked(void *arg, unsigned long long adds, unsigned long long subs)
{
	(void)adds;
	struct swap_ctx *c = arg;
	struct et_run *run = c->run;
	const uint64_t H = c->H;
	g_presence_read = false;
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->slot || !w->staged)
			continue;
		uint64_t t = et_now_ns();
		w->staged = false;
		if (!still_planned(run, w, subs)) {
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

/* One backend over every pending window. */
static void remap_round(struct et_run *run, enum et_backend b, size_t k, long *pool_left)
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
	struct file_cache fc = { -1, 0, false, false };
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!pending(w, b))
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
		stage_one(run, w, H, b, pool_left, &fc);
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
	 * before the swaps; then step 5, under the loader's lock (swap_locked,
	 * kept short: every fork of the process waits for it). */
	struct swap_ctx sc = { run, H, b, et_os_pagemap_open(), false };
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
			et_loader_locked(swap_locked, &sc);
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

/*
 * ENORMOUSTEXT_PRIME (auto by default): windows that had to be copied
 * because the page cache held them small get a second chance.  Now that the copy is in
 * place, this process no longer maps those file pages; dropping them
 * (POSIX_FADV_DONTNEED: clean pages no process maps — another process
 * running the same file keeps them, and the window stays a copy) and
 * reading the window back through a huge mapping puts it in the cache as
 * one huge folio, and the file slot replaces the copy with the same
 * atomic swap.  From then on every process gets that window zero-copy.
 * It costs a re-read of each such window from disk, once.  By default
 * (auto) a file with dirty pages in the window (cachestat: someone is
 * writing it), or where the kernel cannot say (no cachestat), or on a
 * network file system is left as it is; with ENORMOUSTEXT_PRIME=1 dirty
 * pages are written out first.  A window whose
 * small pages other processes still map cannot be read back huge (the
 * kernel keeps mapped pages, so no 2 MiB folio can form), and dropping
 * the rest of it would only cost those processes a re-read of pages they
 * may touch next: so it is checked first (et_os_file_mapped_elsewhere:
 * pagemap's "exclusively mapped" bit of a probe mapping), and such a
 * window, or one where the kernel cannot say, is not dropped: it stays a
 * copy now, and the worker tries again later (runtime/pass.c,
 * et_pass_prime_later), when they may have moved on.
 */
/* May a window of the file open at fd be read back (reprime) with no one
 * else's I/O?  PRIME=1 always (it writes dirty pages out first); by
 * default not on a network file system, nor where the window has dirty
 * pages, nor where the kernel cannot say (no cachestat(2) before Linux
 * 6.5, or a filter refuses it). */
enum prime_block { PB_OK, PB_REMOTE, PB_DIRTY, PB_UNKNOWN, PB_MAPPED, PB_MAPPED_UNKNOWN };

static enum prime_block prime_blocked(const struct et_run *run, int fd, const struct et_window *w)
{
	if (run->opt.prime_sync)
		return PB_OK;
	if (et_os_remote_fs(fd))
		return PB_REMOTE;
	long dirty = et_os_dirty_pages(fd, w->file_off, run->si.pmd_size);
	return dirty == 0 ? PB_OK : dirty < 0 ? PB_UNKNOWN : PB_DIRTY;
}

static void reprime(struct et_run *run, long *pool_left)
{
	const uint64_t H = run->si.pmd_size;
	size_t k = 0;
	unsigned n_changed = 0, n_remote = 0, n_dirty = 0, n_unknown = 0, n_mapped = 0, n_mapped_unknown = 0;
	struct file_cache fc = { -1, 0, false, false };
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		w->held_back = false;
		w->repriming = false;
		if (w->candidate && !w->remapped) {
			w->held_back = true;      /* not part of this round */
			w->candidate = false;
			continue;
		}
		if (!w->remapped || w->backend == ET_BACKEND_FILE || w->pad || !w->inode || !w->congruent)
			continue;
		uint32_t had = fc.tried ? fc.object : UINT32_MAX;
		int fd = window_file(run, w, &fc);
		if (fd < 0) {
			w->reason = ET_R_NONE;    /* it is huge (a copy): not a reason */
			n_changed++;
			continue;
		}
		enum prime_block pb = prime_blocked(run, fd, w);
		if (pb == PB_OK) {
			/* checked, not assumed: no page of it mapped elsewhere */
			int m = et_os_file_mapped_elsewhere(fd, w->file_off, (size_t)H);
			pb = m == 0 ? PB_OK : m > 0 ? PB_MAPPED : PB_MAPPED_UNKNOWN;
		}
		if (pb != PB_OK) {
			/* by default never another's I/O: no re-read over a
			 * network, no write-out of a file someone is writing (the
			 * drop below starts one for every dirty page of the range),
			 * and where dirtiness is unknown the window may be dirty */
			n_remote += pb == PB_REMOTE;
			n_dirty += pb == PB_DIRTY;
			n_unknown += pb == PB_UNKNOWN;
			n_mapped += pb == PB_MAPPED;
			n_mapped_unknown += pb == PB_MAPPED_UNKNOWN;
			continue;
		}
		/* ENORMOUSTEXT_PRIME=1: dirty pages cannot be dropped: write
		 * them out first, once per file; the contents do not change */
		if (run->opt.prime_sync && had != w->object)
			fdatasync(fd);
		posix_fadvise(fd, (off_t)w->file_off, (off_t)H, POSIX_FADV_DONTNEED);
		w->repriming = true;
		w->prev_backend = w->backend;
		w->remapped = false;
		w->candidate = true;     /* (a window moved by an earlier pass is not one) */
		k++;
	}
	if (fc.fd >= 0)
		close(fc.fd);
	if (n_changed)
		et_log(3, "prime: %u copied window(s) stay copies: %s", n_changed, et_reason_text(ET_R_FILE_CHANGED));
	if (n_remote)
		et_log(3, "prime: %u copied window(s) stay copies: on a network file system", n_remote);
	if (n_dirty)
		et_log(3, "prime: %u copied window(s) stay copies: dirty pages in the page cache (cachestat)", n_dirty);
	if (n_unknown)
		et_log(3, "prime: %u copied window(s) stay copies: the kernel cannot say whether their pages are dirty (cachestat)",
		       n_unknown);
	if (n_mapped)
		et_log(3, "prime: %u copied window(s) stay copies: another process maps some of their pages (pagemap)",
		       n_mapped);
	if (n_mapped_unknown)
		et_log(3, "prime: %u copied window(s) stay copies: the kernel cannot say whether another process maps "
		          "their pages (MADV_POPULATE_READ, pagemap)", n_mapped_unknown);
	if (k) {
		et_log(3, "prime: %zu copied window(s) read back huge from their files", k);
		remap_round(run, ET_BACKEND_FILE, k, pool_left);
	}
	unsigned got = 0, why[ET_R__COUNT] = { 0 };
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (w->repriming && w->remapped)
			got++;
		else if (w->repriming)
			why[w->reason]++;
	}
	if (k && et_log_enabled(3))
		for (int r = 0; r < ET_R__COUNT; r++)
			if (why[r])
				et_log(3, "prime: %u of %zu stay copies: %s", why[r], k, et_reason_text((enum et_reason)r));
	if (k)
		et_log(3, "prime: %u of %zu now zero-copy", got, k);
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (w->held_back) {
			w->candidate = true;
			w->held_back = false;
		}
		if (w->repriming && !w->remapped) {
			/* the copy stays: still swapped in, still huge */
			w->remapped = true;
			w->backend = w->prev_backend;
			w->reason = ET_R_NONE;
			w->err = 0;
		}
		w->repriming = false;
	}
}

/*
 * The memory cgroup's budget (core/memcg.c): a copy is
 * anonymous memory charged to the process's cgroup for its whole life, and
 * with no swap it cannot be reclaimed, unlike the page-cache text it
 * replaces.  The budget is read once per pass (the first round that
 * copies); each round may stage only what is left of it, and what a round
 * swapped in is taken off before the next:
 *   - a staged copy costs H from its first write until it is released or
 *     swapped; all of a round's slots are staged before any is swapped, so
 *     the round's whole cost is counted up front;
 *   - MADV_COLLAPSE builds its huge page while the small pages it gathers
 *     are still there: one more H, for one window at a time;
 *   - after the swap the file pages of the window stay in the page cache,
 *     still charged (nothing is credited back for them);
 *   - the file backend copies nothing (it is tried first by `auto`), and
 *     hugetlb pages are charged to the hugetlb controller, not this one,
 *     unless cgroup2 is mounted with memory_hugetlb_accounting.
 * When the budget is short, the windows copied are the hottest
 * (ENORMOUSTEXT_PROFILE), else the first in the planner's order; the
 * others stay small with ET_R_MEMCG (a later backend that copies nothing
 * charged may still take them).
 */
struct budget {
	bool read;
	struct et_memcg mc;
	uint64_t left;
};

static bool charged(enum et_backend b, const struct budget *bg)
{
	return b == ET_BACKEND_THP || b == ET_BACKEND_COLLAPSE ||
	       (b == ET_BACKEND_HUGETLB && bg->mc.hugetlb_charged);
}

/* How many of the k pending windows backend b may copy; the others are
 * held back for this round (held_back set, candidate cleared). */
static size_t budget_round(struct et_run *run, enum et_backend b, size_t k, struct budget *bg)
{
	const uint64_t H = run->si.pmd_size;
	if (b == ET_BACKEND_FILE || b == ET_BACKEND_NONE)
		return k;
	if (!bg->read) {
		et_memcg_read(&bg->mc, "/");
		bg->read = true;
		bg->left = bg->mc.budget;
		if (bg->mc.budget == ET_MEMCG_UNLIMITED)
			et_log(3, "memcg: no memory limit (%u cgroup level(s) read)", bg->mc.levels);
		else if (bg->mc.garbled)
			et_log(3, "memcg: v%d %s: its limit or usage cannot be read as a number: nothing copied",
			       bg->mc.version, bg->mc.path);
		else
			et_log(3, "memcg: v%d %s: limit %llu, usage %llu, margin %llu: %llu MiB may be copied",
			       bg->mc.version, bg->mc.path, (unsigned long long)bg->mc.limit,
			       (unsigned long long)bg->mc.usage, (unsigned long long)bg->mc.margin,
			       (unsigned long long)(bg->mc.budget >> 20));
	}
	if (!charged(b, bg) || bg->left == ET_MEMCG_UNLIMITED)
		return k;
	uint64_t extra = b == ET_BACKEND_COLLAPSE ? H : 0;
	uint64_t fits = bg->left > extra ? (bg->left - extra) / H : 0;
	if (fits >= k)
		return k;
	for (size_t j = 0; j < run->nwins; j++)
		run->wins[j].held_back = pending(&run->wins[j], b);
	size_t refused = et_memcg_keep_best(run->wins, run->nwins, (size_t)fits);
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!w->held_back)
			continue;
		w->candidate = false;
		w->reason = ET_R_MEMCG;
		w->err = 0;
	}
	et_log(3, "memcg: %s: %zu of %zu window(s) left small: %llu MiB may still be copied",
	       et_backend_name(b), refused, k, (unsigned long long)(bg->left >> 20));
	return k - refused;
}

/* After the round: the held-back windows wait for the next backend, and
 * what was swapped in is taken off the budget. */
static void budget_after(struct et_run *run, enum et_backend b, struct budget *bg)
{
	const uint64_t H = run->si.pmd_size;
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (w->held_back) {
			w->candidate = true;
			w->held_back = false;
		}
		/* each backend runs one round: its windows are this round's */
		if (bg->read && charged(b, bg) && bg->left != ET_MEMCG_UNLIMITED && w->remapped && w->backend == b)
			bg->left = bg->left > H ? bg->left - H : 0;
	}
}

/* Are copied windows primed (reprime) after the rounds? */
static bool primes(const struct et_run *run)
{
	/* auto primes what ENORMOUSTEXT_BACKEND=auto had to copy; a copying
	 * backend named on its own keeps its copies (PRIME=1 primes them) */
	return run->opt.prime && (run->opt.prime_sync || run->opt.backend == ET_BACKEND_AUTO);
}

/*
 * Copies only where they pay (ENORMOUSTEXT_COPY_MIN, a deferred pass with
 * no profile): a copy costs the process 2 MiB of memory of its own and
 * 0.4 to 0.8 ms of CPU (more where memory must be compacted), once; what
 * it saves is the translations of the code that runs in the window.  A
 * window of which little has run since start-up — fewer of its pages in
 * the process's page tables than copy_min — is left as it is (ET_R_LITTLE_RUN),
 * and looked at again when the worker tries priming later.  Zero-copy
 * windows cost nothing of that kind and are never held back, nor are the
 * congruent windows of files that will be primed (clean, local: the same
 * rule as reprime's): their copies are the way to zero-copy, for this
 * process and the next ones.  In the
 * constructor nothing has run yet: every window is copied there (and a
 * profile or ENORMOUSTEXT_HOT=auto says which are hot instead), and
 * neither in a hurried pass (prctl(PR_SET_THP_DISABLE): the last chance).
 * Returns how many of the pending windows were held back.
 */
static size_t copy_gate(struct et_run *run, enum et_backend b)
{
	if (!run->deferred || !run->opt.copy_min || run->again)
		return 0;
	long pg = sysconf(_SC_PAGESIZE);
	if (pg <= 0)
		return 0;
	int fd = et_os_pagemap_open();
	if (fd < 0)
		return 0;
	struct file_cache fc = { -1, 0, false, false };
	size_t held = 0;
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!pending(w, b) || w->heat_known)
			continue;
		/* a congruent window of a file is copied all the same where it
		 * will be primed (reprime): the copy lasts until the window is
		 * read back huge, and from then on every process maps it
		 * zero-copy — a window left small now would stay small in the
		 * page cache, for every process, for as long as one maps it */
		if (primes(run) && w->congruent && w->inode && !w->pad) {
			enum et_reason keep = w->reason;
			int keep_err = w->err;
			int ffd = window_file(run, w, &fc);
			w->reason = keep;
			w->err = keep_err;
			if (ffd >= 0 && prime_blocked(run, ffd, w) == PB_OK)
				continue;
		}
		const uint64_t lo = w->pad ? w->copy_lo : w->addr, hi = w->pad ? w->copy_hi : w->addr + run->si.pmd_size;
		uint64_t present = et_os_pages_present_in(fd, lo, hi - lo) * (uint64_t)pg;
		if (present < run->opt.copy_min) {
			w->candidate = false;
			w->reason = ET_R_LITTLE_RUN;
			w->err = 0;
			held++;
		}
	}
	if (fc.fd >= 0)
		close(fc.fd);
	close(fd);
	return held;
}

void et_remap_all(struct et_run *run, const enum et_backend *chain, int nchain)
{
	long pool_left = run->si.hugetlb_free;
	struct budget bg = { .read = false };
	for (int c = 0; c < nchain; c++) {
		size_t k = 0, left = 0;
		for (size_t j = 0; j < run->nwins; j++) {
			struct et_window *w = &run->wins[j];
			if (!w->candidate || w->remapped)
				continue;
			left++;
			if (suits(w, chain[c]))
				k++;
			else if (chain[c] == ET_BACKEND_FILE && !w->pad)
				w->reason = w->inode == 0 ? ET_R_MAPPING : ET_R_NOT_CONGRUENT;
		}
		if (left == 0)
			break;
		if (k == 0)
			continue;
		if (chain[c] == ET_BACKEND_HUGETLB && !hugetlb_mremap_safe()) {
			et_log(3, "round %d: hugetlb skipped: this kernel cannot move hugetlb mappings safely", c + 1);
			for (size_t j = 0; j < run->nwins; j++)
				if (run->wins[j].candidate && !run->wins[j].remapped &&
				    run->wins[j].reason == ET_R_NONE)
					run->wins[j].reason = ET_R_NO_BACKEND;
			continue;
		}
		if (chain[c] != ET_BACKEND_FILE)
			k -= copy_gate(run, chain[c]);
		if (k == 0)
			continue;
		k = budget_round(run, chain[c], k, &bg);
		if (k > 0) {
			et_log(3, "round %d: %zu window(s) with %s", c + 1, k, et_backend_name(chain[c]));
			remap_round(run, chain[c], k, &pool_left);
		}
		budget_after(run, chain[c], &bg);
	}
	if (primes(run))
		reprime(run, &pool_left);
}
