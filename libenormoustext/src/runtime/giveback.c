/*
 * runtime/giveback.c — copies that give way to the program's own memory.
 *
 * A copied window is anonymous memory: charged to the process's memory
 * cgroup and, without swap, never reclaimed, where the page-cache text it
 * replaced could have been.  The remapper copies only what the cgroup's
 * limit leaves at the time (core/memcg.c), but a program may grow later: a
 * run that touches 40 MiB at start and 60 MiB more after a while fits a
 * 104 MiB limit plain, and with 24 MiB of copies made in between it is
 * OOM-killed.  So, while the process holds copies in a cgroup with a limit,
 * the deferred worker (runtime/defer.c, through runtime/init.c's due and
 * on_due) looks at what the limiting level cannot reclaim (anonymous and
 * shared memory: et_memcg_unreclaimable): every ET_GIVEBACK_TICK_NS near
 * the limit, less often the farther it is (up to 1 s); when that comes
 * within ET_GIVEBACK_HEADROOM of the limit, every copy is given back: its
 * range is mapped from its file again (the same bytes, the same
 * protections, one mmap MAP_FIXED: a thread running there sees the same
 * code before and after, as with the swap), the zero fill of a padded
 * window is dropped (MADV_DONTNEED), and the program has the memory.
 *
 * The headroom is what a program can touch while the worker has not yet
 * looked: ET_GIVEBACK_TICK_NS at a few GB/s, twice over.
 *
 * Only where a worker lives after the work (ENORMOUSTEXT_DEFER, the
 * default): with ENORMOUSTEXT_DEFER=0 there is no thread to look, and the
 * copy-time budget is all there is.  A worker that must stand down (a
 * fork at the task limit, unshare) stops looking.
 *
 * Owns: the watch (armed, due, its ticks) and giving copies back.
 * May call: core (memcg, smaps, log, util), os, runtime/loader (the
 * loader's lock around each object's ranges), runtime/defer.h,
 * runtime/sandbox (no call where a seccomp filter may kill).
 * Never: maps anything but the file's own bytes at their own addresses;
 * makes a mapping writable and executable; acts off the worker; touches
 * JIT code or text the library did not copy.
 */
#include "runtime/giveback.h"

#include "core/log.h"
#include "core/memcg.h"
#include "core/smaps.h"
#include "core/util.h"
#include "os/os.h"
#include "runtime/defer.h"
#include "runtime/loader.h"
#include "runtime/sandbox.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ET_GIVEBACK_TICK_NS (10ull * 1000000ull)
#define ET_GIVEBACK_HEADROOM (48ull << 20)
/* the limit may change (a container's resized): read again this often */
#define ET_GIVEBACK_REREAD_TICKS 100u

static bool g_watch;            /* on the worker only */
static uint64_t g_next;
static unsigned g_ticks;
static struct et_memcg g_mc;

/* Anonymous executable mappings that hold an object's text (the one rule:
 * core/smaps.c et_smaps_attribute): their bytes. */
static uint64_t copied_bytes(struct et_smaps *sm)
{
	uint64_t n = 0;
	for (size_t i = 0; i < sm->count; i++)
		if (et_smaps_copied_from(sm, i))
			n += sm->vmas[i].end - sm->vmas[i].start;
	return n;
}

/* This process's smaps, each copy attributed to its file: false (and
 * nothing to free) when it cannot be read. */
static bool read_attributed(struct et_smaps *sm)
{
	memset(sm, 0, sizeof *sm);
	if (et_smaps_read_self(sm) != 0) {
		et_smaps_free(sm);
		return false;
	}
	et_smaps_attribute(sm, "/proc/self");
	return true;
}

void et_giveback_arm(void)
{
	if (!et_defer_is_deferred())
		return;
	g_watch = false;
	et_memcg_read(&g_mc, "");
	uint64_t unrec;
	if (!g_mc.version || !g_mc.limit || !et_memcg_unreclaimable(&g_mc, &unrec))
		return;
	struct et_smaps sm;
	if (!read_attributed(&sm))
		return;
	uint64_t copied = copied_bytes(&sm);
	et_smaps_free(&sm);
	if (!copied)
		return;
	g_watch = true;
	g_ticks = 0;
	g_next = et_now_ns() + ET_GIVEBACK_TICK_NS;
	et_log(3, "copies of %llu bytes in memory cgroup %s (limit %llu, %llu cannot be reclaimed): watched",
	       (unsigned long long)copied, g_mc.path, (unsigned long long)g_mc.limit, (unsigned long long)unrec);
}

uint64_t et_giveback_due(void)
{
	return g_watch && et_defer_is_deferred() ? g_next : 0;
}

/* ---- giving back: one object at a time, under the loader's lock ------- */

struct gb {
	struct et_smaps *sm;
	uint64_t bytes, dropped;
	unsigned ranges, failed;
	int err;
};

static uint64_t page_down(uint64_t x)
{
	return x & ~(uint64_t)4095;
}

static uint64_t page_up(uint64_t x)
{
	return (x + 4095) & ~(uint64_t)4095;
}

/* The part [lo, hi) of copy vma v that lies in PT_LOAD ph of the object
 * loaded at bias: its file's bytes mapped there again. */
