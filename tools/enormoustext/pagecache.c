/*
 * tools/enormoustext/pagecache.c — a file's text in the page cache as
 * huge folios (see pagecache.h): its state, window by window, and the
 * priming that brings it there, so that the kernel maps it huge by itself.
 *
 * A file-backed text mapping whose address and file offset are congruent
 * modulo the PMD size H is mapped with one PMD entry per window when the
 * page cache holds that window as one H-sized folio.  Whether it does is
 * decided when the pages are read (or written): read back through an
 * H-aligned MADV_HUGEPAGE mapping, readahead allocates H-sized folios;
 * read any other way, they usually come in small and stay small (without
 * CONFIG_READ_ONLY_THP_FOR_FS nothing collapses them later).  So, for each
 * window of the executable segment that can be huge at run time:
 *
 *   1. if the cache already holds it huge: nothing to do;
 *   2. else drop the window's clean, unmapped pages (POSIX_FADV_DONTNEED —
 *      it never touches pages a process has mapped, nor dirty ones, and
 *      never changes the file) and read it back through an H-aligned
 *      MADV_HUGEPAGE mapping with MADV_POPULATE_READ;
 *   3. look at this process's own smaps: FilePmdMapped says it worked;
 *   4. where it came back small with no page held, readahead found no free
 *      huge page (it never waits for compaction): make one
 *      (et_os_make_room: MADV_COLLAPSE waits) and do 2 and 3 again, twice
 *      at most.  Still small with room made: the filesystem gives no huge
 *      folios (no_huge_folios, and the file's next windows are read once);
 *      no room could be made: no_room, a state the daemon tries again.
 *
 * Before 2: where the kernel collapses file text in place (MADV_COLLAPSE
 * on a read-only executable file mapping: CONFIG_READ_ONLY_THP_FOR_FS, or
 * a kernel that collapses large page-cache folios of any file), that is
 * used instead: nothing is dropped, and a window whose small pages
 * processes map is made huge too.  The first window tried is the probe:
 * EINVAL (the kernel does not do it for file text) is remembered, and
 * every window after is dropped and read back (et_tool_collapse_file_text
 * says which).
 *
 * --check does step 1 only and changes nothing: a window whose pages are
 * not all cached is not read (mincore says so), so it is reported as
 * "not cached" rather than brought in.
 *
 * Owns: the windows of a file's text, their state in the page cache, the
 * priming of each, and the processes that map the file
 * (et_tool_prime_file, et_tool_prime_state).
 * May call: core (smaps: FilePmdMapped; mm_flags), os (et_os_make_room), elffile.c (the
 * executable segments), msg.c.
 * Never: changes a file, or drops a page a process has mapped or that is
 * dirty (POSIX_FADV_DONTNEED never does); prints a result (prime.c and
 * explain.c do).
 */
#include "pagecache.h"
#include "elffile.h"

#include "core/mm_flags.h"
#include "core/util.h"
#include "os/os.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <linux/magic.h>

struct xseg {
	uint64_t off, len, vaddr;
};
#define MAX_XSEGS 16

/* The executable PT_LOADs of an ELF file (a linker may split the text in
 * several): how many (> 0), or -1 with a message. */
static int exec_segments(int fd, const char *path, struct xseg *xs, bool *pie, uint64_t *max_align)
{
	struct et_tool_elf x;
	if (et_tool_elf_fd(&x, fd) != 0) {
		et_tool_err("%s: %s", path, x.why);
		return -1;
	}
	struct et_tool_seg *segs;
	long n = et_tool_elf_segments(&x, &segs);
	unsigned type = 0, machine, cls;
	if (n < 0 || !et_tool_elf_header(&x, &type, &machine, &cls)) {
		et_tool_err("%s: %s", path, n < 0 ? x.why : "truncated (its program headers lie past the end of the file)");
		if (n >= 0)
			free(segs);
		et_tool_elf_close(&x);
		return -1;
	}
	int found = 0;
	for (long i = 0; i < n; i++) {
		const struct et_tool_seg *ph = &segs[i];
		if (ph->type == PT_INTERP && type == ET_DYN)
			*pie = true;
		if (ph->type == PT_LOAD && ph->align > *max_align)
			*max_align = ph->align;
		if (ph->type == PT_LOAD && (ph->flags & PF_X) && ph->filesz > 0 && found < MAX_XSEGS) {
			xs[found].off = ph->offset;
			xs[found].len = ph->filesz;
			xs[found].vaddr = ph->vaddr;
			found++;
		}
	}
	free(segs);
	et_tool_elf_close(&x);
	if (!found) {
		et_tool_err("%s: no executable segment", path);
		return -1;
	}
	return found;
}

