/*
 * bigtext — the integration test program: a process with more than 8 MiB of
 * text in its executable and 8 MiB in libbigtext.so that checks, from the
 * inside, what libenormoustext did to it.
 *
 * Every run:
 *   1. calls every generated function of both objects and checks each result
 *      (bt_expect() in bigtext.h) -> one "results:" line with a checksum;
 *   2. finds both objects' executable PT_LOAD segments (dl_iterate_phdr) and
 *      compares their bytes in memory with the bytes of the file on disk;
 *   3. computes the eligible windows (H-aligned H-sized ranges wholly inside
 *      an executable segment, H = hpage_pmd_size) and, from /proc/self/smaps,
 *      how many of their bytes are backed by huge pages (AnonHugePages,
 *      FilePmdMapped, Private_Hugetlb + Shared_Hugetlb);
 *   4. checks the expectations given on the command line.
 * Output goes to stdout only (tests check that stderr holds nothing but the
 * library's lines).  Exit 0 = all checks passed, 1 = a check failed,
 * 2 = bad usage or the test set-up itself is broken.
 *
 * Options:
 *   --expect-huge P       >= P % of the eligible bytes of BOTH objects huge
 *   --expect-huge-exe P / --expect-huge-lib P     the same for one object
 *   --expect-none         no huge page in the text of either object
 *   --expect-none-exe / --expect-none-lib         the same for one object
 *   --kind anon|file|hugetlb|any   which huge pages --expect-huge* counts
 *                         (default any; --expect-none always counts all kinds)
 *   --expect-loaded / --expect-not-loaded   libenormoustext is / is not in
 *                         the process
 *   --check-api           (bigtext-linked only) check the public API's
 *                         figures against this program's own
 *   --hold S              after the checks, sleep S seconds (the text stays
 *                         mapped while another process looks at it)
 *   --run S               before the checks, keep calling every function
 *                         (every 20 ms) for S seconds: the text is running
 *                         while a deferred worker (ENORMOUSTEXT_DEFER) moves
 *                         it, and every check then sees what it did
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bigtext.h"

#ifdef BIGTEXT_WITH_API
#include <enormoustext.h>
#endif

#define MIB (1024.0 * 1024.0)
#define MAX_SEGS 8

struct seg {
	uintptr_t lo, hi;       /* page-rounded mapped range */
	uintptr_t start, end;   /* exact bias + p_vaddr .. + p_memsz */
	uint64_t off, filesz;
	uintptr_t win_lo, win_hi; /* eligible windows: [win_lo, win_hi), H-aligned */
};

struct obj {
	const char *role;       /* "exe" or "lib" */
	uintptr_t probe;        /* an address of code inside the object */
	int found;
	uintptr_t bias;
	const ElfW(Phdr) *phdr;
	int phnum;
	uintptr_t span_lo, span_hi; /* all PT_LOADs */
	char name[PATH_MAX];    /* dlpi_name */
	char path[PATH_MAX];    /* the file, from /proc/self/maps */
	struct seg seg[MAX_SEGS];
	int nseg;
	uint64_t text_bytes;    /* sum of p_memsz of executable PT_LOADs */
	uint64_t eligible;      /* bytes in eligible windows */
	/* huge bytes attributed to eligible windows, per kind */
	uint64_t anon, file, tlb, any;
	/* of the eligible windows: bytes shared with other processes, and Pss */
	uint64_t shared, pss;
	/* all huge bytes of the VMAs that overlap the executable segments */
	uint64_t touching;
	/* the whole executable segments [start, end): bytes, and bytes on huge
	 * pages (a VMA's huge bytes counted up to its overlap with them) */
	uint64_t seg_bytes, seg_huge;
};

static struct obj objs[2];
static int n_failed;
static char enormous_path[PATH_MAX]; /* libenormoustext, if loaded */

/* strncpy that always terminates (and no -Wrestrict false alarm from snprintf). */
static void copystr(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);

	if (len >= n)
		len = n - 1;
	memmove(dst, src, len);
	dst[len] = 0;
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bigtext: FAIL: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	n_failed++;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bigtext: ERROR: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
	exit(2);
}

/* Read a whole (proc/sys) file into a NUL-terminated malloc'd buffer. */
static char *slurp(const char *path)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			close(fd);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

static uint64_t read_pmd_size(void)
{
	const char *p = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size";
	char *s = slurp(p);
	unsigned long long v;

	if (!s || sscanf(s, "%llu", &v) != 1 || v < 4096 || (v & (v - 1)))
		die("cannot read the PMD size from %s", p);
	free(s);
	return v;
}

