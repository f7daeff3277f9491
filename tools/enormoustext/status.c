/*
 * tools/enormoustext/status.c — `enormoustext status [--json] [--no-probe]
 * [--probe-dir DIR] [--root DIR]`: what this system allows for huge text,
 * and which backend `auto` picks.
 *
 * Settings come from sysfs (the library's readers, sysinfo.c, for the PMD
 * size, policy and pool; the rest read here the same way).  Two questions
 * settings cannot answer are probed, quickly, in this process:
 *   - does MADV_COLLAPSE work: a 2 MiB-aligned anonymous region is filled on
 *     small pages, collapsed, and smaps must show it AnonHugePages;
 *   - can the kernel map file text huge: a file of two huge pages is written
 *     in a temporary directory on the programs' filesystem, its page cache
 *     dropped, read back through a 2 MiB-aligned MADV_HUGEPAGE r-x mapping,
 *     and smaps must show FilePmdMapped (the file is unlinked from the start
 *     and closed at the end: nothing is left behind);
 * and, for the `thp` backend, whether the first write to a MADV_HUGEPAGE
 * region gets a huge page.  All three mirror what the library does.
 *
 * Owns: `status`: the system's settings for huge text, the probes, and
 * the backend `auto` would pick.
 * May call: core (sysinfo: the readers and the `auto` order; smaps, json),
 * common.c.
 * Never: changes a setting; leaves a probe's file or mapping behind.
 */
#include "tool.h"
#include "status.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

/* --------------------------------------------------------- settings */

/* snprintf, for messages where cutting a long path short is fine. */
static void setf(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setf(char *dst, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, cap, fmt, ap);
	va_end(ap);
}

static void path_in(char *out, size_t cap, const char *root, const char *rel)
{
	if (!root || !strcmp(root, "/"))
		root = "";
	snprintf(out, cap, "%s%s", root, rel);
}

/* The bracketed word of a choice file, or the whole text when there are
 * no brackets; "" when unreadable. */
static void read_choice(const char *root, const char *rel, char *out, size_t cap)
{
	char path[PATH_MAX];
	path_in(path, sizeof path, root, rel);
	et_tool_read_choice(path, out, cap);
}

static long read_num(const char *root, const char *rel)
{
	char path[PATH_MAX], buf[64];
	uint64_t v;
	path_in(path, sizeof path, root, rel);
	if (et_tool_read(path, buf, sizeof buf) < 0 || et_tool_parse_u64(buf, &v) || v > LONG_MAX)
		return -1;
	return (long)v;
}

/* Entries "hugepages-<N>kB" of a directory. */
static size_t size_dirs(const char *root, const char *rel, struct size_entry *out, size_t cap)
{
	char path[PATH_MAX];
	uint64_t sizes[32];
	path_in(path, sizeof path, root, rel);
	size_t n = et_tool_size_dirs(path, sizes, cap < 32 ? cap : 32);
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].size = sizes[i];
	}
	return n;
}

static int khugepaged_running(void)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	struct dirent *e;
	int found = 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char path[64], comm[32];
		snprintf(path, sizeof path, "/proc/%.20s/comm", e->d_name);
		if (et_tool_read(path, comm, sizeof comm) > 0 && !strcmp(comm, "khugepaged"))
			found = 1;
	}
	closedir(d);
	return found;
}

