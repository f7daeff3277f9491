/*
 * runtime/jit.c — ENORMOUSTEXT_MODE=2 and 3: the code caches of JIT
 * compilers (anonymous executable memory) on huge pages, from inside the
 * process.
 *
 * What JITs do, and what is done about it:
 *   - reserve a large range PROT_NONE, then make parts of it executable
 *     (HotSpot: mmap(MAP_FIXED, rwx) as its code cache grows; V8: mprotect):
 *     a reservation of at least one window is placed 2 MiB-aligned (asked
 *     for one window more, the ends given back: same size, same
 *     protections, same flags; if the larger one cannot be had, the call
 *     the program made, as it made it).  Since Linux 6.7 the kernel aligns
 *     anonymous mappings whose size is a multiple of 2 MiB itself: those
 *     are asked for once, as they are, and only moved when they came back
 *     unaligned;
 *   - map memory executable (mmap with PROT_EXEC): a new mapping of at
 *     least one window gets MADV_HUGEPAGE, all of it (under THP `madvise`
 *     a fault in a whole window of it then takes a 2 MiB page, and
 *     khugepaged may collapse it later);
 *   - make memory executable (mprotect adding PROT_EXEC): no advice at all.
 *     A flag set on part of a mapping splits it, and keeps the pieces from
 *     merging back when the program changes the protections again: a JIT
 *     that toggles pages between RX and RW (W^X) would end with thousands
 *     of mappings where it had tens, and run out of them
 *     (vm.max_map_count).  MADV_COLLAPSE changes no flag;
 *   - MADV_COLLAPSE, once per window and at most a few tries each, where
 *     there is something to collapse: the windows inside a range made
 *     executable by mprotect (the code was written first), and the window
 *     a growing code cache has just completed (the range ends it, the part
 *     before was written earlier).  MADV_COLLAPSE works under THP `never`
 *     too; the kernel refuses (EINVAL) a window that is not one mapping or
 *     was never written, so a window of data next to the code is never
 *     collapsed;
 *   - the W^X pattern with a memfd (one read-write view, one read+execute
 *     view): the executable view of a memfd is placed 2 MiB-aligned (its
 *     offset is, so it is congruent) and collapsed (shmem: the huge page
 *     is the file's, both views see it);
 *   - page-by-page W^X toggling: each mprotect to executable costs one
 *     madvise more; a collapsed window a later mprotect splits stays split
 *     (the kernel's business: the table below never asks for it again).
 *
 * Never: changes a protection, a size, a flag or errno the program sees;
 * makes anything writable and executable; collapses anything the program
 * did not make executable; leaves the program more mappings than it would
 * have had (advice only ever covers a whole mapping the program has just
 * made); logs above verbosity 1 but per window (2) and its failures (3).
 *
 * Owns: et_jit_pmd (armed or not), the table of windows asked for, the
 * figures.
 * May call: os (mmap, munmap, madvise), core (sysinfo, log, smaps),
 * runtime/sandbox (it stops when a seccomp filter goes in).
 */
#include "runtime/jit.h"

#include "core/log.h"
#include "core/smaps.h"
#include "core/sysinfo.h"
#include "os/os.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef F_GET_SEALS
#define F_GET_SEALS 1034
#endif

size_t et_jit_pmd;
static size_t g_page = 4096;
static bool g_never;          /* THP never: MADV_HUGEPAGE would do nothing */

static struct et_jit_stats g_st;

