/*
 * tools/enormoustext/host.c — what this system allows for huge text (see
 * host.h): the settings, read from sysfs (the library's readers,
 * sysinfo.c, for the PMD size, policy and pool; the rest the same way),
 * and three probes, run quickly in this process, that settings cannot
 * answer:
 *   - does MADV_COLLAPSE work: a 2 MiB-aligned anonymous region is filled on
 *     small pages, collapsed, and smaps must show it AnonHugePages;
 *   - can the kernel map file text huge: a file of two huge pages is written
 *     in a temporary directory on the programs' filesystem, its page cache
 *     dropped, read back through a 2 MiB-aligned MADV_HUGEPAGE r-x mapping,
 *     and smaps must show FilePmdMapped (the file is unlinked from the start
 *     and closed at the end: nothing is left behind);
 *   - for the `thp` backend, does the first write to a MADV_HUGEPAGE region
 *     get a huge page.
 * All three mirror what the library does.  And the backends `auto` would
 * try, in order, and why.
 *
 * And what is on host-wide: the off switch, /etc/ld.so.preload's entry of
 * `enable --binary`, how many programs its list holds, and whether each
 * library the loader's list names is whole (sofile.c).
 *
 * Owns: the host's facts (et_tool_host_read), the probes, the order of
 * `auto` as text (et_tool_auto_reason, et_tool_auto_chain), the names of
 * file systems and of page sizes.
 * May call: core (sysinfo: the readers and the `auto` order; smaps, memcg,
 * mm_flags), preload.c (ld.so.preload's entry), sofile.c (its libraries
 * checked whole), common.c.
 * Never: changes a setting; leaves a probe's file or mapping behind;
 * prints (status.c and explain.c do).
 */
#include "host.h"
#include "preload.h"
#include "sofile.h"

#include "core/hostconf.h"
#include "core/hostwide.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

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

/* Each library the loader's list buf names, checked whole (sofile.c): a
 * file cut short there kills every dynamically linked program at start.
 * The list's words as the loader reads them (blanks and ':' between,
 * '#' to the end of a line a comment); a word without a '/' (found along
 * the loader's path) or with a '$' (a token it expands) is not checked.
 * Under --root, ROOT before each path. */
static void check_preloaded(struct et_tool_host *s, const char *buf)
{
	for (const char *w = buf; *w;) {
		if (*w == '#') {
			w += strcspn(w, "\n");
			continue;
		}
		size_t n = strcspn(w, " \t\n:#");
		if (n && n < PATH_MAX && memchr(w, '/', n) && !memchr(w, '$', n) && s->hw_nlibs < ET_TOOL_HW_LIBS) {
			char path[PATH_MAX];
			snprintf(path, sizeof path, "%.*s", (int)n, w);
			bool seen = false;
			for (size_t i = 0; i < s->hw_nlibs; i++)
				seen |= !strcmp(s->hw_libs[i].path, path);
			if (!seen) {
				char full[2 * PATH_MAX];
				snprintf(full, sizeof full, "%s%s", s->real ? "" : s->root, path);
				snprintf(s->hw_libs[s->hw_nlibs].path, sizeof s->hw_libs[0].path, "%s", path);
				char *why = s->hw_libs[s->hw_nlibs].problem;
				why[0] = '\0';
				if (et_tool_so_check(full, why, sizeof s->hw_libs[0].problem) != 0)
					s->hw_broken++;
				s->hw_nlibs++;
			}
		}
		w += n ? n : 1;
	}
}