static void give_back_part(struct gb *g, const struct et_vma *v, const ElfW(Phdr) *ph, uint64_t bias, int fd)
{
	uint64_t seg_lo = page_down(bias + ph->p_vaddr);
	uint64_t file_hi = page_up(bias + ph->p_vaddr + ph->p_filesz);
	uint64_t lo = v->start > seg_lo ? v->start : seg_lo;
	uint64_t hi = v->end < file_hi ? v->end : file_hi;
	if (lo >= hi)
		return;
	off_t off = (off_t)(page_down(ph->p_offset) + (lo - seg_lo));
	int prot = (int)(v->prot & (PROT_READ | PROT_EXEC));
	void *r = et_os_mmap((void *)(uintptr_t)lo, (size_t)(hi - lo), prot, MAP_PRIVATE | MAP_FIXED, fd, off);
	if (r == MAP_FAILED) {
		g->failed++;
		if (!g->err)
			g->err = errno;
		return;
	}
	g->bytes += hi - lo;
	g->ranges++;
}

/* madvise(MADV_DONTNEED) on [lo, hi): a padded window's zero fill */
static void drop(struct gb *g, uint64_t lo, uint64_t hi)
{
	if (lo < hi && et_os_sys6(SYS_madvise, (long)lo, (long)(hi - lo), MADV_DONTNEED, 0, 0, 0) == 0)
		g->dropped += hi - lo;
}

static int object_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct gb *g = arg;
	struct et_smaps *sm = g->sm;
	for (size_t i = 0; i < sm->count; i++) {
		const struct et_vma *owner = et_smaps_copied_from(sm, i);
		if (!owner)
			continue;
		const struct et_vma *v = &sm->vmas[i];
		/* is it this object's?  one of its executable PT_LOADs overlaps;
		 * the one whose bytes are all in the file (a text segment
		 * with a zero tail is left as it is) */
		const ElfW(Phdr) *text = NULL;
		bool other = false;
		for (int k = 0; k < info->dlpi_phnum; k++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
			uint64_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
			if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || v->start >= page_up(b) ||
			    v->end <= page_down(a))
				continue;
			if (text || ph->p_filesz != ph->p_memsz)
				other = true;
			text = ph;
		}
		if (!text)
			continue;
		if (other) {
			g->failed++;
			if (!g->err)
				g->err = ENOTSUP;
			continue;
		}
		char path[4096];
		int fd = et_smaps_mapped_file(sm, owner, "/proc/self", path, sizeof path);
		if (fd < 0) {
			g->failed++;
			if (!g->err)
				g->err = -fd;
			continue;
		}
		unsigned failed = g->failed;
		give_back_part(g, v, text, info->dlpi_addr, fd);
		close(fd);
		if (g->failed != failed)
			continue;
		/* what is left of the copy around the text is the zero fill of
		 * a padded window (free address space before the library,
		 * never code): its memory back, the range as the move left it */
		uint64_t seg_lo = page_down(info->dlpi_addr + text->p_vaddr);
		uint64_t file_hi = page_up(info->dlpi_addr + text->p_vaddr + text->p_filesz);
		drop(g, v->start, v->end < seg_lo ? v->end : seg_lo);
		drop(g, v->start > file_hi ? v->start : file_hi, v->end);
	}
	return 0;
}

static void give_back(uint64_t unrec)
{
	/* a filter that went in by an inline system call, unseen by the
	 * wrappers: no call of ours where it may kill (runtime/sandbox.c) */
	const char *why = NULL;
	if (et_sandbox_blocks(&why)) {
		et_log(1, "memory cgroup %s near its limit: copies not given back (%s)", g_mc.path, why);
		return;
	}
	struct et_smaps sm;
	if (!read_attributed(&sm))
		return;
	struct gb g = { .sm = &sm };
	/* inside dl_iterate_phdr: no object vanishes meanwhile */
	et_loader_iterate(object_cb, &g);
	et_smaps_free(&sm);
	char eb[24];
	et_log(1, "memory cgroup %s near its limit (%llu of %llu MiB cannot be reclaimed): %llu MiB of copied text "
	          "given back, mapped from its files again%s%s",
	       g_mc.path, (unsigned long long)(unrec >> 20), (unsigned long long)(g_mc.limit >> 20),
	       (unsigned long long)((g.bytes + g.dropped + (1u << 19)) >> 20), g.failed ? "; some not: " : "",
	       g.failed ? et_errno_text(g.err, eb) : "");
}

void et_giveback_tick(void)
{
	if (!g_watch || !et_defer_is_deferred())
		return;
	uint64_t now = et_now_ns();
	if (now < g_next)
		return;
	g_next = now + ET_GIVEBACK_TICK_NS;
	if (++g_ticks % ET_GIVEBACK_REREAD_TICKS == 0) {
		et_memcg_read(&g_mc, "");
		if (!g_mc.version || !g_mc.limit) {
			g_watch = false;
			return;
		}
	}
	uint64_t unrec;
	if (!et_memcg_unreclaimable(&g_mc, &unrec))
		return;
	if (unrec + ET_GIVEBACK_HEADROOM < g_mc.limit) {
		/* far from the limit, look less often: the time a program
		 * touching 2 GiB/s takes to cover the distance, 10 ms to 1 s
		 * (a process that sits well inside its limit costs a look a
		 * second, not a hundred) */
		uint64_t d = g_mc.limit - unrec - ET_GIVEBACK_HEADROOM;
		uint64_t wait = d / 2u;   /* ns at 2 GiB/s: bytes / 2.147 per ns, near enough */
		g_next = now + (wait < ET_GIVEBACK_TICK_NS ? ET_GIVEBACK_TICK_NS : wait > 1000000000ull ? 1000000000ull : wait);
		return;
	}
	g_watch = false;
	give_back(unrec);
}
