/*
 * tools/enormoustext/prime.c — `enormoustext prime FILE...`: bring a
 * program's text into the page cache as huge folios, so that the kernel maps
 * it huge by itself.
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
 *   3. look at this process's own smaps: FilePmdMapped says it worked.
 *
 * --check does step 1 only and changes nothing: a window whose pages are
 * not all cached is not read (mincore says so), so it is reported as
 * "not cached" rather than brought in.
 *
 * Owns: `prime`: the windows of a file's text, their state in the page
 * cache, the priming of each, and the processes that map the file.
 * May call: core (smaps, sysinfo, json), common.c.
 * Never: changes a file, or drops a page a process has mapped or that is
 * dirty (POSIX_FADV_DONTNEED never does).
 */
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static void help(FILE *f)
{
	fprintf(f,
	        "usage: enormoustext prime [--check] [--json] FILE...\n"
	        "\n"
	        "Bring the executable text of each ELF FILE (program or shared library) into\n"
	        "the page cache as huge (PMD-sized) folios, so that every process that maps\n"
	        "it gets huge text straight from the file: nothing copied, the pages shared.\n"
	        "Works on the windows of the text whose file offset and load address agree\n"
	        "modulo the huge page size (linked with enormous.ld, or shared libraries of\n"
	        "2 MiB or more).  The file's contents are never changed; no root needed.\n"
	        "\n"
	        "  -c, --check   only report the current state; read and drop nothing\n"
	        "  -j, --json    one JSON document on stdout\n"
	        "  -h, --help    this help\n"
	        "\n"
	        "Per file: how many windows are now huge in the page cache, and for the\n"
	        "others why not (not congruent, pages held by running processes - named by\n"
	        "PID -, filesystem without huge folios, file open for writing).\n"
	        "\n"
	        "Exit status: 0 every FILE was examined; 1 a FILE could not be read or is not\n"
	        "an ELF file with an executable segment; 2 usage error.\n");
}

enum win_state {
	W_HUGE_BEFORE,      /* already huge in the cache */
	W_PRIMED,           /* huge now, by this run */
	W_NOT_CACHED,       /* --check: not (wholly) in the cache */
	W_SMALL,            /* --check: cached in small pages */
	W_HELD,             /* small pages that a running process keeps mapped */
	W_NO_FOLIOS,        /* read back, still small: no huge folios on this filesystem */
	W_WRITING,          /* the file is open for writing: left alone */
	W_FAILED,           /* a system call failed (errno in err) */
};

struct file_result {
	const char *path;
	uint64_t text_off, text_len;        /* executable segment in the file */
	uint64_t windows;                   /* whole windows the text can use at run time */
	bool congruent;
	bool random_base;                   /* a PIE executable with p_align < H */
	uint64_t max_align;
	uint64_t n[W_FAILED + 1];
	int err;                            /* errno of the first W_FAILED */
	pid_t pids[8];                      /* processes that map the file */
	int npids;
	bool more_pids;
};

struct xseg {
	uint64_t off, len, vaddr;
};
#define MAX_XSEGS 16

/* The executable PT_LOADs of an ELF file (a linker may split the text in
 * several): how many (> 0), or -1 with a message. */
static int exec_segments(int fd, const char *path, struct xseg *xs, bool *pie, uint64_t *max_align)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		et_tool_err("libelf: %s", elf_errmsg(-1));
		return -1;
	}
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		et_tool_err("%s: not an ELF file", path);
		if (e)
			elf_end(e);
		return -1;
	}
	size_t n = 0;
	int found = 0;
	GElf_Ehdr eh;
	struct stat st;
	if (!gelf_getehdr(e, &eh) || fstat(fd, &st) != 0 ||
	    eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize > (uint64_t)st.st_size) {
		et_tool_err("%s: truncated (its program headers lie past the end of the file)", path);
		elf_end(e);
		return -1;
	}
	if (elf_getphdrnum(e, &n) != 0) {
		et_tool_err("%s: unreadable program headers (truncated?): %s", path, elf_errmsg(-1));
		elf_end(e);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph)) {
			et_tool_err("%s: unreadable program header %zu (truncated?)", path, i);
			elf_end(e);
			return -1;
		}
		if (ph.p_type == PT_INTERP && eh.e_type == ET_DYN)
			*pie = true;
		if (ph.p_type == PT_LOAD && ph.p_align > *max_align)
			*max_align = ph.p_align;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && ph.p_filesz > 0 && found < MAX_XSEGS) {
			xs[found].off = ph.p_offset;
			xs[found].len = ph.p_filesz;
			xs[found].vaddr = ph.p_vaddr;
			found++;
		}
	}
	elf_end(e);
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