/* ROOT/etc's host-wide state (core/hostwide.h's names). */
static void read_hostwide(struct et_tool_host *s)
{
	char p[PATH_MAX], buf[8192];
	struct stat st;
	snprintf(p, sizeof p, "%s%s", s->real ? "" : s->root, ET_HOSTWIDE_OFF);
	s->hw_off = lstat(p, &st) == 0;
	s->hw_entry[0] = '\0';
	s->hw_nlibs = s->hw_broken = 0;
	snprintf(p, sizeof p, "%s%s", s->real ? "" : s->root, ET_HOSTWIDE_PRELOAD);
	if (et_tool_read(p, buf, sizeof buf) > 0) {
		(void)et_tool_preload_entry(buf, s->hw_entry, sizeof s->hw_entry);
		check_preloaded(s, buf);
	}
	s->hw_programs = -1;
	s->hw_all = false;
	snprintf(p, sizeof p, "%s%s", s->real ? "" : s->root, ET_HOSTWIDE_ETC);
	s->hw_dir_untrusted = lstat(p, &st) == 0 ? et_hostwide_untrusted(&st, true) : NULL;
	snprintf(p, sizeof p, "%s%s", s->real ? "" : s->root, ET_HOSTWIDE_LIST);
	FILE *f = fopen(p, "re");
	s->hw_list_untrusted = NULL;
	if (f) {
		char line[PATH_MAX + 64];
		s->hw_programs = 0;
		if (fstat(fileno(f), &st) == 0)
			s->hw_list_untrusted = et_hostwide_untrusted(&st, false);
		while (fgets(line, sizeof line, f)) {
			char *l = line + strspn(line, " \t");
			l[strcspn(l, " \t\r\n")] = '\0';
			if (!strcmp(l, ET_HOSTWIDE_ALL))
				s->hw_all = true;
			else if (*l && *l != '#')
				s->hw_programs++;
		}
		fclose(f);
	}
	snprintf(p, sizeof p, "%s%s", s->real ? "" : s->root, ET_HOSTWIDE_DAEMON_NOTE);
	s->hw_daemon_wanted = access(p, F_OK) == 0;
	/* the settings, parsed as the library parses them */
	s->hw_conf = false;
	s->hw_conf_untrusted = NULL;
	s->hw_settings[0] = '\0';
	s->hw_conf_bad_line = s->hw_conf_refused_line = 0;
	s->hw_conf_speaks[0] = '\0';
	snprintf(p, sizeof p, "%s%s", s->real ? "" : s->root, ET_HOSTWIDE_CONF);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		static char text[ET_HOSTCONF_MAX + 2];
		s->hw_conf = true;
		ssize_t n = fstat(fd, &st) == 0 ? read(fd, text, sizeof text - 1) : -1;
		close(fd);
		s->hw_conf_untrusted = et_hostwide_untrusted(&st, false);
		if (n < 0 || (size_t)n > ET_HOSTCONF_MAX) {
			if (!s->hw_conf_untrusted)
				s->hw_conf_untrusted = n < 0 ? "cannot be read" : "longer than 8192 bytes";
			return;
		}
		text[n] = '\0';
		struct et_hostconf hc;
		et_hostconf_parse(text, &hc);
		s->hw_conf_bad_line = hc.bad_line;
		s->hw_conf_refused_line = hc.refused_line;
		/* what enable --all refuses, written by hand: each process is
		 * silent about it, and status says it (preload.c's rule) */
		if (!et_tool_options_speak(hc.val, s->hw_conf_speaks, sizeof s->hw_conf_speaks))
			s->hw_conf_speaks[0] = '\0';
		size_t o = 0, cap = sizeof s->hw_settings;
#define PUT(...) (o += (size_t)snprintf(s->hw_settings + o, o < cap ? cap - o : 0, __VA_ARGS__))
		if (hc.programs)
			PUT("%s" ET_HOSTCONF_PROGRAMS "=%s", o ? ", " : "", hc.programs);
		if (hc.exclude)
			PUT("%s" ET_HOSTCONF_EXCLUDE "=%s", o ? ", " : "", hc.exclude);
		size_t nt;
		const struct et_option_desc *t = et_option_table(&nt);
		for (size_t i = 0; i < nt && i < ET_OPT__COUNT; i++)
			if (hc.val[i])
				PUT("%s%s=%s", o ? ", " : "", t[i].name, hc.val[i]);
#undef PUT
	}
}

static void read_settings(struct et_tool_host *s)
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

const char *et_tool_mib(uint64_t H, char *buf, size_t cap)
{
	if (H >= (1u << 20))
		setf(buf, cap, "%llu MiB", (unsigned long long)(H >> 20));
	else
		setf(buf, cap, "%llu KiB", (unsigned long long)(H >> 10));
	return buf;
}

/* A probe's region: H bytes at an H-aligned address (reserve()), hl the
 * size in words; NULL after p says why. */
static char *probe_region(const struct et_tool_host *s, struct probe *p, char hl[16], void **res, size_t *rl)
{
	et_tool_mib(s->si.pmd_size, hl, 16);
	char *a = reserve(s->si.pmd_size, 1, res, rl);
	if (!a) {
		p->works = 0;
		setf(p->detail, sizeof p->detail, "could not reserve address space: %s", strerror(errno));
	}
	return a;
}

