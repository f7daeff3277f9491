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
 * limits leave room for (core/memcg.c; see budget_round below), the hottest
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
 * The stage's parts, one file each, in the order they call each other:
 *   remap.c        the chain of backends, one round each: which windows
 *                  (the copy gate, the memcg budget), then priming;
 *   remap_prime.c  ENORMOUSTEXT_PRIME: copies read back huge from their
 *                  files;
 *   remap_round.c  one round: slots, steps 1 to 5, what is released;
 *   remap_stage.c  steps 1 to 3 for one window;
 *   remap_swap.c   step 5, THE SWAP;
 *   remap_file.c   a window's file, and is it still the text planned?
 *
 * Owns: the chain of rounds of a pass, the copy gate (COPY_MIN), the
 * memory cgroup budget of a pass, the hugetlb backend's kernel check.
 * May call: core (memcg, log, options, util), os (the page map),
 * runtime/remap_round, runtime/remap_prime, runtime/remap_file.
 * Never: changes a mapping itself (its parts do, by the rules in their
 * banners: never writable and executable at once, never a hole in live
 * text); copies more than the memory cgroup leaves room for; allocates.
 */
#include "runtime/remap.h"

#include "core/log.h"
#include "core/memcg.h"
#include "core/util.h"
#include "os/os.h"
#include "runtime/remap_file.h"
#include "runtime/remap_prime.h"
#include "runtime/remap_round.h"

#include <stdio.h>
#include <unistd.h>
#include <sys/utsname.h>

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
		run->wins[j].held_back = et_remap_pending(&run->wins[j], b);
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

/* Are copied windows primed (et_remap_prime) after the rounds? */
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
 * rule as priming's): their copies are the way to zero-copy, for this
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
	struct et_file_cache fc = { -1, 0, false, false };
	size_t held = 0;
	for (size_t j = 0; j < run->nwins; j++) {
		struct et_window *w = &run->wins[j];
		if (!et_remap_pending(w, b) || w->heat_known)
			continue;
		/* a congruent window of a file is copied all the same where it
		 * will be primed (remap_prime.c): the copy lasts until the window is
		 * read back huge, and from then on every process maps it
		 * zero-copy — a window left small now would stay small in the
		 * page cache, for every process, for as long as one maps it */
		if (primes(run) && w->congruent && w->inode && !w->pad) {
			enum et_reason keep = w->reason;
			int keep_err = w->err;
			int ffd = et_remap_file_open(run, w, &fc);
			w->reason = keep;
			w->err = keep_err;
			if (ffd >= 0 && et_remap_prime_blocked(run, ffd, w) == ET_PB_OK)
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
			if (et_remap_suits(w, chain[c]))
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
			et_remap_round(run, chain[c], k, &pool_left);
		}
		budget_after(run, chain[c], &bg);
	}
	if (primes(run))
		et_remap_prime(run, &pool_left);
}
