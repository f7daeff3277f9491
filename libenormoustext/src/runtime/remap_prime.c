/*
 * runtime/remap_prime.c — priming, after the rounds of the remap stage.
 *
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
 *
 * Owns: the choice of the copied windows read back (w->repriming), the
 * drop of their clean small pages from the page cache (POSIX_FADV_DONTNEED,
 * fdatasync first with PRIME=1), the round that reads them back huge, and
 * the copies kept where it did not.
 * May call: core (log, the reasons' text), os (the page cache: cachestat,
 * network file systems, pages mapped elsewhere), runtime/remap_file (the
 * window's file), runtime/remap_round (the file backend's round).
 * Never: drops a page another process maps, or a dirty page by default;
 * re-reads over a network by default; leaves a window worse than its
 * copy (the copy stays, still swapped in, where the read-back is not
 * huge); allocates.
 */
#include "runtime/remap_prime.h"

#include "core/log.h"
#include "os/os.h"
#include "os/pagecache.h"
#include "runtime/remap_file.h"
#include "runtime/remap_round.h"

#include <fcntl.h>
#include <unistd.h>

/* May a window of the file open at fd be read back (et_remap_prime) with
 * no one else's I/O?  PRIME=1 always (it writes dirty pages out first);
 * by default not on a network file system, nor where the window has dirty
 * pages, nor where the kernel cannot say (no cachestat(2) before Linux
 * 6.5, or a filter refuses it). */
enum et_prime_block et_remap_prime_blocked(const struct et_run *run, int fd, const struct et_window *w)
{
	if (run->opt.prime_sync)
		return ET_PB_OK;
	if (et_os_remote_fs(fd))
		return ET_PB_REMOTE;
	long dirty = et_os_dirty_pages(fd, w->file_off, run->si.pmd_size);
	return dirty == 0 ? ET_PB_OK : dirty < 0 ? ET_PB_UNKNOWN : ET_PB_DIRTY;
}

/* A window read back small although no other process maps it: on a
 * loaded host the free huge page made for it (et_os_make_room) can go to
 * another allocation before readahead takes it.  Dropped and read back
 * again, ET_PRIME_AGAIN times at most, as the command's prime does
 * (tools/enormoustext/pagecache.c), where another window of its file came
 * back huge (so the file system gives 2 MiB folios); a window still small
 * stays a copy, and the worker's later tries look again. */
#define ET_PRIME_AGAIN 2

/* Did another window of w's file come back huge in this priming?  Where
 * none did, the file system may give no 2 MiB folios at all: no window of
 * it is read again (no disk read for nothing). */
static bool file_gave_huge(const struct et_run *run, const struct et_window *w)
{
	for (size_t j = 0; j < run->nwins; j++) {
		const struct et_window *o = &run->wins[j];
		if (o->repriming && o->remapped && o->object == w->object)
			return true;
	}
	return false;
}

static void read_again(struct et_run *run, long *pool_left)
{
	const uint64_t H = run->si.pmd_size;
	for (int again = 0; again < ET_PRIME_AGAIN; again++) {
		struct et_file_cache fc = { -1, 0, false, false };
		size_t k = 0;
		for (size_t j = 0; j < run->nwins; j++) {
			struct et_window *w = &run->wins[j];
			if (!w->repriming || w->remapped)
				continue;
			/* only these are in the round (et_remap_pending) */
			w->candidate = false;
			if (w->reason != ET_R_FILE_SMALL || !file_gave_huge(run, w))
				continue;
			int fd = et_remap_file_open(run, w, &fc);
			if (fd < 0 || et_os_file_mapped_elsewhere(fd, w->file_off, (size_t)H) != 0)
				continue;
			posix_fadvise(fd, (off_t)w->file_off, (off_t)H, POSIX_FADV_DONTNEED);
			w->candidate = true;
			w->reason = ET_R_NONE;
			w->err = 0;
			k++;
		}
		if (fc.fd >= 0)
			close(fc.fd);
		if (k) {
			et_log(3, "prime: %zu window(s) read back small, no page of them mapped elsewhere: read back again", k);
			et_remap_round(run, ET_BACKEND_FILE, k, pool_left);
		}
		for (size_t j = 0; j < run->nwins; j++)
			if (run->wins[j].repriming)
				run->wins[j].candidate = true;
		if (!k)
			break;
	}
}

void et_remap_prime(struct et_run *run, long *pool_left)
{
	const uint64_t H = run->si.pmd_size;
	size_t k = 0;
	unsigned n_changed = 0, n_remote = 0, n_dirty = 0, n_unknown = 0, n_mapped = 0, n_mapped_unknown = 0;
	struct et_file_cache fc = { -1, 0, false, false };
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
		int fd = et_remap_file_open(run, w, &fc);
		if (fd < 0) {
			w->reason = ET_R_NONE;    /* it is huge (a copy): not a reason */
			n_changed++;
			continue;
		}
		enum et_prime_block pb = et_remap_prime_blocked(run, fd, w);
		if (pb == ET_PB_OK) {
			/* checked, not assumed: no page of it mapped elsewhere */
			int m = et_os_file_mapped_elsewhere(fd, w->file_off, (size_t)H);
			pb = m == 0 ? ET_PB_OK : m > 0 ? ET_PB_MAPPED : ET_PB_MAPPED_UNKNOWN;
		}
		if (pb != ET_PB_OK) {
			/* by default never another's I/O: no re-read over a
			 * network, no write-out of a file someone is writing (the
			 * drop below starts one for every dirty page of the range),
			 * and where dirtiness is unknown the window may be dirty */
			n_remote += pb == ET_PB_REMOTE;
			n_dirty += pb == ET_PB_DIRTY;
			n_unknown += pb == ET_PB_UNKNOWN;
			n_mapped += pb == ET_PB_MAPPED;
			n_mapped_unknown += pb == ET_PB_MAPPED_UNKNOWN;
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
		et_remap_round(run, ET_BACKEND_FILE, k, pool_left);
		read_again(run, pool_left);
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