static void read_settings(struct status *s)
{
	char path[PATH_MAX];
	struct stat st;
	et_sysinfo_read(&s->si, s->root);
	path_in(path, sizeof path, s->root, THP_DIR);
	s->thp_available = stat(path, &st) == 0;
	read_choice(s->root, THP_DIR "/enabled", s->enabled, sizeof s->enabled);
	read_choice(s->root, THP_DIR "/defrag", s->defrag, sizeof s->defrag);
	read_choice(s->root, THP_DIR "/shmem_enabled", s->shmem, sizeof s->shmem);
	s->kh_defrag = read_num(s->root, THP_DIR "/khugepaged/defrag");
	s->kh_scan = read_num(s->root, THP_DIR "/khugepaged/pages_to_scan");
	s->kh_sleep = read_num(s->root, THP_DIR "/khugepaged/scan_sleep_millisecs");
	s->kh_alloc_sleep = read_num(s->root, THP_DIR "/khugepaged/alloc_sleep_millisecs");
	s->kh_ptes_none = read_num(s->root, THP_DIR "/khugepaged/max_ptes_none");
	s->kh_collapsed = read_num(s->root, THP_DIR "/khugepaged/pages_collapsed");
	s->kh_full = read_num(s->root, THP_DIR "/khugepaged/full_scans");
	s->kh_running = s->real ? khugepaged_running() : -1;

	s->nmthp = size_dirs(s->root, THP_DIR, s->mthp, sizeof s->mthp / sizeof *s->mthp);
	for (size_t i = 0; i < s->nmthp; i++) {
		char rel[128];
		snprintf(rel, sizeof rel, THP_DIR "/hugepages-%llukB/enabled",
		         (unsigned long long)(s->mthp[i].size >> 10));
		read_choice(s->root, rel, s->mthp[i].enabled, sizeof s->mthp[i].enabled);
		snprintf(rel, sizeof rel, THP_DIR "/hugepages-%llukB/shmem_enabled",
		         (unsigned long long)(s->mthp[i].size >> 10));
		read_choice(s->root, rel, s->mthp[i].shmem, sizeof s->mthp[i].shmem);
	}
	s->npools = size_dirs(s->root, HUGETLB_DIR, s->pools, sizeof s->pools / sizeof *s->pools);
	for (size_t i = 0; i < s->npools; i++) {
		char rel[128];
		unsigned long long kb = (unsigned long long)(s->pools[i].size >> 10);
		snprintf(rel, sizeof rel, HUGETLB_DIR "/hugepages-%llukB/nr_hugepages", kb);
		s->pools[i].total = read_num(s->root, rel);
		snprintf(rel, sizeof rel, HUGETLB_DIR "/hugepages-%llukB/free_hugepages", kb);
		s->pools[i].free = read_num(s->root, rel);
		snprintf(rel, sizeof rel, HUGETLB_DIR "/hugepages-%llukB/resv_hugepages", kb);
		s->pools[i].resv = read_num(s->root, rel);
		snprintf(rel, sizeof rel, HUGETLB_DIR "/hugepages-%llukB/surplus_hugepages", kb);
		s->pools[i].surplus = read_num(s->root, rel);
	}
	s->nchain = et_backend_chain(&s->si, ET_BACKEND_AUTO, s->chain, &s->why);

	/* for --explain: the kernel, the memory, this process's memory cgroups */
	char buf[8192];
	struct utsname u;
	s->kmajor = s->kminor = -1;
	path_in(path, sizeof path, s->root, "/proc/sys/kernel/osrelease");
	if (s->real && uname(&u) == 0)
		setf(s->kernel, sizeof s->kernel, "%s", u.release);
	else if (et_tool_read(path, buf, sizeof buf) > 0)
		setf(s->kernel, sizeof s->kernel, "%s", buf);
	if (sscanf(s->kernel, "%d.%d", &s->kmajor, &s->kminor) != 2)
		s->kmajor = s->kminor = -1;
	path_in(path, sizeof path, s->root, "/proc/meminfo");
	unsigned long long kb;
	const char *m;
	if (et_read_file(path, buf, sizeof buf) > 0 && (m = strstr(buf, "MemTotal:")) &&
	    sscanf(m + 9, " %llu", &kb) == 1)
		s->mem_total = (uint64_t)kb << 10;
	et_memcg_read(&s->memcg, s->root);
}

/* ----------------------------------------------------------- probes */

/* Huge bytes of the mapping at addr, by kind: 'a' AnonHugePages,
 * 'f' FilePmdMapped.  -errno when smaps cannot be read. */
static long long huge_at(uintptr_t addr, char kind)
{
	struct et_smaps sm;
	int err = et_smaps_read(&sm, "/proc/self/smaps");
	if (err)
		return err;
	const struct et_vma *v = et_smaps_find(&sm, addr);
	long long r = !v ? 0 : kind == 'a' ? (long long)v->anon_huge : (long long)v->file_pmd;
	et_smaps_free(&sm);
	return r;
}

/* An H-aligned address inside a PROT_NONE reservation of (k + 2) * H
 * bytes, with at least a page of it on each side, so that what is mapped
 * there is a VMA of its own (no merging with a neighbour). */