/* FilePmdMapped of this process's mapping at addr, or -errno. */
static long long pmd_mapped(uint64_t addr)
{
	struct et_smaps sm;
	int r = et_smaps_read(&sm, "/proc/self/smaps");
	if (r)
		return r;
	const struct et_vma *v = et_smaps_find(&sm, addr);
	long long b = v ? (long long)v->file_pmd : 0;
	et_smaps_free(&sm);
	return b;
}

/* Processes (other than this one) that map the file open at fd: from
 * /proc/PID/maps, matched on device and inode (the device stat gives, or
 * the mount's, which maps gives for a btrfs subvolume's files). */
static void find_holders(struct et_tool_primed *r, int fd, const struct stat *st)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	struct dirent *de;
	char want[64], want2[64];
	snprintf(want, sizeof want, " %02x:%02x %llu", major(st->st_dev), minor(st->st_dev),
	         (unsigned long long)st->st_ino);
	uint32_t mj, mn;
	if (et_file_mount_dev(fd, NULL, &mj, &mn))
		snprintf(want2, sizeof want2, " %02x:%02x %llu", mj, mn, (unsigned long long)st->st_ino);
	else
		snprintf(want2, sizeof want2, "%s", want);
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		char p[64], line[1024];
		snprintf(p, sizeof p, "/proc/%ld/maps", pid);
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		bool hit = false;
		while (!hit && fgets(line, sizeof line, f)) {
			/* "start-end perms offset dev inode path": dev and inode as in want */
			char *q = strchr(line, ' ');
			for (int k = 0; q && k < 2; k++)
				q = strchr(q + 1, ' ');
			if (q && ((!strncmp(q, want, strlen(want)) && q[strlen(want)] == ' ') ||
			          (!strncmp(q, want2, strlen(want2)) && q[strlen(want2)] == ' ')))
				hit = true;
		}
		fclose(f);
		if (hit) {
			if (r->npids < (int)(sizeof r->pids / sizeof *r->pids))
				r->pids[r->npids++] = (pid_t)pid;
			else
				r->more_pids = true;
		}
	}
	closedir(d);
}

/* Drop the window's clean pages no one maps and read it back through the
 * H-aligned mapping at a (ours: unmapped first, or our own pages would
 * keep it): FilePmdMapped of it after, or -errno; *held: pages stayed
 * (someone maps them, or they are dirty). */
static long long read_back(int fd, char *a, uint64_t off, uint64_t H, unsigned char *vec, size_t npages,
                           bool drop, bool *held)
{
	munmap(a, H);
	if (mmap(a, H, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)off) != a)
		return -errno;
	if (drop)
		posix_fadvise(fd, (off_t)off, (off_t)H, POSIX_FADV_DONTNEED);
	*held = false;
	if (mincore(a, H, vec) == 0)
		for (size_t i = 0; i < npages && !*held; i++)
			*held = vec[i] & 1;
	if (madvise(a, H, MADV_HUGEPAGE) != 0 || madvise(a, H, MADV_POPULATE_READ) != 0)
		return -errno;
	return pmd_mapped((uint64_t)(uintptr_t)a);
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
/* 1 works, 0 does not (g_collapse_err), -1 not tried */
static int g_collapse = -1, g_collapse_err;

int et_tool_collapse_file_text(int *err)
{
	if (err)
		*err = g_collapse_err;
	return g_collapse;
}

/* The window [off, off + H) collapsed where it is, through a read-only,
 * executable mapping at a (H-aligned; the file opened read-only): true
 * when it is one huge folio now.  Not tried once the kernel said it does
 * not collapse file text (EINVAL); a failure that may pass (EAGAIN,
 * ENOMEM: memory; EBUSY) leaves it to the drop and read-back. */