/* ---- objects ---------------------------------------------------------- */

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	int i, k;

	(void)size;
	(void)data;
	if (info->dlpi_name && strstr(info->dlpi_name, "libenormoustext"))
		copystr(enormous_path, sizeof enormous_path, info->dlpi_name);
	for (k = 0; k < 2; k++) {
		struct obj *o = &objs[k];
		int hit = 0;

		for (i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
			uintptr_t a = info->dlpi_addr + ph->p_vaddr;

			if (ph->p_type == PT_LOAD && o->probe >= a && o->probe < a + ph->p_memsz)
				hit = 1;
		}
		if (!hit)
			continue;
		if (o->found++)
			continue;
		o->bias = info->dlpi_addr;
		o->phdr = info->dlpi_phdr;
		o->phnum = info->dlpi_phnum;
		copystr(o->name, sizeof o->name, info->dlpi_name ? info->dlpi_name : "");
	}
	return 0;
}

static void setup_objects(uint64_t H, long page)
{
	int k, i;

	dl_iterate_phdr(phdr_cb, NULL);
	for (k = 0; k < 2; k++) {
		struct obj *o = &objs[k];

		if (o->found != 1)
			die("%s: found %d times by dl_iterate_phdr (want 1)", o->role, o->found);
		o->span_lo = UINTPTR_MAX;
		for (i = 0; i < o->phnum; i++) {
			const ElfW(Phdr) *ph = &o->phdr[i];
			uintptr_t a = o->bias + ph->p_vaddr;
			struct seg *s;

			if (ph->p_type != PT_LOAD)
				continue;
			if (a < o->span_lo)
				o->span_lo = a & ~(uintptr_t)(page - 1);
			if (a + ph->p_memsz > o->span_hi)
				o->span_hi = a + ph->p_memsz;
			if (!(ph->p_flags & PF_X))
				continue;
			if (o->nseg == MAX_SEGS)
				die("%s: too many executable segments", o->role);
			s = &o->seg[o->nseg++];
			s->start = a;
			s->end = a + ph->p_memsz;
			s->lo = a & ~(uintptr_t)(page - 1);
			s->hi = (s->end + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
			s->off = ph->p_offset;
			s->filesz = ph->p_filesz;
			/* Wholly inside [p_vaddr, p_vaddr + p_memsz): a window that
			 * would reach into the mapped rest of the last page (past
			 * p_memsz) is not counted, though it could be remapped. */
			s->win_lo = (s->start + H - 1) & ~(uintptr_t)(H - 1);
			s->win_hi = s->win_lo;
			while (s->win_hi + H <= s->end)
				s->win_hi += H;
			o->text_bytes += ph->p_memsz;
			o->eligible += s->win_hi - s->win_lo;
		}
		if (o->nseg == 0)
			die("%s: no executable PT_LOAD segment", o->role);
		/* 3 windows is the least an 8 MiB segment holds wherever it lands. */
		if (o->eligible < 3 * H)
			die("%s: only %" PRIu64 " eligible windows: the test program is too small to test anything",
			    o->role, o->eligible / H);
	}
}

/* The object's file: a file-backed VMA inside its span in /proc/self/maps
 * (after a remap the text VMAs are anonymous, the other segments are not). */
static void find_paths(void)
{
	char *maps = slurp("/proc/self/maps");
	char *line, *save = NULL;
	int k;

	if (!maps)
		die("cannot read /proc/self/maps: %s", strerror(errno));
	for (line = strtok_r(maps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long lo, hi;
		int pos = 0;
		char *p;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &pos) < 2 || pos == 0)
			continue;
		p = line + pos;
		if (*p != '/')
			continue;
		for (k = 0; k < 2; k++) {
			struct obj *o = &objs[k];

			if (!o->path[0] && lo < o->span_hi && hi > o->span_lo)
				copystr(o->path, sizeof o->path, p);
		}
	}
	free(maps);
	for (k = 0; k < 2; k++) {
		struct obj *o = &objs[k];

		if (o->path[0])
			continue;
		if (o->name[0] == '/') {
			copystr(o->path, sizeof o->path, o->name);
		} else if (k == 0) {
			ssize_t n = readlink("/proc/self/exe", o->path, sizeof o->path - 1);
			if (n > 0)
				o->path[n] = 0;
		}
		if (!o->path[0])
			die("%s: cannot find its file in /proc/self/maps", o->role);
	}
}

static void check_same_dir(void)
{
	char a[PATH_MAX], b[PATH_MAX];
	char *sa, *sb;

	if (!realpath(objs[0].path, a) || !realpath(objs[1].path, b))
		die("realpath: %s", strerror(errno));
	sa = strrchr(a, '/');
	sb = strrchr(b, '/');
	*sa = 0;
	*sb = 0;
	if (strcmp(a, b) != 0)
		die("libbigtext was loaded from %s, not from the executable's directory %s: "
		    "the copies under test are not what runs (check the RUNPATH)", b, a);
}