static char *reserve(uint64_t H, size_t k, void **res, size_t *reslen)
{
	*reslen = (k + 2) * H;
	*res = mmap(NULL, *reslen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (*res == MAP_FAILED)
		return NULL;
	return (char *)(((uintptr_t)*res + H) & ~(uintptr_t)(H - 1));
}

const char *et_status_mib(uint64_t H, char *buf, size_t cap)
{
	if (H >= (1u << 20))
		setf(buf, cap, "%llu MiB", (unsigned long long)(H >> 20));
	else
		setf(buf, cap, "%llu KiB", (unsigned long long)(H >> 10));
	return buf;
}

static void probe_thp(struct status *s)
{
	const uint64_t H = s->si.pmd_size;
	struct probe *p = &s->thp;
	char hl[16];
	et_status_mib(H, hl, sizeof hl);
	void *res;
	size_t rl;
	char *a = reserve(H, 1, &res, &rl);
	if (!a) {
		p->works = 0;
		setf(p->detail, sizeof p->detail, "could not reserve address space: %s", strerror(errno));
		return;
	}
	if (mprotect(a, H, PROT_READ | PROT_WRITE) != 0 || madvise(a, H, MADV_HUGEPAGE) != 0) {
		p->works = 0;
		setf(p->detail, sizeof p->detail, "madvise(MADV_HUGEPAGE): %s", strerror(errno));
	} else {
		*(volatile char *)a = 1;
		long long h = huge_at((uintptr_t)a, 'a');
		p->works = h >= (long long)H;
		if (h < 0)
			setf(p->detail, sizeof p->detail, "cannot read /proc/self/smaps: %s", strerror((int)-h));
		else if (p->works)
			setf(p->detail, sizeof p->detail,
			         "the first write to a MADV_HUGEPAGE region got a %s page", hl);
		else if (s->si.thp_disabled_process)
			setf(p->detail, sizeof p->detail,
			         "THP is disabled for this process (PR_SET_THP_DISABLE, inherited)");
		else
			setf(p->detail, sizeof p->detail,
			         "the first write to a MADV_HUGEPAGE region got small pages (enabled=%s, "
			         "defrag=%s, or no free %s page right now)", s->enabled[0] ? s->enabled : "?",
			         s->defrag[0] ? s->defrag : "?", hl);
	}
	munmap(res, rl);
}

static void probe_collapse(struct status *s)
{
	const uint64_t H = s->si.pmd_size;
	struct probe *p = &s->collapse;
	char hl[16];
	et_status_mib(H, hl, sizeof hl);
	void *res;
	size_t rl;
	char *a = reserve(H, 1, &res, &rl);
	if (!a) {
		p->works = 0;
		setf(p->detail, sizeof p->detail, "could not reserve address space: %s", strerror(errno));
		return;
	}
	p->works = 0;
	/* Filled on small pages (NOHUGEPAGE), then the flag cleared again:
	 * MADV_COLLAPSE refuses a NOHUGEPAGE region, and must do the work
	 * itself for the probe to mean anything. */
	if (mprotect(a, H, PROT_READ | PROT_WRITE) != 0) {
		setf(p->detail, sizeof p->detail, "mprotect: %s", strerror(errno));
		goto out;
	}
	madvise(a, H, MADV_NOHUGEPAGE);
	memset(a, 0x5a, H);
	madvise(a, H, MADV_HUGEPAGE);
	long long before = huge_at((uintptr_t)a, 'a');
	int r = madvise(a, H, MADV_COLLAPSE);
	int e = errno;
	long long h = huge_at((uintptr_t)a, 'a');
	if (r != 0) {
		if (e == EINVAL)
			setf(p->detail, sizeof p->detail, "MADV_COLLAPSE: %s (Linux before 6.1, or THP "
			         "disabled for this process)", strerror(e));
		else if (e == EAGAIN || e == ENOMEM)
			setf(p->detail, sizeof p->detail, "MADV_COLLAPSE: %s (no free %s page could be "
			         "made now: memory short or fragmented)", strerror(e), hl);
		else
			setf(p->detail, sizeof p->detail, "MADV_COLLAPSE: %s", strerror(e));
	} else if (h < 0) {
		setf(p->detail, sizeof p->detail, "cannot read /proc/self/smaps: %s", strerror((int)-h));
	} else if (h >= (long long)H) {
		p->works = 1;
		setf(p->detail, sizeof p->detail, "a filled %s region was collapsed onto a huge page%s",
		         hl, before >= (long long)H ? " (it was already huge before: THP always?)" : "");
	} else {
		setf(p->detail, sizeof p->detail, "MADV_COLLAPSE returned 0 but smaps shows no "
		         "AnonHugePages for the region");
	}
out:
	munmap(res, rl);
}

const char *et_status_fs_name(long type, char *buf, size_t cap)
{
	switch ((unsigned long)type) {
	case 0xEF53: return "ext4";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x01021994: return "tmpfs";
	case 0x794C7630: return "overlayfs";
	case 0x6969: return "nfs";
	case 0xF2F52010: return "f2fs";
	case 0x2FC12FC1: return "zfs";
	case 0xCA451A4E: return "bcachefs";
	case 0x73717368: return "squashfs";
	case 0x01021997: return "9p";
	case 0x65735546: return "fuse";
	default: snprintf(buf, cap, "0x%lx", (unsigned long)type); return buf;
	}
}

/* A directory for the file probe: opt, else the first writable one of
 * $TMPDIR, /var/tmp, /tmp on the file system of ref (the PROGRAM of
 * --explain; else this command). */
static void choose_probe_dir(struct file_probe *f, const char *opt, const char *ref)
{
	char exe[PATH_MAX];
	struct stat xs, ds;
	ssize_t n = ref ? (ssize_t)snprintf(exe, sizeof exe, "%s", ref)
	                : readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 && n < (ssize_t)sizeof exe ? n : 0] = '\0';
	bool have_exe = n > 0 && stat(exe, &xs) == 0;
	if (opt) {
		snprintf(f->dir, sizeof f->dir, "%s", opt);
		f->same_fs = have_exe && stat(opt, &ds) == 0 && ds.st_dev == xs.st_dev;
		return;
	}
	const char *cands[] = { getenv("TMPDIR"), "/var/tmp", "/tmp" };
	const char *fallback = NULL;
	for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
		const char *c = cands[i];
		if (!c || !*c || stat(c, &ds) != 0 || !S_ISDIR(ds.st_mode) || access(c, W_OK) != 0)
			continue;
		if (!fallback)
			fallback = c;
		if (have_exe && ds.st_dev == xs.st_dev) {
			snprintf(f->dir, sizeof f->dir, "%s", c);
			f->same_fs = true;
			return;
		}
	}
	snprintf(f->dir, sizeof f->dir, "%s", fallback ? fallback : "/tmp");
	f->same_fs = false;
}