static bool collapse_in_place(int fd, char *a, uint64_t off, uint64_t H)
{
	if (g_collapse == 0)
		return false;
	if (mmap(a, H, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, (off_t)off) != a)
		return false;
	/* (MADV_COLLAPSE needs no MADV_HUGEPAGE: it ignores the THP settings) */
	bool ok = madvise(a, H, MADV_COLLAPSE) == 0;
	int e = errno;
	if (ok && pmd_mapped((uint64_t)(uintptr_t)a) >= (long long)H) {
		g_collapse = 1;
	} else if (!ok && g_collapse < 0 && e != EAGAIN && e != ENOMEM && e != EBUSY) {
		g_collapse = 0;
		g_collapse_err = e;
	}
	/* back to the plain read-only mapping the other steps use */
	munmap(a, H);
	if (mmap(a, H, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)off) != a)
		return false;
	return ok && g_collapse == 1 && pmd_mapped((uint64_t)(uintptr_t)a) >= (long long)H;
}

/* One window [off, off + H) of the file: its state, priming it unless
 * check.  *no_folios: a window of this file came back small with room
 * made for it (the filesystem gives no huge folios): the next ones are
 * read back once, not tried again.  *collapsed: primed where it was
 * (collapse_in_place). */
static enum et_tool_win_state do_window(int fd, uint64_t off, uint64_t H, bool check, bool tmpfs, int *err,
                                        bool *no_folios, bool *collapsed)
{
	/* An H-aligned place for an H-sized mapping. */
	char *r = mmap(NULL, 2 * H, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED) {
		*err = errno;
		return ET_WIN_FAILED;
	}
	char *a = (char *)(((uintptr_t)r + H - 1) & ~(uintptr_t)(H - 1));
	enum et_tool_win_state s = ET_WIN_FAILED;
	long pg = sysconf(_SC_PAGESIZE);
	size_t npages = (size_t)(H / (uint64_t)pg);
	unsigned char *vec = malloc(npages);
	if (!vec) {
		*err = ENOMEM;
		goto out;
	}
	if (mmap(a, H, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)off) != a) {
		*err = errno;
		goto out;
	}
	/* Is every page of the window in the cache?  (mincore reads nothing.) */
	bool all = mincore(a, H, vec) == 0;
	bool any = false;
	for (size_t i = 0; all && i < npages; i++)
		all = vec[i] & 1;
	for (size_t i = 0; i < npages; i++)
		any |= vec[i] & 1;
	if (all) {
		/* Cached whole: mapping it reads nothing; is it one huge folio? */
		madvise(a, H, MADV_HUGEPAGE);
		if (madvise(a, H, MADV_POPULATE_READ) == 0 && pmd_mapped((uint64_t)(uintptr_t)a) >= (long long)H) {
			s = ET_WIN_HUGE_BEFORE;
			goto out;
		}
	}
	if (check) {
		s = all ? ET_WIN_SMALL : ET_WIN_NOT_CACHED;
		goto out;
	}
	if (!tmpfs && collapse_in_place(fd, a, off, H)) {
		s = ET_WIN_PRIMED;
		*collapsed = true;
		goto out;
	}
	bool held = false;
	long long b = read_back(fd, a, off, H, vec, npages, any || all, &held);
	/* Read back small with no page held: readahead found no free huge
	 * page (it does not wait for compaction; memory in small pieces).
	 * Make one (et_os_make_room) and read the window again, twice at
	 * most.  tmpfs pages are the only copy of the file: they never drop,
	 * and whether they are huge is the mount's (huge=) and
	 * shmem_enabled's business, not the reader's. */
	bool roomless = false;
	for (int t = 0; b >= 0 && b < (long long)H && !held && !tmpfs && !*no_folios && t < 2; t++) {
		int e = et_os_make_room(H);
		roomless = e == ENOMEM || e == EAGAIN || e == EBUSY;   /* EBUSY: its memory cgroup */
		b = read_back(fd, a, off, H, vec, npages, true, &held);
		if (b >= 0 && b < (long long)H && !held && !roomless && e == 0)
			*no_folios = true;
	}
	if (b < 0) {
		*err = (int)-b;
		goto out;
	}
	s = b >= (long long)H ? ET_WIN_PRIMED
	    : held && !tmpfs  ? ET_WIN_HELD
	    : roomless        ? ET_WIN_NO_ROOM
	                      : ET_WIN_NO_FOLIOS;