static void probe_thp(struct et_tool_host *s)
{
	const uint64_t H = s->si.pmd_size;
	struct probe *p = &s->thp;
	char hl[16];
	void *res;
	size_t rl;
	char *a = probe_region(s, p, hl, &res, &rl);
	if (!a)
		return;
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

static void probe_collapse(struct et_tool_host *s)
{
	const uint64_t H = s->si.pmd_size;
	struct probe *p = &s->collapse;
	char hl[16];
	void *res;
	size_t rl;
	char *a = probe_region(s, p, hl, &res, &rl);
	if (!a)
		return;
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

const char *et_tool_fs_name(long type, char *buf, size_t cap)
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

static void probe_file(struct et_tool_host *s, const char *opt_dir, const char *ref)
{
	struct file_probe *f = &s->file;
	struct probe *p = &f->p;
	const uint64_t H = s->si.pmd_size;
	char hl[16], fsb[24];
	et_tool_mib(H, hl, sizeof hl);
	choose_probe_dir(f, opt_dir, ref);
	p->works = 0;
	f->fresh = -1;
	struct statfs sf;
	if (statfs(f->dir, &sf) == 0)
		snprintf(f->fs, sizeof f->fs, "%s", et_tool_fs_name((long)sf.f_type, fsb, sizeof fsb));
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
			         et_tool_mib(2 * H, fsb, sizeof fsb), f->dir, strerror(errno));
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
		         "MADV_HUGEPAGE mapping; freshly written: %s", et_tool_mib(2 * H, fsb, sizeof fsb),
		         f->dir, f->fs, et_tool_size(sz, sizeof sz, (uint64_t)again), hl,
		         f->fresh ? "huge too" : "small");
	else
		setf(p->detail, sizeof p->detail, "a %s file in %s (%s) stayed on small pages when read "
		         "back through a %s-aligned MADV_HUGEPAGE mapping (no %s page-cache folios here%s); "
		         "freshly written: %s", et_tool_mib(2 * H, fsb, sizeof fsb), f->dir, f->fs, hl, hl,
		         s->si.thp_disabled_process ? ", THP disabled for this process" : "",
		         f->fresh ? "huge" : "small");
}

/* ---------------------------------------------------------- output */

void et_tool_auto_reason(const struct et_tool_host *s, char *out, size_t cap)
{
	const struct et_sysinfo *si = &s->si;
	char hl[16];
	et_tool_mib(si->pmd_size, hl, sizeof hl);
	size_t n = 0;
	out[0] = '\0';
#define PUT(...) do { if (n < cap) n += (size_t)snprintf(out + n, cap - n, __VA_ARGS__); } while (0)
	/* one clause per backend, in the order of the chain (et_tool_auto_chain
	 * names the same order): "X first: why; then Y: why; ..." */
	bool thp_seen = false, hugetlb = false;
	for (int i = 0; i < s->nchain; i++) {
		enum et_backend b = s->chain[i];
		if (i)
			PUT("; then %s", et_backend_name(b));
		else
			PUT("%s first", et_backend_name(b));
		switch (b) {
		case ET_BACKEND_FILE:
			PUT(": zero-copy, the file's own page cache mapped huge where its text's address and "
			    "offset agree modulo %s (nothing copied, the pages shared)", hl);
			break;
		case ET_BACKEND_THP:
			thp_seen = true;
			if (si->defrag == ET_DEFRAG_DEFER || si->defrag == ET_DEFRAG_NEVER)
				PUT(": a copy that gets a huge page at its first write only when one is free "
				    "(defrag=%s: the fault does not wait for compaction)", et_defrag_mode_name(si->defrag));
			else
				PUT(": a copy; enabled=%s gives a MADV_HUGEPAGE region a huge page at its first "
				    "write and defrag=%s lets that fault compact memory", et_thp_mode_name(si->thp),
				    et_defrag_mode_name(si->defrag));
			break;
		case ET_BACKEND_COLLAPSE:
			if (si->thp == ET_THP_NEVER)
				PUT(" (MADV_COLLAPSE): a copy; enabled=never gives no huge page at a fault, "
				    "MADV_COLLAPSE works whatever the policy");
			else if (si->thp != ET_THP_ALWAYS && si->thp != ET_THP_MADVISE)
				PUT(" (MADV_COLLAPSE): a copy; the THP policy is unknown (no readable %s/enabled)",
				    THP_DIR);
			else if (!thp_seen)
				PUT(" (MADV_COLLAPSE): a copy; defrag=%s does not let a fault wait for compaction "
				    "and MADV_COLLAPSE compacts by itself", et_defrag_mode_name(si->defrag));
			else
				PUT(" (MADV_COLLAPSE): a copy, where the fault found no huge page");
			break;
		case ET_BACKEND_HUGETLB:
			hugetlb = true;
			PUT(": a copy in the hugetlb pool, %ld free %s page%s", si->hugetlb_free, hl,
			    si->hugetlb_free == 1 ? "" : "s");
			break;
		default:
			break;
		}
	}
	if (si->thp_disabled_process)
		PUT("%sTHP is disabled for this process (PR_SET_THP_DISABLE, inherited by what it runs): "
		    "only the hugetlb pool can work", n ? "; " : "");
	if (!hugetlb)
		PUT("%shugetlb not tried: %s", n ? "; " : "",
		    si->hugetlb_free > 0 ? "not in the order here" : "no free pages in the pool");
	for (int i = 0; i < s->nchain; i++) {
		const struct probe *p = s->chain[i] == ET_BACKEND_THP ? &s->thp :
		                        s->chain[i] == ET_BACKEND_COLLAPSE ? &s->collapse : NULL;
		if (p && p->works == 0)
			PUT("; but the %s probe failed here", et_backend_name(s->chain[i]));
	}
#undef PUT
}