/* Map the first 2H bytes of fd r-x at an H-aligned address with
 * MADV_HUGEPAGE, read it all in, and return its FilePmdMapped bytes
 * (-errno on failure; *step names the step that failed). */
static long long map_and_measure(int fd, uint64_t H, const char **step)
{
	void *res;
	size_t rl;
	char *a = reserve(H, 2, &res, &rl);
	if (!a) {
		*step = "reserving address space";
		return -errno;
	}
	long long r;
	if (mmap(a, 2 * H, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0) != a) {
		*step = "mapping it read+execute";
		r = -errno;
		goto out;
	}
	madvise(a, 2 * H, MADV_HUGEPAGE);
	if (madvise(a, 2 * H, MADV_POPULATE_READ) != 0) {
		volatile const char *c = a;
		for (uint64_t off = 0; off < 2 * H; off += 4096)
			(void)c[off];
	}
	r = huge_at((uintptr_t)a, 'f');
	if (r < 0)
		*step = "reading /proc/self/smaps";
out:
	munmap(res, rl);
	return r;
}

static void probe_file(struct status *s, const char *opt_dir, const char *ref)
{
	struct file_probe *f = &s->file;
	struct probe *p = &f->p;
	const uint64_t H = s->si.pmd_size;
	char hl[16], fsb[24];
	et_status_mib(H, hl, sizeof hl);
	choose_probe_dir(f, opt_dir, ref);
	p->works = 0;
	f->fresh = -1;
	struct statfs sf;
	if (statfs(f->dir, &sf) == 0)
		snprintf(f->fs, sizeof f->fs, "%s", et_status_fs_name((long)sf.f_type, fsb, sizeof fsb));
	else
		snprintf(f->fs, sizeof f->fs, "?");

	/* An unnamed file when the filesystem can (O_TMPFILE); else a named
	 * one unlinked at once.  Either way nothing stays behind. */
	int fd = open(f->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		char tmpl[PATH_MAX + 40];
		setf(tmpl, sizeof tmpl, "%s/.enormoustext-probe-XXXXXX", f->dir);
		fd = mkostemp(tmpl, O_CLOEXEC);
		if (fd < 0) {
			setf(p->detail, sizeof p->detail, "cannot create a file in %s: %s", f->dir,
			         strerror(errno));
			return;
		}
		unlink(tmpl);
	}
	const char *step = NULL;
	char *buf = malloc(1 << 16);
	if (!buf) {
		setf(p->detail, sizeof p->detail, "out of memory");
		close(fd);
		return;
	}
	for (uint64_t off = 0; off < 2 * H; off += 1 << 16) {
		memset(buf, (int)(0xc3 ^ (off >> 16)), 1 << 16);
		if (pwrite(fd, buf, 1 << 16, (off_t)off) != 1 << 16) {
			setf(p->detail, sizeof p->detail, "cannot write a %s file in %s: %s",
			         et_status_mib(2 * H, fsb, sizeof fsb), f->dir, strerror(errno));
			free(buf);
			close(fd);
			return;
		}
	}
	free(buf);
	long long fresh = map_and_measure(fd, H, &step);
	if (fresh < 0) {
		if (fresh == -EPERM || fresh == -EACCES)
			setf(p->detail, sizeof p->detail, "%s: cannot map a file of %s for execution "
			         "(mounted noexec?): %s", f->dir, f->fs, strerror((int)-fresh));
		else
			setf(p->detail, sizeof p->detail, "%s: %s failed: %s", f->dir, step,
			         strerror((int)-fresh));
		close(fd);
		return;
	}
	f->fresh = fresh >= (long long)H;
	/* What a program file looks like once its cache is read back through
	 * a mapping made the way the library would make it. */
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	long long again = map_and_measure(fd, H, &step);
	close(fd);
	if (again < 0) {
		setf(p->detail, sizeof p->detail, "%s: %s failed: %s", f->dir, step, strerror((int)-again));
		return;
	}
	char sz[16];
	p->works = again >= (long long)H;
	if (p->works)
		setf(p->detail, sizeof p->detail, "a %s file in %s (%s) was mapped huge (FilePmdMapped %s) "
		         "after its page cache was dropped and read back through a %s-aligned "
		         "MADV_HUGEPAGE mapping; freshly written: %s", et_status_mib(2 * H, fsb, sizeof fsb),
		         f->dir, f->fs, et_tool_size(sz, sizeof sz, (uint64_t)again), hl,
		         f->fresh ? "huge too" : "small");
	else
		setf(p->detail, sizeof p->detail, "a %s file in %s (%s) stayed on small pages when read "
		         "back through a %s-aligned MADV_HUGEPAGE mapping (no %s page-cache folios here%s); "
		         "freshly written: %s", et_status_mib(2 * H, fsb, sizeof fsb), f->dir, f->fs, hl, hl,
		         s->si.thp_disabled_process ? ", THP disabled for this process" : "",
		         f->fresh ? "huge" : "small");
}