static void count(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------- the windows */

/* Each window asked to collapse: its base (2 MiB-aligned) | tries | DONE. */
#define WIN_SLOTS 4096u
#define WIN_TRIES 0x0fu
#define WIN_DONE 0x10u
#define WIN_MAX_TRIES 4u
static uintptr_t g_win[WIN_SLOTS] ET_LARGE_BSS;

static uintptr_t *win_slot(uintptr_t w)
{
	uint64_t h = (uint64_t)(w / et_jit_pmd) * 0x9E3779B97F4A7C15ull;
	size_t i = (size_t)(h >> 52) & (WIN_SLOTS - 1);
	for (unsigned n = 0; n < 64; n++, i = (i + 1) & (WIN_SLOTS - 1)) {
		uintptr_t v = __atomic_load_n(&g_win[i], __ATOMIC_ACQUIRE);
		if (v == 0) {
			uintptr_t zero = 0;
			if (__atomic_compare_exchange_n(&g_win[i], &zero, w, false, __ATOMIC_ACQ_REL,
			                                __ATOMIC_ACQUIRE))
				return &g_win[i];
			v = zero;
		}
		if ((v & ~(uintptr_t)0xff) == w)
			return &g_win[i];
	}
	return NULL;   /* the table is full here: that window is left to khugepaged */
}

static void collapse_window(uintptr_t w, const char *how)
{
	uintptr_t *s = win_slot(w);
	if (!s)
		return;
	uintptr_t v = __atomic_load_n(s, __ATOMIC_ACQUIRE);
	do {
		if ((v & WIN_DONE) || (v & WIN_TRIES) >= WIN_MAX_TRIES)
			return;
	} while (!__atomic_compare_exchange_n(s, &v, v + 1, true, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));

	size_t h = et_jit_pmd;
	/* EAGAIN is transient by the man page (a page locked or not yet on
	 * the LRU lists just then), ENOMEM may be (compaction): asked again at
	 * once, a few times, before the window is left to the next try */
	int r, e = 0;
	for (int t = 0; t < 3; t++) {
		r = et_os_advise((void *)w, h, MADV_COLLAPSE);
		e = errno;
		if (r == 0 || (e != EAGAIN && e != ENOMEM))
			break;
		sched_yield();
	}
	if (r == 0) {
		__atomic_or_fetch(s, (uintptr_t)WIN_DONE, __ATOMIC_ACQ_REL);
		count(&g_st.collapsed, 1);
		et_log(2, "jit: %#lx-%#lx (%s): on a %zu MiB page", (unsigned long)w,
		       (unsigned long)(w + h), how, h >> 20);
		return;
	}
	char eb[24];
	if (e == EINVAL)
		count(&g_st.failed_range, 1);
	else if (e == ENOMEM || e == EAGAIN)
		count(&g_st.failed_mem, 1);
	else
		count(&g_st.failed_other, 1);
	et_log(3, "jit: %#lx-%#lx (%s): MADV_COLLAPSE: %s", (unsigned long)w, (unsigned long)(w + h),
	       how, e == EINVAL ? "not one mapping, or nothing written there yet" : et_errno_text(e, eb));
}

/* [a, a + len) has just become executable.  populated: the program wrote
 * it before (mprotect, an existing memfd), so its windows can collapse.
 * whole: the range is a mapping of its own, just made (mmap), which the
 * advice can cover without splitting anything (see the banner). */
static void exec_range(uintptr_t a, size_t len, bool populated, bool whole, const char *how)
{
	size_t h = et_jit_pmd;
	count(&g_st.ranges, 1);
	count(&g_st.exec_bytes, len);
	if (!g_never && whole && len >= h)
		(void)et_os_advise((void *)a, len, MADV_HUGEPAGE);
	uintptr_t end = a + len, first = (a + h - 1) & ~(uintptr_t)(h - 1);
	/* the window this range completes: it ends inside the range, and
	 * begins before it (a code cache grown up to here) */
	if (first > a && first <= end)
		collapse_window(first - h, how);
	if (populated)
		for (uintptr_t w = first; w + h <= end && w + h > w; w += h)
			collapse_window(w, how);
}

/* ----------------------------------------------------------- the calls */

static bool is_memfd(int fd)
{
	/* F_GET_SEALS succeeds on a memfd only (also one without sealing) */
	return fd >= 0 && fcntl(fd, F_GET_SEALS) >= 0;
}

/* A reservation of len bytes, 2 MiB-aligned, made as the program asked
 * (fd, off: a memfd's executable view, mapped over the aligned part). */
static void *aligned(et_mmap_fn next, size_t len, int prot, int flags, int fd, off_t off, bool file)
{
	size_t h = et_jit_pmd;
	size_t lenr = (len + g_page - 1) & ~(g_page - 1);
	if (!file && lenr % h == 0) {
		/* the kernel (6.7 and later) aligns these itself */
		void *p = next(NULL, len, prot, flags, fd, off);
		if (p == MAP_FAILED || ((uintptr_t)p & (h - 1)) == 0)
			return p;
		(void)et_os_unmap(p, lenr);
	}
	size_t total = lenr + h;
	if (total < lenr)
		return next(NULL, len, prot, flags, fd, off);
	void *q = file ? et_os_reserve(NULL, total, false) : next(NULL, total, prot, flags, fd, off);
	if (q == MAP_FAILED)
		return next(NULL, len, prot, flags, fd, off);   /* as the program asked */
	uintptr_t qs = (uintptr_t)q, a = (qs + h - 1) & ~(uintptr_t)(h - 1);
	if (file && next((void *)a, len, prot, flags | MAP_FIXED, fd, off) == MAP_FAILED) {
		(void)et_os_unmap(q, total);
		return next(NULL, len, prot, flags, fd, off);
	}
	if (a > qs)
		(void)et_os_unmap(q, a - qs);
	if (qs + total > a + lenr)
		(void)et_os_unmap((void *)(a + lenr), qs + total - (a + lenr));
	count(&g_st.aligned, 1);
	return (void *)a;
}

void *et_jit_mmap(et_mmap_fn next, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!next)
		next = et_os_mmap;
	size_t h = __atomic_load_n(&et_jit_pmd, __ATOMIC_RELAXED);
	if (!h)
		return next(addr, len, prot, flags, fd, off);
	int saved = errno;
	bool anon = flags & MAP_ANONYMOUS;
	bool free_to_place = !addr && !(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) && len >= h &&
	                     !(flags & (MAP_HUGETLB | MAP_STACK | MAP_GROWSDOWN | MAP_POPULATE | MAP_LOCKED));
	bool memfd = !anon && (prot & PROT_EXEC) && is_memfd(fd);
	void *p;
	if (free_to_place && anon && (prot == PROT_NONE || (prot & PROT_EXEC)))
		p = aligned(next, len, prot, flags, fd, off, false);
	else if (free_to_place && memfd && ((uint64_t)off & (h - 1)) == 0)
		p = aligned(next, len, prot, flags, fd, off, true);
	else
		p = next(addr, len, prot, flags, fd, off);
	if (p == MAP_FAILED)
		return p;   /* errno: the program's own call's */
	if ((prot & PROT_EXEC) && (anon || memfd) && len)
		exec_range((uintptr_t)p, len, memfd, true, memfd ? "mmap of a memfd" : "mmap");
	errno = saved;
	return p;
}