/* Processes (other than this one) that map the file: from /proc/PID/maps,
 * matched on device and inode. */
static void find_holders(struct file_result *r, const struct stat *st)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	struct dirent *de;
	char want[64];
	snprintf(want, sizeof want, " %02x:%02x %llu", major(st->st_dev), minor(st->st_dev),
	         (unsigned long long)st->st_ino);
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
			if (q && !strncmp(q, want, strlen(want)) && q[strlen(want)] == ' ')
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

/* One window [off, off + H) of the file: its state, priming it unless check. */
static enum win_state do_window(int fd, uint64_t off, uint64_t H, bool check, bool tmpfs, int *err)
{
	/* An H-aligned place for an H-sized mapping. */
	char *r = mmap(NULL, 2 * H, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED) {
		*err = errno;
		return W_FAILED;
	}
	char *a = (char *)(((uintptr_t)r + H - 1) & ~(uintptr_t)(H - 1));
	enum win_state s = W_FAILED;
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
			s = W_HUGE_BEFORE;
			goto out;
		}
	}
	if (check) {
		s = all ? W_SMALL : W_NOT_CACHED;
		goto out;
	}
	/* Drop this mapping's pages first (ours would keep them), then the cache's. */
	munmap(a, H);
	if (mmap(a, H, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)off) != a) {
		*err = errno;
		goto out;
	}
	if (any || all)
		posix_fadvise(fd, (off_t)off, (off_t)H, POSIX_FADV_DONTNEED);
	/* Pages that stayed are held by someone (mapped, or dirty). */
	bool held = false;
	if (mincore(a, H, vec) == 0)
		for (size_t i = 0; i < npages && !held; i++)
			held = vec[i] & 1;
	if (madvise(a, H, MADV_HUGEPAGE) != 0 || madvise(a, H, MADV_POPULATE_READ) != 0) {
		*err = errno;
		goto out;
	}
	long long b = pmd_mapped((uint64_t)(uintptr_t)a);
	if (b < 0) {
		*err = (int)-b;
		goto out;
	}
	/* tmpfs pages are the only copy of the file: they never drop, and
	 * whether they are huge is the mount's (huge=) and shmem_enabled's
	 * business, not the reader's */
	s = b >= (long long)H ? W_PRIMED : held && !tmpfs ? W_HELD : W_NO_FOLIOS;
out:
	free(vec);
	munmap(r, 2 * H);
	return s;
}

static int prime_file(const char *path, uint64_t H, bool check, struct file_result *res)
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
				res->n[W_WRITING]++;
				continue;
			}
			int err = 0;
			enum win_state s = do_window(fd, off, H, check, tmpfs, &err);
			res->n[s]++;
			if (s == W_FAILED && !res->err)
				res->err = err;
		}
	}
	if (res->congruent && (res->n[W_HELD] || res->n[W_SMALL]))
		find_holders(res, &st);
	close(fd);
	return 0;
}

int et_tool_prime_state(const char *path, uint64_t H, struct et_prime_state *st)
{
	struct file_result r;
	memset(st, 0, sizeof *st);
	if (prime_file(path, H, true, &r) != 0)
		return -1;
	st->windows = r.windows;
	st->congruent = r.congruent;
	st->huge = r.n[W_HUGE_BEFORE] + r.n[W_PRIMED];
	st->not_cached = r.n[W_NOT_CACHED];
	st->small = r.n[W_SMALL] + r.n[W_HELD];
	return 0;
}

static const char *state_key[W_FAILED + 1] = {
	"huge_before", "primed", "not_cached", "small", "held", "no_huge_folios", "open_for_writing",
	"failed",
};