/* ---------------------------------------------------------- output */

void et_status_auto_reason(const struct status *s, char *out, size_t cap)
{
	const struct et_sysinfo *si = &s->si;
	char hl[16];
	et_status_mib(si->pmd_size, hl, sizeof hl);
	size_t n = 0;
#define PUT(...) do { if (n < cap) n += (size_t)snprintf(out + n, cap - n, __VA_ARGS__); } while (0)
	if (si->thp_disabled_process) {
		PUT("THP is disabled for this process (PR_SET_THP_DISABLE, inherited by what it runs): "
		    "only the hugetlb pool can work");
	} else {
		switch (si->thp) {
		case ET_THP_ALWAYS:
		case ET_THP_MADVISE:
			if (si->defrag == ET_DEFRAG_DEFER || si->defrag == ET_DEFRAG_NEVER)
				PUT("collapse first: defrag=%s does not let a fault wait for compaction and "
				    "MADV_COLLAPSE compacts by itself; then thp", et_defrag_mode_name(si->defrag));
			else
				PUT("thp first: enabled=%s gives a MADV_HUGEPAGE region a huge page at its first "
				    "write and defrag=%s lets that fault compact memory; then collapse "
				    "(MADV_COLLAPSE)", et_thp_mode_name(si->thp), et_defrag_mode_name(si->defrag));
			break;
		case ET_THP_NEVER:
			PUT("collapse only: enabled=never gives no huge page at a fault, MADV_COLLAPSE works "
			    "whatever the policy");
			break;
		default:
			PUT("collapse only: the THP policy is unknown (no readable %s/enabled)", THP_DIR);
			break;
		}
	}
	if (si->hugetlb_free > 0)
		PUT("; then hugetlb: %ld free %s pages in the pool", si->hugetlb_free, hl);
	else
		PUT("; hugetlb not tried: no free %s pages in the pool", hl);
	for (int i = 0; i < s->nchain; i++) {
		const struct probe *p = s->chain[i] == ET_BACKEND_THP ? &s->thp :
		                        s->chain[i] == ET_BACKEND_COLLAPSE ? &s->collapse : NULL;
		if (p && p->works == 0)
			PUT("; but the %s probe failed here", et_backend_name(s->chain[i]));
	}
#undef PUT
}