void et_tool_auto_chain(const struct et_tool_host *s, const char *none, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
	if (s->nchain == 0) {
		snprintf(out, cap, "%s", none);
		return;
	}
	for (int i = 0; i < s->nchain && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", then " : "", et_backend_name(s->chain[i]));
}

/* The string value of a JSON line's "key": "value" (v: past the colon),
 * its escapes \" and \\ undone, into out (cut to cap). */
static void json_line_str(const char *v, char *out, size_t cap)
{
	size_t n = 0;
	const char *p = strchr(v, '"');
	for (p = p ? p + 1 : v + strlen(v); *p && *p != '"' && n + 1 < cap; p++) {
		if (*p == '\\' && p[1])
			p++;
		out[n++] = *p;
	}
	out[n] = '\0';
}

/* ROOT/var/lib/enormoustext/daemon.json, as cmd/daemon_files.c writes it:
 * one "pid", then per file a "state" (the words are its state_name; "left
 * alone", a file on a filesystem it primes only when asked, counts with
 * "nothing to prime"). */
void et_tool_daemon_read(const char *root, struct et_tool_daemon *d)
{
	memset(d, 0, sizeof *d);
	bool real = !root || !strcmp(root, "/") || !root[0];
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s%s/daemon.json", real ? "" : root, ET_TOOL_DAEMON_STATE);
	FILE *f = fopen(p, "re");
	if (!f)
		return;
	char line[PATH_MAX + 64], path[256] = "";
	bool pending = false;
	while (fgets(line, sizeof line, f)) {
		char *v = strchr(line, ':');
		if (!v)
			continue;
		if (strstr(line, "\"path\"") && strstr(line, "\"path\"") < v) {
			json_line_str(v + 1, path, sizeof path);
			pending = false;
		} else if (strstr(line, "\"held_by\"") && strstr(line, "\"held_by\"") < v) {
			if (pending && d->nwaiting)
				json_line_str(v + 1, d->waiting[d->nwaiting - 1].held_by, sizeof d->waiting[0].held_by);
		} else if (strstr(line, "\"why\"") && strstr(line, "\"why\"") < v) {
			if (pending && d->nwaiting)
				json_line_str(v + 1, d->waiting[d->nwaiting - 1].why, sizeof d->waiting[0].why);
		} else if (strstr(line, "\"pid\"") && strstr(line, "\"pid\"") < v) {
			d->known = true;
			d->pid = strtol(v + 1, NULL, 10);
		} else if (strstr(line, "\"state\"") && strstr(line, "\"state\"") < v) {
			d->files++;
			if (strstr(v, "\"primed\""))
				d->primed++;
			else if (strstr(v, "\"pending\"")) {
				d->pending++;
				pending = d->nwaiting < sizeof d->waiting / sizeof *d->waiting;
				if (pending)
					snprintf(d->waiting[d->nwaiting++].path, sizeof d->waiting[0].path, "%s", path);
			}
			else if (strstr(v, "\"nothing to prime\"") || strstr(v, "\"left alone\""))
				d->nothing++;
			else
				d->gave_up++;
		}
	}
	fclose(f);
	if (real && d->pid > 0) {
		/* that pid, still the command (not a pid reused since) */
		char c[64], comm[64];
		snprintf(c, sizeof c, "/proc/%ld/cmdline", d->pid);
		long n = et_tool_read(c, comm, sizeof comm);
		d->running = n > 0 && strstr(comm, "enormoustext") != NULL;
	}
}

void et_tool_host_read(struct et_tool_host *s, bool probe, const char *probe_dir, const char *ref)
{
	s->real = !strcmp(s->root, "/");
	if (!s->real)
		probe = false;
	read_settings(s);
	read_hostwide(s);
	et_tool_daemon_read(s->real ? "/" : s->root, &s->dm);
	s->thp.works = s->collapse.works = s->file.p.works = s->file.fresh = -1;
	if (probe) {
		probe_thp(s);
		probe_collapse(s);
		probe_file(s, probe_dir, ref);
	} else {
		const char *why = s->real ? "not probed (--no-probe)" : "not probed (--root)";
		snprintf(s->thp.detail, sizeof s->thp.detail, "%s", why);
		snprintf(s->collapse.detail, sizeof s->collapse.detail, "%s", why);
		snprintf(s->file.p.detail, sizeof s->file.p.detail, "%s", why);
	}
}