out:
	free(vec);
	munmap(r, 2 * H);
	return s;
}

int et_tool_prime_file(const char *path, uint64_t H, bool check, struct et_tool_primed *res)
{
	memset(res, 0, sizeof *res);
	res->path = path;
	/* O_NONBLOCK: a FIFO must give "not a regular file", not a hang */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		et_tool_err("%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		et_tool_err("%s: not a regular file", path);
		close(fd);
		return -1;
	}
	struct statfs sfs;
	bool tmpfs = fstatfs(fd, &sfs) == 0 && (sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC);
	struct xseg xs[MAX_XSEGS];
	bool pie = false;
	int nx = exec_segments(fd, path, xs, &pie, &res->max_align);
	if (nx < 0) {
		close(fd);
		return -1;
	}
	long pgl = sysconf(_SC_PAGESIZE);
	uint64_t pg = pgl > 0 ? (uint64_t)pgl : 4096;
	res->congruent = true;
	/* The kernel loads a PIE executable at a random address aligned to its
	 * largest p_align: below H, its windows are congruent only by chance
	 * (shared libraries of H or more are placed H-aligned regardless). */
	res->random_base = pie && res->max_align < H;
	for (int i = 0; i < nx; i++) {
		if (xs[i].off + xs[i].len > (uint64_t)st.st_size) {
			et_tool_err("%s: truncated (the executable segment ends past the end of the file)", path);
			close(fd);
			return -1;
		}
		res->text_len += xs[i].len;
		if (i == 0)
			res->text_off = xs[i].off;
		/* only segments with a whole window decide */
		if (((xs[i].vaddr - xs[i].off) & (H - 1)) != 0 && xs[i].len >= H)
			res->congruent = false;
	}
	/* Dirty pages cannot be dropped: write them out first (this changes
	 * nothing in the file, it only cleans the cache). */
	/* A file some process has open for writing may change under us (and
	 * its pages may be dirty again at once): leave it.  A read lease is
	 * refused exactly then (EAGAIN); it needs the file's owner or
	 * CAP_LEASE, and without either we cannot tell: go on. */
	bool writing = false;
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0)
		fcntl(fd, F_SETLEASE, F_UNLCK);
	else if (errno == EAGAIN)
		writing = true;
	if (!check && res->congruent && !writing)
		fdatasync(fd);
	bool no_folios = false;
	for (int i = 0; i < nx; i++) {
		/* The run-time mapping covers whole pages of the segment; a window
		 * is usable when all of it lies in that mapping and in the file. */
		uint64_t lo = xs[i].off & ~(pg - 1);
		uint64_t hi = (xs[i].off + xs[i].len + pg - 1) & ~(pg - 1);
		if (hi > (uint64_t)st.st_size)
			hi = (uint64_t)st.st_size & ~(pg - 1);
		uint64_t first = (lo + H - 1) & ~(H - 1);
		for (uint64_t off = first; off + H <= hi; off += H) {
			res->windows++;
			if (!res->congruent)
				continue;
			if (writing) {
				res->n[ET_WIN_WRITING]++;
				continue;
			}
			int err = 0;
			bool collapsed = false;
			enum et_tool_win_state s = do_window(fd, off, H, check, tmpfs, &err, &no_folios, &collapsed);
			res->n[s]++;
			res->collapsed += collapsed;
			if (s == ET_WIN_FAILED && !res->err)
				res->err = err;
		}
	}
	if (res->congruent && (res->n[ET_WIN_HELD] || res->n[ET_WIN_SMALL]))
		find_holders(res, fd, &st);
	close(fd);
	return 0;
}

int et_tool_prime_state(const char *path, uint64_t H, struct et_prime_state *st)
{
	struct et_tool_primed r;
	memset(st, 0, sizeof *st);
	if (et_tool_prime_file(path, H, true, &r) != 0)
		return -1;
	st->windows = r.windows;
	st->congruent = r.congruent;
	st->huge = r.n[ET_WIN_HUGE_BEFORE] + r.n[ET_WIN_PRIMED];
	st->not_cached = r.n[ET_WIN_NOT_CACHED];
	st->small = r.n[ET_WIN_SMALL] + r.n[ET_WIN_HELD];
	return 0;
}