static void chain_text(const struct status *s, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
	if (s->nchain == 0) {
		snprintf(out, cap, "none");
		return;
	}
	for (int i = 0; i < s->nchain && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", then " : "", et_backend_name(s->chain[i]));
}

static const char *probe_word(int w)
{
	return w < 0 ? "not probed" : w ? "yes" : "no";
}

/* A number read from sysfs, "?" when it could not be read. */
static const char *num(char buf[24], long v)
{
	if (v < 0)
		return "?";
	snprintf(buf, 24, "%ld", v);
	return buf;
}

static void print_probe(const char *what, const struct probe *p)
{
	if (p->works < 0)
		printf("  %-16s %s\n", what, p->detail);
	else
		printf("  %-16s %s: %s\n", what, probe_word(p->works), p->detail);
}

static void print_text(const struct status *s)
{
	char a[16], b[16], why[1024], chain[64];
	printf("transparent huge pages%s\n", s->thp_available ? "" : " (not available: no " THP_DIR ")");
	printf("  enabled          %s\n", s->enabled[0] ? s->enabled : "unknown");
	printf("  defrag           %s\n", s->defrag[0] ? s->defrag : "unknown");
	printf("  shmem_enabled    %s\n", s->shmem[0] ? s->shmem : "unknown");
	printf("  this process     %s\n", s->si.thp_disabled_process
	               ? "THP disabled (PR_SET_THP_DISABLE, inherited)" : "THP allowed");
	printf("  PMD size         %s%s\n", et_tool_size(a, sizeof a, s->si.pmd_size),
	       s->si.pmd_size_read ? "" : " (assumed: hpage_pmd_size unreadable)");
	printf("  mTHP sizes       ");
	if (!s->nmthp)
		printf("none listed");
	else
		printf("(anon/shmem)");
	for (size_t i = 0; i < s->nmthp; i++)
		printf(" %s %s/%s", et_tool_size(a, sizeof a, s->mthp[i].size),
		       s->mthp[i].enabled[0] ? s->mthp[i].enabled : "-",
		       s->mthp[i].shmem[0] ? s->mthp[i].shmem : "-");
	printf("\n  khugepaged       %s",
	       s->kh_running < 0 ? "" : s->kh_running ? "running; " : "not running; ");
	char n1[24], n2[24], n3[24], n4[24], n5[24], n6[24];
	printf("defrag %s, pages_to_scan %s, scan_sleep_millisecs %s, max_ptes_none %s; "
	       "%s pages collapsed in %s full scans\n", num(n1, s->kh_defrag), num(n2, s->kh_scan),
	       num(n3, s->kh_sleep), num(n4, s->kh_ptes_none), num(n5, s->kh_collapsed),
	       num(n6, s->kh_full));
	printf("hugetlb pool\n");
	if (!s->npools)
		printf("  (no %s)\n", HUGETLB_DIR);
	for (size_t i = 0; i < s->npools; i++)
		printf("  %-16s %s pages, %s free, %s reserved, %s surplus%s\n",
		       et_tool_size(a, sizeof a, s->pools[i].size), num(n1, s->pools[i].total),
		       num(n2, s->pools[i].free), num(n3, s->pools[i].resv), num(n4, s->pools[i].surplus),
		       s->pools[i].size == s->si.pmd_size ? "  (the PMD size: used by the hugetlb backend)" : "");
	printf("probes (in this process, now)\n");
	print_probe("thp fault", &s->thp);
	print_probe("MADV_COLLAPSE", &s->collapse);
	print_probe("file-backed text", &s->file.p);
	if (s->file.p.works >= 0 && !s->file.same_fs)
		printf("  %-16s (%s is not on the filesystem of this command: results there may differ)\n",
		       "", s->file.dir);
	chain_text(s, chain, sizeof chain);
	et_status_auto_reason(s, why, sizeof why);
	printf("backend auto would use: %s\n  %s\n", chain, why);
	if (s->file.p.works == 1)
		printf("  and text the kernel already maps huge from the file (FilePmdMapped) is left as it is\n");
	(void)b;
}