static void print_text(const struct file_result *r, bool check, uint64_t H)
{
	char hb[16];
	et_tool_size(hb, sizeof hb, H);
	uint64_t huge = r->n[W_HUGE_BEFORE] + r->n[W_PRIMED];
	printf("%s: %llu of %llu window%s of %s huge in the page cache", r->path,
	       (unsigned long long)(r->congruent ? huge : 0), (unsigned long long)r->windows,
	       et_tool_s(r->windows), hb);
	if (!check && r->congruent)
		printf(" (%llu primed now, %llu already)", (unsigned long long)r->n[W_PRIMED],
		       (unsigned long long)r->n[W_HUGE_BEFORE]);
	printf("\n");
	if (!r->windows) {
		char tb[16];
		printf("  no whole %s window in its text (%s of text)\n", hb,
		       et_tool_size(tb, sizeof tb, r->text_len));
		return;
	}
	if (!r->congruent) {
		printf("  not congruent: its text's file offset and address differ modulo %s, so the\n"
		       "  kernel can never map it huge from the file (link with enormous.ld, or\n"
		       "  -z max-page-size=%#llx -z separate-code)\n", hb, (unsigned long long)H);
		return;
	}
	if (r->random_base)
		printf("  a PIE executable with p_align %#llx: it loads at a random address where its windows\n"
		       "  line up with 2M pages only by chance; relink with -z max-page-size=%#llx (or enormous.ld)\n",
		       (unsigned long long)r->max_align, (unsigned long long)H);
	if (r->n[W_NOT_CACHED])
		printf("  %llu not (wholly) cached: they come in huge when read through a huge mapping\n",
		       (unsigned long long)r->n[W_NOT_CACHED]);
	if (r->n[W_SMALL])
		printf("  %llu cached in small pages\n", (unsigned long long)r->n[W_SMALL]);
	if (r->n[W_HELD])
		printf("  %llu held in small pages by %s\n", (unsigned long long)r->n[W_HELD],
		       r->npids ? "running processes" : "someone (mapped by a process this user cannot see?)");
	if (r->npids) {
		printf("  mapped by PID");
		for (int i = 0; i < r->npids; i++)
			printf(" %d", (int)r->pids[i]);
		printf("%s (restart them, then prime again)\n", r->more_pids ? " and more" : "");
	}
	if (r->n[W_NO_FOLIOS])
		printf("  %llu stayed small after reading back: this filesystem gives no huge folios\n",
		       (unsigned long long)r->n[W_NO_FOLIOS]);
	if (r->n[W_WRITING])
		printf("  %llu left alone: the file is open for writing by a process\n",
		       (unsigned long long)r->n[W_WRITING]);
	if (r->n[W_FAILED])
		printf("  %llu failed: %s\n", (unsigned long long)r->n[W_FAILED], strerror(r->err));
}

static void print_json(struct et_json *j, const struct file_result *r)
{
	et_json_obj(j, NULL);
	et_json_str(j, "path", r->path);
	et_json_u64(j, "text_offset", r->text_off);
	et_json_u64(j, "text_bytes", r->text_len);
	et_json_bool(j, "congruent", r->congruent);
	et_json_bool(j, "random_load_address", r->random_base);
	et_json_u64(j, "windows", r->windows);
	et_json_u64(j, "huge", r->n[W_HUGE_BEFORE] + r->n[W_PRIMED]);
	for (int s = 0; s <= W_FAILED; s++)
		et_json_u64(j, state_key[s], r->n[s]);
	if (r->n[W_FAILED])
		et_json_str(j, "error", strerror(r->err));
	et_json_arr(j, "pids");
	for (int i = 0; i < r->npids; i++)
		et_json_i64(j, NULL, r->pids[i]);
	et_json_arr_end(j);
	et_json_obj_end(j);
}

int et_cmd_prime(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool check = false, json = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:cjh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': check = true; break;
		case 'j': json = true; break;
		case 'h': help(stdout); return ET_EXIT_OK;
		default: return et_tool_bad_option(c, argv, optind);
		}
	}
	if (optind >= argc)
		return et_tool_usage("give at least one FILE");
	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "/");
	const uint64_t H = si.pmd_size;
	int rc = ET_EXIT_OK;
	struct et_json j;
	if (json) {
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_u64(&j, "pmd_size", H);
		et_json_bool(&j, "check", check);
		et_json_arr(&j, "files");
	}
	for (int i = optind; i < argc; i++) {
		struct file_result r;
		if (prime_file(argv[i], H, check, &r) != 0) {
			rc = ET_EXIT_BAD;
			continue;
		}
		if (json)
			print_json(&j, &r);
		else
			print_text(&r, check, H);
	}
	if (json) {
		et_json_arr_end(&j);
		et_json_obj_end(&j);
		et_json_end(&j);
	}
	return rc;
}