/* ---- results ---------------------------------------------------------- */

/* Call every function of both objects once: how many results were wrong
 * (the first few named with fail() when `say`), and their checksum. */
static unsigned call_all(uint64_t *sum_out, int say)
{
	const bt_fn *lt;
	unsigned nl = 0, i, bad = 0;
	uint64_t sum = 0;

	lt = bt_lib_table(&nl);
	for (i = 0; i < bt_exe_count; i++) {
		uint64_t x = bt_arg(BT_OBJ_EXE, i), r = bt_exe_table[i](x);
		if (r != bt_expect(BT_OBJ_EXE, i, x) && bad++ < 5 && say)
			fail("exe function %u returned %#" PRIx64 ", expected %#" PRIx64,
			     i, r, bt_expect(BT_OBJ_EXE, i, x));
		sum = (sum ^ r) * 0x100000001B3ull;
	}
	for (i = 0; i < nl; i++) {
		uint64_t x = bt_arg(BT_OBJ_LIB, i), r = lt[i](x);
		if (r != bt_expect(BT_OBJ_LIB, i, x) && bad++ < 5 && say)
			fail("lib function %u returned %#" PRIx64 ", expected %#" PRIx64,
			     i, r, bt_expect(BT_OBJ_LIB, i, x));
		sum = (sum ^ r) * 0x100000001B3ull;
	}
	*sum_out = sum;
	return bad;
}