static void num_or_null(struct et_json *j, const char *key, long v)
{
	if (v < 0)
		et_json_null(j, key);
	else
		et_json_i64(j, key, v);
}

static void probe_json(struct et_json *j, const char *key, const struct probe *p)
{
	et_json_obj(j, key);
	if (p->works < 0)
		et_json_null(j, "works");
	else
		et_json_bool(j, "works", p->works);
	et_json_str(j, "detail", p->detail);
}

static int print_json(const struct status *s, bool explain, const char *program)
{
	struct et_json j;
	char why[1024];
	et_json_init(&j, stdout);
	et_json_obj(&j, NULL);
	et_json_u64(&j, "pmd_size", s->si.pmd_size);
	et_json_obj(&j, "thp");
	et_json_bool(&j, "available", s->thp_available);
	et_json_str(&j, "enabled", s->enabled[0] ? s->enabled : NULL);
	et_json_str(&j, "defrag", s->defrag[0] ? s->defrag : NULL);
	et_json_str(&j, "shmem_enabled", s->shmem[0] ? s->shmem : NULL);
	et_json_bool(&j, "disabled_for_process", s->si.thp_disabled_process);
	et_json_obj_end(&j);
	et_json_arr(&j, "mthp");
	for (size_t i = 0; i < s->nmthp; i++) {
		et_json_obj(&j, NULL);
		et_json_u64(&j, "size", s->mthp[i].size);
		et_json_str(&j, "enabled", s->mthp[i].enabled[0] ? s->mthp[i].enabled : NULL);
		et_json_str(&j, "shmem_enabled", s->mthp[i].shmem[0] ? s->mthp[i].shmem : NULL);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_obj(&j, "khugepaged");
	if (s->kh_running < 0)
		et_json_null(&j, "running");
	else
		et_json_bool(&j, "running", s->kh_running);
	num_or_null(&j, "defrag", s->kh_defrag);
	num_or_null(&j, "pages_to_scan", s->kh_scan);
	num_or_null(&j, "scan_sleep_millisecs", s->kh_sleep);
	num_or_null(&j, "alloc_sleep_millisecs", s->kh_alloc_sleep);
	num_or_null(&j, "max_ptes_none", s->kh_ptes_none);
	num_or_null(&j, "pages_collapsed", s->kh_collapsed);
	num_or_null(&j, "full_scans", s->kh_full);
	et_json_obj_end(&j);
	et_json_arr(&j, "hugetlb");
	for (size_t i = 0; i < s->npools; i++) {
		et_json_obj(&j, NULL);
		et_json_u64(&j, "size", s->pools[i].size);
		num_or_null(&j, "total", s->pools[i].total);
		num_or_null(&j, "free", s->pools[i].free);
		num_or_null(&j, "reserved", s->pools[i].resv);
		num_or_null(&j, "surplus", s->pools[i].surplus);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_obj(&j, "probes");
	probe_json(&j, "thp_fault", &s->thp);
	et_json_obj_end(&j);
	probe_json(&j, "collapse", &s->collapse);
	et_json_obj_end(&j);
	probe_json(&j, "file", &s->file.p);
	if (s->file.fresh < 0)
		et_json_null(&j, "fresh_file_huge");
	else
		et_json_bool(&j, "fresh_file_huge", s->file.fresh);
	et_json_str(&j, "dir", s->file.dir[0] ? s->file.dir : NULL);
	et_json_str(&j, "filesystem", s->file.fs[0] ? s->file.fs : NULL);
	et_json_bool(&j, "same_filesystem_as_command", s->file.same_fs);
	et_json_obj_end(&j);
	et_json_obj_end(&j);
	et_json_obj(&j, "auto");
	et_json_arr(&j, "backends");
	for (int i = 0; i < s->nchain; i++)
		et_json_str(&j, NULL, et_backend_name(s->chain[i]));
	et_json_arr_end(&j);
	et_status_auto_reason(s, why, sizeof why);
	et_json_str(&j, "reason", why);
	et_json_obj_end(&j);
	int rc = ET_EXIT_OK;
	if (explain)
		rc = et_status_explain(s, program, &j);
	et_json_obj_end(&j);
	et_json_end(&j);
	return rc;
}

static void help(FILE *f)
{
	fprintf(f,
	        "usage: enormoustext status [--json] [--no-probe] [--probe-dir DIR] [--root DIR]\n"
	        "                           [--explain [PROGRAM]]\n"
	        "\n"
	        "What this system allows for text on huge pages: the THP policy (enabled,\n"
	        "defrag, shmem_enabled, and whether THP is disabled for this process), the\n"
	        "PMD size, the mTHP sizes, khugepaged, the hugetlb pool per page size (total,\n"
	        "free, reserved, surplus); whether MADV_COLLAPSE works, whether the first\n"
	        "write to a MADV_HUGEPAGE region gets a huge page, and whether the kernel\n"
	        "maps file-backed text huge (all three probed in this process, in well under\n"
	        "a second); and which backends `auto` would try, in order, and why.\n"
	        "\n"
	        "options:\n"
	        "  --json           JSON instead of text\n"
	        "  --no-probe       read the settings only; run no probe\n"
	        "  --probe-dir DIR  where the file probe writes its (unnamed, temporary) file of\n"
	        "                   two huge pages; default: the first of $TMPDIR, /var/tmp, /tmp on\n"
	        "                   the filesystem of this command\n"
	        "  --root DIR       read sysfs under DIR instead of / (a copy, or a test tree);\n"
	        "                   implies --no-probe: probes can only test the running system\n"
	        "  --explain        instead of the settings, what to do on this host, in sentences,\n"
	        "                   each from one of the facts above (the THP policy and defrag,\n"
	        "                   the kernel, the probes, the hugetlb pool, the file system's\n"
	        "                   page cache, this process's memory cgroup); with --json, the\n"
	        "                   same as an \"explain\" member\n"
	        "  PROGRAM          (with --explain) what would move for this program and the\n"
	        "                   libraries it needs (DT_NEEDED, found as ld.so would: RPATH,\n"
	        "                   RUNPATH, ld.so.cache, the default directories; not what it\n"
	        "                   opens later with dlopen): text in whole huge-page windows\n"
	        "                   (the planner of `check`), which way in (zero-copy from the\n"
	        "                   page cache, as `prime` sees its state; else copies), the memory\n"
	        "                   it costs per process, and the start-up time, from a copy\n"
	        "                   rate measured here and now\n"
	        "  -h, --help       this help\n");
}

int et_cmd_status(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "no-probe", no_argument, NULL, 'P' },
		{ "probe-dir", required_argument, NULL, 'd' },
		{ "root", required_argument, NULL, 'r' },
		{ "explain", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, probe = true, explain = false;
	const char *program = NULL;
	const char *probe_dir = NULL;
	static struct status s;
	memset(&s, 0, sizeof s);
	s.root = "/";
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'P': probe = false; break;
		case 'd': probe_dir = optarg; break;
		case 'r': s.root = optarg; break;
		case 'e': explain = true; break;
		case 'h': help(stdout); return ET_EXIT_OK;
		default: return et_tool_bad_option(c, argv, optind);
		}
	}
	if (explain && optind < argc)
		program = argv[optind++];
	if (optind < argc)
		return et_tool_usage("unexpected argument '%s'%s", argv[optind],
		                     explain ? "" : " (a PROGRAM goes with --explain)");
	struct stat st;
	if (program && stat(program, &st) != 0) {
		et_tool_err("%s: %s", program, strerror(errno));
		return ET_EXIT_BAD;
	}
	if (program && !S_ISREG(st.st_mode)) {
		et_tool_err("%s: not a regular file", program);
		return ET_EXIT_BAD;
	}
	if (stat(s.root, &st) != 0 || !S_ISDIR(st.st_mode)) {
		et_tool_err("--root %s: not a directory", s.root);
		return ET_EXIT_BAD;
	}
	if (probe_dir && (stat(probe_dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
		et_tool_err("--probe-dir %s: not a directory", probe_dir);
		return ET_EXIT_BAD;
	}
	s.real = !strcmp(s.root, "/");
	if (!s.real)
		probe = false;
	read_settings(&s);
	s.thp.works = s.collapse.works = s.file.p.works = s.file.fresh = -1;
	if (probe) {
		probe_thp(&s);
		probe_collapse(&s);
		probe_file(&s, probe_dir, program);
	} else {
		const char *why = s.real ? "not probed (--no-probe)" : "not probed (--root)";
		snprintf(s.thp.detail, sizeof s.thp.detail, "%s", why);
		snprintf(s.collapse.detail, sizeof s.collapse.detail, "%s", why);
		snprintf(s.file.p.detail, sizeof s.file.p.detail, "%s", why);
	}
	if (json)
		return print_json(&s, explain, program);
	if (explain)
		return et_status_explain(&s, program, NULL);
	print_text(&s);
	return ET_EXIT_OK;
}