int et_jit_mprotect(et_mprotect_fn next, void *addr, size_t len, int prot)
{
	int r = next(addr, len, prot);
	if (r != 0 || !len || !__atomic_load_n(&et_jit_pmd, __ATOMIC_RELAXED))
		return r;
	int saved = errno;
	exec_range((uintptr_t)addr, len, true, false, "mprotect");
	errno = saved;
	return r;
}

/* --------------------------------------------------- start and summary */

/* runtime/sandbox.c: a seccomp filter goes in; from now on every call
 * goes straight to libc (a filter may kill for a madvise). */
static void sandbox_entering(const char *what)
{
	(void)what;
	__atomic_store_n(&et_jit_pmd, 0, __ATOMIC_RELEASE);
}

void et_jit_start(const struct et_options *o)
{
	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "");
	et_sysinfo_read_policy(&si, "");
	if (et_os_thp_disabled()) {
		et_log(1, "jit: THP is off for this process (PR_SET_THP_DISABLE): JIT code stays on small pages");
		return;
	}
	if (!et_pmd_size_usable(si.pmd_size)) {
		et_log(1, "jit: huge pages of %llu kB are not for code: JIT code stays on small pages",
		       (unsigned long long)(si.pmd_size >> 10));
		return;
	}
	long pg = sysconf(_SC_PAGESIZE);
	if (pg > 0)
		g_page = (size_t)pg;
	g_never = si.thp == ET_THP_NEVER;
	et_sandbox_on_entering(sandbox_entering);
	if (et_sandbox_known())
		return;
	__atomic_store_n(&et_jit_pmd, (size_t)si.pmd_size, __ATOMIC_RELEASE);
	et_log(2, "jit: ENORMOUSTEXT_MODE=%u: executable anonymous memory on %llu MiB pages (THP %s: %s)",
	       o->mode, (unsigned long long)(si.pmd_size >> 20), et_thp_mode_name(si.thp),
	       g_never ? "MADV_COLLAPSE only" : "MADV_HUGEPAGE and MADV_COLLAPSE");
}