static void check_results(void)
{
	unsigned nl = 0, bad;
	uint64_t sum;

	(void)bt_lib_table(&nl);
	bad = call_all(&sum, 1);
	if (bad)
		fail("%u of %u function results wrong", bad, bt_exe_count + nl);
	printf("bigtext: results: %u exe + %u lib functions called, %u wrong, checksum %016" PRIx64 "\n",
	       bt_exe_count, nl, bad, sum);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* --run S: keep running the text for S seconds of wall time — every
 * function of both objects, every 20 ms — so that the text is in use
 * while a deferred worker moves it; each round's results checked. */
static void keep_running(double secs)
{
	const struct timespec pause = { 0, 20 * 1000 * 1000 };
	double t0 = now_s();
	unsigned long rounds = 0, wrong_rounds = 0;
	uint64_t sum, first = 0;

	printf("bigtext: running for %g s\n", secs);
	fflush(stdout);
	do {
		unsigned bad = call_all(&sum, 0);
		if (rounds++ == 0)
			first = sum;
		if (bad || sum != first)
			wrong_rounds++;
		nanosleep(&pause, NULL);
	} while (now_s() - t0 < secs);
	if (wrong_rounds)
		fail("--run: %lu of %lu rounds of calls had wrong results", wrong_rounds, rounds);
	else
		printf("bigtext: ran every function every 20 ms for %g s: every round right\n", secs);
}

/* ---- memory == file ----------------------------------------------------- */

static void compare_with_file(struct obj *o)
{
	static unsigned char buf[1 << 20];
	uint64_t total = 0;
	int fd = open(o->path, O_RDONLY | O_CLOEXEC);
	int i;

	if (fd < 0) {
		fail("%s: open %s: %s", o->role, o->path, strerror(errno));
		return;
	}
	for (i = 0; i < o->nseg; i++) {
		const struct seg *s = &o->seg[i];
		uint64_t done = 0;

		while (done < s->filesz) {
			size_t want = s->filesz - done < sizeof buf ? (size_t)(s->filesz - done) : sizeof buf;
			ssize_t n = pread(fd, buf, want, (off_t)(s->off + done));
			const unsigned char *mem = (const unsigned char *)(s->start + done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				fail("%s: pread %s at %#" PRIx64 ": %s", o->role, o->path, s->off + done,
				     n < 0 ? strerror(errno) : "unexpected end of file");
				close(fd);
				return;
			}
			if (memcmp(mem, buf, (size_t)n) != 0) {
				size_t j = 0;
				while (mem[j] == buf[j])
					j++;
				fail("%s: text in memory differs from %s: first at address %#" PRIxPTR
				     " (file offset %#" PRIx64 "): memory %02x, file %02x",
				     o->role, o->path, (uintptr_t)(mem + j), s->off + done + j, mem[j], buf[j]);
				close(fd);
				return;
			}
			done += (uint64_t)n;
			total += (uint64_t)n;
		}
	}
	close(fd);
	printf("bigtext: %s: %.2f MiB of text in memory identical to %s\n", o->role, total / MIB, o->path);
}

/* ---- smaps ------------------------------------------------------------ */

struct vma {
	uintptr_t lo, hi;
	uint64_t anon, file, tlb; /* bytes */
	uint64_t shared, pss;     /* Shared_Clean + Shared_Dirty, Pss */
};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t overlap(uintptr_t a0, uintptr_t a1, uintptr_t b0, uintptr_t b1)
{
	uintptr_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
	return hi > lo ? hi - lo : 0;
}

/* A VMA may cover several windows (or be merged with its neighbours): its
 * huge bytes are attributed to the eligible windows it overlaps, at most as
 * many as the overlap. */
static void account_vma(const struct vma *v)
{
	int k, i;

	if (v->hi <= v->lo)
		return;
	for (k = 0; k < 2; k++) {
		struct obj *o = &objs[k];
		uint64_t ov = 0, touch = 0;

		for (i = 0; i < o->nseg; i++) {
			ov += overlap(v->lo, v->hi, o->seg[i].win_lo, o->seg[i].win_hi);
			touch += overlap(v->lo, v->hi, o->seg[i].lo, o->seg[i].hi);
		}
		if (touch)
			o->touching += v->anon + v->file + v->tlb;
		for (i = 0; i < o->nseg; i++) {
			uint64_t in_seg = overlap(v->lo, v->hi, o->seg[i].start, o->seg[i].end);
			o->seg_huge += min_u64(in_seg, v->anon + v->file + v->tlb);
		}
		if (!ov)
			continue;
		o->anon += min_u64(ov, v->anon);
		o->file += min_u64(ov, v->file);
		o->tlb += min_u64(ov, v->tlb);
		o->any += min_u64(ov, v->anon + v->file + v->tlb);
		o->shared += min_u64(ov, v->shared);
		o->pss += min_u64(ov, v->pss);
	}
}

static void read_smaps(void)
{
	char *smaps = slurp("/proc/self/smaps");
	char *line, *save = NULL;
	struct vma v = { 0, 0, 0, 0, 0, 0, 0 };

	if (!smaps)
		die("cannot read /proc/self/smaps: %s", strerror(errno));
	for (line = strtok_r(smaps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long lo, hi;
		unsigned long long kb;
		char c;

		if (sscanf(line, "%lx-%lx %c", &lo, &hi, &c) == 3 && strchr(line, '-') < strchr(line, ' ')) {
			account_vma(&v);
			memset(&v, 0, sizeof v);
			v.lo = lo;
			v.hi = hi;
		} else if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
			v.anon += kb * 1024;
		} else if (sscanf(line, "FilePmdMapped: %llu kB", &kb) == 1) {
			v.file += kb * 1024;
		} else if (sscanf(line, "Shared_Clean: %llu kB", &kb) == 1 ||
			   sscanf(line, "Shared_Dirty: %llu kB", &kb) == 1) {
			v.shared += kb * 1024;
		} else if (sscanf(line, "Pss: %llu kB", &kb) == 1) {
			v.pss += kb * 1024;
		} else if (sscanf(line, "Private_Hugetlb: %llu kB", &kb) == 1 ||
			   sscanf(line, "Shared_Hugetlb: %llu kB", &kb) == 1) {
			v.tlb += kb * 1024;
		}
	}
	account_vma(&v);
	free(smaps);
}

/* ---- the public API (bigtext-linked only) ------------------------------- */

#ifdef BIGTEXT_WITH_API
/* Hex GNU build-id of an object from its PT_NOTE segments, "" if none. */
static void build_id_of(const struct obj *o, char out[41])
{
	int i;

	out[0] = 0;
	for (i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *ph = &o->phdr[i];
		const unsigned char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(o->bias + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof *nh;
			const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
			unsigned j;

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= 20) {
				for (j = 0; j < nh->n_descsz; j++)
					sprintf(out + 2 * j, "%02x", desc[j]);
				return;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

static int same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

static void check_api(uint64_t H)
{
	struct enormoustext_stats st;
	struct enormoustext_object ob;
	uint64_t sum_text = 0, sum_elig = 0, sum_huge = 0, sum_remap = 0;
	unsigned objects_huge = 0;
	int n, i, k, rc, matched[2] = { 0, 0 };
	const char *ver = enormoustext_version();

	if (!ver || strcmp(ver, ENORMOUSTEXT_VERSION_STRING) != 0)
		fail("api: enormoustext_version() = \"%s\", header says \"%s\"", ver ? ver : "(null)",
		     ENORMOUSTEXT_VERSION_STRING);
	if ((rc = enormoustext_get_stats(NULL)) != -EINVAL)
		fail("api: enormoustext_get_stats(NULL) = %d, expected -EINVAL (%d)", rc, -EINVAL);
	memset(&st, 0, sizeof st);
	st.size = 4;
	if ((rc = enormoustext_get_stats(&st)) != -EINVAL)
		fail("api: enormoustext_get_stats(size=4) = %d, expected -EINVAL", rc);
	memset(&st, 0, sizeof st);
	st.size = sizeof st;
	if ((rc = enormoustext_get_stats(&st)) != 0) {
		fail("api: enormoustext_get_stats = %d, expected 0", rc);
		return;
	}
	st.backend[sizeof st.backend - 1] = 0;
	st.reason[sizeof st.reason - 1] = 0;
	printf("bigtext: api: ran %u, %u objects (%u huge), pmd %" PRIu64 ", text %.2f MiB, eligible %.2f MiB, "
	       "remapped %.2f MiB, huge %.2f MiB, %.3f ms, backend \"%s\", reason \"%s\"\n",
	       st.ran, st.objects, st.objects_huge, st.pmd_size, st.text_bytes / MIB, st.eligible_bytes / MIB,
	       st.remapped_bytes / MIB, st.huge_bytes / MIB, st.elapsed_ns / 1e6, st.backend, st.reason);
	if (st.ran != 1)
		fail("api: stats.ran = %u, expected 1", st.ran);
	if (st.pmd_size != H)
		fail("api: stats.pmd_size = %" PRIu64 ", hpage_pmd_size is %" PRIu64, st.pmd_size, H);
	if (st.objects < 2)
		fail("api: stats.objects = %u, expected >= 2 (bigtext and libbigtext.so at least)", st.objects);
	if (st.objects_huge < 2)
		fail("api: stats.objects_huge = %u, expected >= 2 (bigtext and libbigtext.so)", st.objects_huge);
	if (!st.backend[0] || strcmp(st.backend, "none") == 0)
		fail("api: stats.backend = \"%s\", expected the backend that did the work", st.backend);
	if (st.huge_bytes < objs[0].any + objs[1].any)
		fail("api: stats.huge_bytes = %" PRIu64 " < %" PRIu64 " that smaps shows huge in bigtext + libbigtext.so alone",
		     st.huge_bytes, objs[0].any + objs[1].any);
	if (st.huge_bytes > st.eligible_bytes)
		fail("api: stats.huge_bytes %" PRIu64 " > stats.eligible_bytes %" PRIu64, st.huge_bytes, st.eligible_bytes);
	if (st.text_bytes < objs[0].text_bytes + objs[1].text_bytes)
		fail("api: stats.text_bytes = %" PRIu64 " < %" PRIu64 " in bigtext + libbigtext.so alone",
		     st.text_bytes, objs[0].text_bytes + objs[1].text_bytes);
	if (st.elapsed_ns == 0)
		fail("api: stats.elapsed_ns = 0");

	n = enormoustext_object_count();
	if (n < 0 || (unsigned)n != st.objects)
		fail("api: enormoustext_object_count() = %d, stats.objects = %u", n, st.objects);
	if (n < 0)
		return;
	memset(&ob, 0, sizeof ob);
	ob.size = sizeof ob;
	if ((rc = enormoustext_get_object((unsigned)n, &ob)) != -ERANGE)
		fail("api: enormoustext_get_object(count=%d) = %d, expected -ERANGE (%d)", n, rc, -ERANGE);
	if (n > 0 && (rc = enormoustext_get_object(0, NULL)) != -EINVAL)
		fail("api: enormoustext_get_object(0, NULL) = %d, expected -EINVAL", rc);
	ob.size = 4;
	if (n > 0 && (rc = enormoustext_get_object(0, &ob)) != -EINVAL)
		fail("api: enormoustext_get_object(0, size=4) = %d, expected -EINVAL", rc);

	for (i = 0; i < n; i++) {
		memset(&ob, 0, sizeof ob);
		ob.size = sizeof ob;
		if ((rc = enormoustext_get_object((unsigned)i, &ob)) != 0) {
			fail("api: enormoustext_get_object(%d) = %d", i, rc);
			continue;
		}
		ob.path[sizeof ob.path - 1] = 0;
		ob.backend[sizeof ob.backend - 1] = 0;
		ob.reason[sizeof ob.reason - 1] = 0;
		ob.build_id[sizeof ob.build_id - 1] = 0;
		printf("bigtext: api: object %d: path \"%s\", build-id \"%s\", backend \"%s\", "
		       "windows %u/%u huge, text %.2f MiB at %#" PRIx64 "-%#" PRIx64 ", eligible %.2f MiB, "
		       "remapped %.2f MiB, huge %.2f MiB, reason \"%s\"\n",
		       i, ob.path, ob.build_id, ob.backend, ob.windows_huge, ob.windows, ob.text_bytes / MIB,
		       ob.text_start, ob.text_end, ob.eligible_bytes / MIB, ob.remapped_bytes / MIB,
		       ob.huge_bytes / MIB, ob.reason);
		sum_text += ob.text_bytes;
		sum_elig += ob.eligible_bytes;
		sum_huge += ob.huge_bytes;
		sum_remap += ob.remapped_bytes;
		objects_huge += ob.windows_huge > 0;
		if (ob.windows_huge > ob.windows)
			fail("api: object %d (%s): windows_huge %u > windows %u", i, ob.path, ob.windows_huge, ob.windows);
		if (ob.huge_bytes > ob.eligible_bytes)
			fail("api: object %d (%s): huge_bytes %" PRIu64 " > eligible_bytes %" PRIu64,
			     i, ob.path, ob.huge_bytes, ob.eligible_bytes);
		for (k = 0; k < 2; k++) {
			struct obj *o = &objs[k];
			const struct seg *s0 = &o->seg[0], *sl = &o->seg[o->nseg - 1];
			char bid[41];
			uint64_t ourw = o->eligible / H;

			if (!(ob.text_start < sl->hi && ob.text_end > s0->lo))
				continue;
			matched[k]++;
			printf("bigtext: api: object %d is the %s\n", i, o->role);
			if (!same_file(ob.path, o->path))
				fail("api: %s: path \"%s\" is not %s", o->role, ob.path, o->path);
			build_id_of(o, bid);
			if (strcmp(bid, ob.build_id) != 0)
				fail("api: %s: build_id \"%s\", the object's NT_GNU_BUILD_ID note is \"%s\"",
				     o->role, ob.build_id, bid);
			if (ob.text_start < s0->lo || ob.text_start > s0->start)
				fail("api: %s: text_start %#" PRIx64 ", first executable segment starts at %#" PRIxPTR,
				     o->role, ob.text_start, s0->start);
			if (ob.text_end < sl->end || ob.text_end > sl->hi)
				fail("api: %s: text_end %#" PRIx64 ", last executable segment ends at %#" PRIxPTR,
				     o->role, ob.text_end, sl->end);
			if (ob.text_bytes < o->text_bytes || ob.text_bytes > o->text_bytes + (uint64_t)o->nseg * 4096)
				fail("api: %s: text_bytes %" PRIu64 ", executable PT_LOADs hold %" PRIu64,
				     o->role, ob.text_bytes, o->text_bytes);
			/* The runtime may pad a segment's partial first and last windows
			 * (where the rest of them is free: at some load addresses); a
			 * padded window counts only its text bytes. */
			unsigned pads = ob.windows > ourw ? ob.windows - (unsigned)ourw : 0;
			if (ob.windows < ourw || pads > 2 * (unsigned)o->nseg)
				fail("api: %s: windows %u, this program counts %" PRIu64 " eligible windows",
				     o->role, ob.windows, ourw);
			if (ob.eligible_bytes < ourw * H || ob.eligible_bytes > (uint64_t)ob.windows * H ||
			    (!pads && ob.eligible_bytes != (uint64_t)ob.windows * H))
				fail("api: %s: eligible_bytes %" PRIu64 " for %u windows (%u padded) of %" PRIu64,
				     o->role, ob.eligible_bytes, ob.windows, pads, H);
			if (ob.huge_bytes == 0)
				fail("api: %s: huge_bytes = 0", o->role);
			if (ob.huge_bytes < o->any || ob.huge_bytes > o->touching)
				fail("api: %s: huge_bytes %" PRIu64 ", smaps shows %" PRIu64 " huge in its eligible windows "
				     "and %" PRIu64 " in all its text VMAs", o->role, ob.huge_bytes, o->any, o->touching);
			if (ob.huge_bytes > (uint64_t)ob.windows_huge * H ||
			    (!pads && (uint64_t)ob.windows_huge * H != ob.huge_bytes) ||
			    /* a huge padded window holds more than 0 bytes of text */
			    (pads && ob.huge_bytes + (uint64_t)pads * H <= (uint64_t)ob.windows_huge * H))
				fail("api: %s: windows_huge %u x %" PRIu64 " and huge_bytes %" PRIu64 " (%u padded)",
				     o->role, ob.windows_huge, H, ob.huge_bytes, pads);
			if (!ob.backend[0] || strcmp(ob.backend, "none") == 0)
				fail("api: %s: backend \"%s\" although it is huge", o->role, ob.backend);
			if (ob.windows_huge == ob.windows && ob.reason[0])
				fail("api: %s: all windows huge but reason = \"%s\" (expected \"\")", o->role, ob.reason);
			if (ob.elapsed_ns == 0)
				fail("api: %s: elapsed_ns = 0", o->role);
		}
	}
	for (k = 0; k < 2; k++)
		if (matched[k] != 1)
			fail("api: %s (%s) matches %d of the library's objects, expected 1", objs[k].role, objs[k].path,
			     matched[k]);
	if (sum_text != st.text_bytes)
		fail("api: objects' text_bytes add up to %" PRIu64 ", stats.text_bytes = %" PRIu64, sum_text, st.text_bytes);
	if (sum_elig != st.eligible_bytes)
		fail("api: objects' eligible_bytes add up to %" PRIu64 ", stats.eligible_bytes = %" PRIu64,
		     sum_elig, st.eligible_bytes);
	if (sum_huge != st.huge_bytes)
		fail("api: objects' huge_bytes add up to %" PRIu64 ", stats.huge_bytes = %" PRIu64, sum_huge, st.huge_bytes);
	if (sum_remap != st.remapped_bytes)
		fail("api: objects' remapped_bytes add up to %" PRIu64 ", stats.remapped_bytes = %" PRIu64,
		     sum_remap, st.remapped_bytes);
	if (objects_huge != st.objects_huge)
		fail("api: %u objects have windows_huge > 0, stats.objects_huge = %u", objects_huge, st.objects_huge);
}
#endif

/* ---- main ------------------------------------------------------------- */

static double parse_pct(const char *opt, const char *s)
{
	char *end;
	double v = strtod(s ? s : "", &end);

	if (!s || end == s || *end || v < 0 || v > 100)
		die("%s takes a percentage 0..100, not '%s'", opt, s ? s : "");
	return v;
}

static void usage(void)
{
	puts("usage: bigtext [--expect-huge P | --expect-huge-exe P | --expect-huge-lib P]\n"
	     "               [--expect-seg-huge-exe P] [--expect-seg-huge-lib P]\n"
	     "               [--expect-shared-lib P] [--expect-private-lib P] [--hold SECONDS] [--run SECONDS]\n"
	     "               [--expect-none | --expect-none-exe | --expect-none-lib]\n"
	     "               [--kind anon|file|hugetlb|any] [--expect-loaded | --expect-not-loaded]\n"
	     "               [--check-api]");
}

int main(int argc, char **argv)
{
	double want_huge[2] = { -1, -1 }, want_seg[2] = { -1, -1 }, want_shared[2] = { -1, -1 };
	double want_private[2] = { -1, -1 };
	int hold = 0;
	double run_secs = 0;
	int want_none[2] = { 0, 0 }, want_loaded = -1, api = 0, i, k;
	const char *kind = "any";
	uint64_t H;
	long page = sysconf(_SC_PAGESIZE);

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--expect-huge")) {
			want_huge[0] = want_huge[1] = parse_pct(a, v);
			i++;
		} else if (!strcmp(a, "--expect-huge-exe")) {
			want_huge[0] = parse_pct(a, v);
			i++;
		} else if (!strcmp(a, "--expect-huge-lib")) {
			want_huge[1] = parse_pct(a, v);
			i++;
		} else if (!strcmp(a, "--expect-seg-huge-exe")) {
			want_seg[0] = parse_pct(a, v);
			i++;
		} else if (!strcmp(a, "--expect-seg-huge-lib")) {
			want_seg[1] = parse_pct(a, v);
			i++;
		} else if (!strcmp(a, "--expect-shared-lib")) {
			want_shared[1] = parse_pct(a, v);
			i++;
		} else if (!strcmp(a, "--expect-private-lib")) {
			want_private[1] = parse_pct(a, v);
			i++;
		} else if (!strcmp(a, "--hold")) {
			hold = (int)parse_pct(a, v);
			i++;
		} else if (!strcmp(a, "--run")) {
			run_secs = parse_pct(a, v);
			i++;
		} else if (!strcmp(a, "--expect-none")) {
			want_none[0] = want_none[1] = 1;
		} else if (!strcmp(a, "--expect-none-exe")) {
			want_none[0] = 1;
		} else if (!strcmp(a, "--expect-none-lib")) {
			want_none[1] = 1;
		} else if (!strcmp(a, "--kind")) {
			if (!v || (strcmp(v, "anon") && strcmp(v, "file") && strcmp(v, "hugetlb") && strcmp(v, "any")))
				die("--kind takes anon, file, hugetlb or any, not '%s'", v ? v : "");
			kind = v;
			i++;
		} else if (!strcmp(a, "--expect-loaded")) {
			want_loaded = 1;
		} else if (!strcmp(a, "--expect-not-loaded")) {
			want_loaded = 0;
		} else if (!strcmp(a, "--check-api")) {
#ifdef BIGTEXT_WITH_API
			api = 1;
#else
			die("--check-api: this bigtext is not linked with libenormoustext (use bigtext-linked)");
#endif
		} else if (!strcmp(a, "--help")) {
			usage();
			return 0;
		} else {
			usage();
			die("unknown argument '%s'", a);
		}
	}
	for (k = 0; k < 2; k++)
		if (want_none[k] && want_huge[k] >= 0)
			die("both --expect-none and --expect-huge for the %s", k ? "lib" : "exe");

	objs[0].role = "exe";
	objs[0].probe = (uintptr_t)bt_exe_table[0];
	objs[1].role = "lib";
	{
		unsigned nl;
		objs[1].probe = (uintptr_t)bt_lib_table(&nl)[0];
	}
	H = read_pmd_size();
	setup_objects(H, page);
	find_paths();
	check_same_dir();
	if (run_secs > 0)
		keep_running(run_secs);

	check_results();
	for (k = 0; k < 2; k++)
		compare_with_file(&objs[k]);
	read_smaps();

	printf("bigtext: libenormoustext: %s%s\n", enormous_path[0] ? "loaded from " : "not loaded",
	       enormous_path);
	printf("bigtext: eligible-windows-total: %" PRIu64 "\n", (objs[0].eligible + objs[1].eligible) / H);
	for (k = 0; k < 2; k++) {
		struct obj *o = &objs[k];
		uint64_t counted = !strcmp(kind, "anon") ? o->anon : !strcmp(kind, "file") ? o->file
				 : !strcmp(kind, "hugetlb") ? o->tlb : o->any;
		double pct = 100.0 * (double)counted / (double)o->eligible;

		printf("bigtext: %s %s: text %.2f MiB in %d segment%s, %" PRIu64 " eligible windows (%.0f MiB); "
		       "huge (kind %s) %.0f of %.0f MiB = %.1f%% [anon %.0f, file %.0f, hugetlb %.0f MiB; "
		       "%.0f MiB in all its text VMAs]\n",
		       o->role, o->path, o->text_bytes / MIB, o->nseg, o->nseg == 1 ? "" : "s", o->eligible / H,
		       o->eligible / MIB, kind, counted / MIB, o->eligible / MIB, pct, o->anon / MIB, o->file / MIB,
		       o->tlb / MIB, o->touching / MIB);
		if (want_huge[k] >= 0 && pct < want_huge[k])
			fail("%s: %.1f%% of its eligible windows are huge (kind %s), expected >= %g%%", o->role, pct,
			     kind, want_huge[k]);
		for (i = 0; i < o->nseg; i++)
			o->seg_bytes += o->seg[i].end - o->seg[i].start;
		double seg_pct = 100.0 * (double)o->seg_huge / (double)o->seg_bytes;
		printf("bigtext: %s: whole executable segment%s: %.2f of %.2f MiB on huge pages = %.2f%%\n",
		       o->role, o->nseg == 1 ? "" : "s", o->seg_huge / MIB, o->seg_bytes / MIB, seg_pct);
		double sh_pct = 100.0 * (double)o->shared / (double)o->eligible;
		printf("bigtext: %s: eligible windows shared with other processes: %.1f of %.1f MiB = %.1f%%, "
		       "Pss %.2f MiB\n", o->role, o->shared / MIB, o->eligible / MIB, sh_pct, o->pss / MIB);
		if (want_shared[k] >= 0 && sh_pct < want_shared[k])
			fail("%s: %.1f%% of its eligible windows are shared with another process, expected >= %g%%",
			     o->role, sh_pct, want_shared[k]);
		if (want_private[k] >= 0 && 100.0 - sh_pct < want_private[k])
			fail("%s: %.1f%% of its eligible windows are shared with another process, expected <= %g%%",
			     o->role, sh_pct, 100.0 - want_private[k]);
		if (want_seg[k] >= 0 && seg_pct < want_seg[k])
			fail("%s: %.2f%% of its whole executable segment is huge, expected >= %g%%", o->role,
			     seg_pct, want_seg[k]);
		if (want_none[k] && o->touching)
			fail("%s: %.0f MiB of its text is on huge pages (anon %.0f, file %.0f, hugetlb %.0f MiB "
			     "in its eligible windows), expected none",
			     o->role, o->touching / MIB, o->anon / MIB, o->file / MIB, o->tlb / MIB);
	}
	if (want_loaded == 1 && !enormous_path[0])
		fail("libenormoustext is not loaded in this process (LD_PRELOAD or linking did not take)");
	if (want_loaded == 0 && enormous_path[0])
		fail("libenormoustext is loaded (%s) but this run must be without it", enormous_path);
#ifdef BIGTEXT_WITH_API
	if (api)
		check_api(H);
#else
	(void)api;
#endif
	if (n_failed)
		printf("bigtext: %d check%s FAILED\n", n_failed, n_failed == 1 ? "" : "s");
	else
		printf("bigtext: PASS\n");
	if (hold > 0) {
		/* keep the text mapped while another process looks at it */
		printf("bigtext: holding for %d s\n", hold);
		fflush(stdout);
		sleep((unsigned)hold);
	}
	return n_failed ? 1 : 0;
}