void et_jit_read(struct et_jit_stats *st)
{
	st->ranges = __atomic_load_n(&g_st.ranges, __ATOMIC_RELAXED);
	st->exec_bytes = __atomic_load_n(&g_st.exec_bytes, __ATOMIC_RELAXED);
	st->aligned = __atomic_load_n(&g_st.aligned, __ATOMIC_RELAXED);
	st->collapsed = __atomic_load_n(&g_st.collapsed, __ATOMIC_RELAXED);
	st->failed_range = __atomic_load_n(&g_st.failed_range, __ATOMIC_RELAXED);
	st->failed_mem = __atomic_load_n(&g_st.failed_mem, __ATOMIC_RELAXED);
	st->failed_other = __atomic_load_n(&g_st.failed_other, __ATOMIC_RELAXED);
}

/* Is executable mapping i JIT code: anonymous (or a memfd), and not text
 * this library copied (inside an executable segment of a mapped file: the
 * one rule of core/smaps.c, as `enormoustext stat` tells them apart)? */
static bool jit_vma(const struct et_smaps *sm, size_t i)
{
	const char *p = et_vma_path(sm, &sm->vmas[i]);
	if (!strncmp(p, "/memfd:", 7))
		return true;
	if (p[0] && strncmp(p, "[anon:", 6))
		return false;
	return !et_smaps_copied_from(sm, i);
}

/* At exit, at verbosity 1: what became of the JIT code, from smaps. */
__attribute__((destructor)) static void jit_summary(void)
{
	if (!__atomic_load_n(&et_jit_pmd, __ATOMIC_RELAXED) || !et_log_enabled(1) || et_sandbox_known())
		return;
	struct et_jit_stats st;
	et_jit_read(&st);
	if (!st.ranges)
		return;
	uint64_t exec = 0, huge = 0;
	struct et_smaps sm;
	bool read = et_smaps_read_self(&sm) == 0;
	if (read) {
		et_smaps_attribute(&sm, "/proc/self");
		for (size_t i = 0; i < sm.count; i++) {
			const struct et_vma *v = &sm.vmas[i];
			if ((v->prot & PROT_EXEC) && jit_vma(&sm, i)) {
				exec += v->end - v->start;
				huge += v->anon_huge + v->shmem_pmd;
			}
		}
		et_smaps_free(&sm);
	}
	uint64_t failed = st.failed_range + st.failed_mem + st.failed_other;
	char why[160] = "";
	if (failed)
		snprintf(why, sizeof why, "; %llu stayed small (%llu not one mapping or not written, %llu no huge page free, %llu other)",
		         (unsigned long long)failed, (unsigned long long)st.failed_range,
		         (unsigned long long)st.failed_mem, (unsigned long long)st.failed_other);
	if (read)
		et_log(1, "jit: %llu kB of JIT code, %llu kB on %zu MiB pages; %llu executable ranges, %llu reservations aligned, %llu windows collapsed%s",
		       (unsigned long long)(exec >> 10), (unsigned long long)(huge >> 10),
		       et_jit_pmd >> 20, (unsigned long long)st.ranges, (unsigned long long)st.aligned,
		       (unsigned long long)st.collapsed, why);
	else
		et_log(1, "jit: %llu executable ranges, %llu reservations aligned, %llu windows collapsed%s (smaps unreadable)",
		       (unsigned long long)st.ranges, (unsigned long long)st.aligned,
		       (unsigned long long)st.collapsed, why);
}
