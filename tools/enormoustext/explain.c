/*
 * tools/enormoustext/explain.c — `enormoustext status --explain [PROGRAM]`:
 * what to do on this host, in sentences, each one derived from a fact that
 * `status` has read or probed (host.h), never printed unconditionally.
 *
 * With a PROGRAM: the program, its interpreter and the libraries it loads
 * (as its own loader lists them: loader.c, the answer `enable --prime`
 * uses too), each planned by `check`'s analysis (et_check_summary: the
 * library's own window rule), each file-backed one looked at in the page
 * cache as `prime --check` looks (et_tool_prime_state).  Per object, a window is
 *   - zero-copy: huge in the page cache already, or not cached at all on a
 *     file system that gives huge folios (the file backend's one fault
 *     reads it in as one folio);
 *   - copied: everything else the planner allows (and padded tails), by
 *     the first copying backend of `auto`'s order;
 * and the rest of the text stays small.  The start-up cost is the copied
 * windows times the time of one copy measured here, now (a 2 MiB memcpy
 * into memory made the way that backend makes it); the memory cost is the
 * copied bytes, private to each process.
 *
 * Owns: the sentences of --explain and the plan of a PROGRAM.
 * May call: host.c (the facts, the order of `auto`), check_elf.c
 * (et_check_summary), pagecache.c (et_tool_prime_state), loader.c (the
 * libraries), elffile.c (who needs a library: DT_NEEDED), core (smaps,
 * json, memcg figures in host.h; mm_flags), common.c.
 * Never: changes a setting, a file or the page cache (prime's check mode
 * reads nothing that is not cached; the loader maps the libraries and runs
 * none of their code).
 */
#include "explain.h"
#include "check_elf.h"
#include "elffile.h"
#include "loader.h"
#include "pagecache.h"

#include "core/mm_flags.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>


/* ---------------------------------------------------------- sentences */

struct sentence {
	const char *topic;       /* "thp", "defrag", "hugetlb", ... */
	const char *verdict;     /* "fine", "advice", "note", "warning" */
	char text[768];
	char command[512];       /* the command it suggests, "" none */
};

struct sentences {
	struct sentence s[32];
	size_t n;
};

static void say(struct sentences *ss, const char *topic, const char *verdict, const char *command,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void say(struct sentences *ss, const char *topic, const char *verdict, const char *command,
                const char *fmt, ...)
{
	if (ss->n >= sizeof ss->s / sizeof *ss->s)
		return;
	struct sentence *s = &ss->s[ss->n++];
	s->topic = topic;
	s->verdict = verdict;
	snprintf(s->command, sizeof s->command, "%s", command ? command : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->text, sizeof s->text, fmt, ap);
	va_end(ap);
}

static const struct size_entry *pmd_pool(const struct et_tool_host *s)
{
	for (size_t i = 0; i < s->npools; i++)
		if (s->pools[i].size == s->si.pmd_size)
			return &s->pools[i];
	return NULL;
}

static bool kernel_before(const struct et_tool_host *s, int major, int minor)
{
	return s->kmajor >= 0 && (s->kmajor < major || (s->kmajor == major && s->kminor < minor));
}

static const char *not_probed(const struct et_tool_host *s)
{
	return s->real ? "not probed (--no-probe)" : "not probed (--root)";
}

static void host_sentences(const struct et_tool_host *s, struct sentences *ss)
{
	char hl[16], a[16], b[16], c[16];
	et_tool_mib(s->si.pmd_size, hl, sizeof hl);
	const char *kernel = s->kernel[0] ? s->kernel : "unknown";

	if (s->si.thp_disabled_process)
		say(ss, "process", "warning", NULL, "THP is disabled for this process (PR_SET_THP_DISABLE, "
		    "inherited from what started it): neither THP nor MADV_COLLAPSE can give the text of "
		    "programs started from here huge pages, only the hugetlb pool can; start them from "
		    "a process without that flag");

	/* THP mode */
	if (!s->thp_available || !s->enabled[0]) {
		say(ss, "thp", "warning", NULL, "no transparent huge pages on this kernel (no readable "
		    THP_DIR "/enabled): only the hugetlb pool can put text on huge pages");
	} else if (!strcmp(s->enabled, "never")) {
		if (kernel_before(s, 6, 1))
			say(ss, "thp", "warning", "enormoustext setup --thp madvise --persist",
			    "THP is never and Linux %s has no MADV_COLLAPSE (it came in 6.1): nothing but the "
			    "hugetlb pool can move text; `enormoustext setup --thp madvise --persist`", kernel);
		else if (s->collapse.works == 1)
			say(ss, "thp", "fine", NULL, "THP is never: the library uses MADV_COLLAPSE (Linux >= "
			    "6.1, this is %s), which works whatever the policy (probed: it works here) — fine",
			    kernel);
		else if (s->collapse.works == 0)
			say(ss, "thp", "warning", "enormoustext setup --thp madvise --persist",
			    "THP is never and MADV_COLLAPSE does not work here (%s): only the hugetlb pool can "
			    "move text; `enormoustext setup --thp madvise --persist`", s->collapse.detail);
		else
			say(ss, "thp", "note", NULL, "THP is never: the library relies on MADV_COLLAPSE (Linux "
			    ">= 6.1, this is %s), whatever the policy; whether it works was %s", kernel,
			    not_probed(s));
	} else if (!strcmp(s->enabled, "madvise")) {
		say(ss, "thp", "fine", NULL, "THP is madvise: the library asks per mapping "
		    "(MADV_HUGEPAGE), no other memory changes — fine");
	} else if (!strcmp(s->enabled, "always")) {
		say(ss, "thp", "note", "enormoustext setup --thp madvise --persist",
		    "THP is always: the library works with it, but every process's large anonymous "
		    "memory may get huge pages too, not only text (more memory for some programs); "
		    "madvise keeps them to what asks: `enormoustext setup --thp madvise --persist`");
	} else {
		say(ss, "thp", "note", NULL, "THP is %s (not a policy this command knows): the library "
		    "treats it as never and relies on MADV_COLLAPSE", s->enabled);
	}
	bool faults = !strcmp(s->enabled, "madvise") || !strcmp(s->enabled, "always");
	if (faults && !s->si.thp_disabled_process && s->thp.works == 0)
		say(ss, "thp", "note", NULL, "a MADV_HUGEPAGE fault got small pages just now (%s): copies "
		    "rely on MADV_COLLAPSE, which compacts by itself", s->thp.detail);
	if (faults && !s->si.thp_disabled_process && s->collapse.works == 0)
		say(ss, "thp", "note", NULL, "MADV_COLLAPSE does not work here (%s)%s: copies rely on "
		    "huge pages at the first fault", s->collapse.detail,
		    kernel_before(s, 6, 1) ? " — it came in Linux 6.1" : "");

	/* defrag */
	if (s->defrag[0] && s->enabled[0]) {
		const char *d = s->defrag;
		if (!faults)
			say(ss, "defrag", "fine", NULL, "defrag=%s does not matter while THP is %s: "
			    "MADV_COLLAPSE compacts memory by itself — fine", d, s->enabled);
		else if (!strcmp(d, "never") || !strcmp(d, "defer"))
			say(ss, "defrag", "advice", "enormoustext setup --defrag defer+madvise --persist",
			    "defrag=%s: a fault does not wait for compaction, so expect fewer huge pages when "
			    "memory is fragmented (the library then tries MADV_COLLAPSE first); "
			    "`enormoustext setup --defrag defer+madvise --persist`", d);
		else if (!strcmp(d, "madvise") || !strcmp(d, "defer+madvise"))
			say(ss, "defrag", "fine", NULL, "defrag=%s: a MADV_HUGEPAGE fault may compact memory "
			    "to get its huge page, other processes are not made to wait — fine", d);
		else if (!strcmp(d, "always"))
			say(ss, "defrag", "note", "enormoustext setup --defrag defer+madvise --persist",
			    "defrag=always: every THP fault of every process may stall on compaction; "
			    "defer+madvise keeps that to mappings that ask: `enormoustext setup --defrag "
			    "defer+madvise --persist`");
	}

	/* the hugetlb pool */
	const struct size_entry *p = pmd_pool(s);
	if (!s->npools) {
		say(ss, "hugetlb", "note", NULL, "no hugetlb pool on this kernel (no " HUGETLB_DIR "): "
		    "the hugetlb backend is not used");
	} else if (!p || p->total < 0) {
		say(ss, "hugetlb", "note", NULL, "no hugetlb pool of %s pages (the PMD size): the hugetlb "
		    "backend is not used", hl);
	} else if (p->total == 0) {
		say(ss, "hugetlb", "fine", "enormoustext setup --hugetlb 1G --persist",
		    "the hugetlb pool is empty: the hugetlb backend is not used (fine unless you want it: "
		    "`enormoustext setup --hugetlb 1G --persist`)");
	} else {
		uint64_t bytes = (uint64_t)p->total * p->size;
		if (s->si.hugetlb_free > 0)
			say(ss, "hugetlb", "note", NULL, "the hugetlb pool has %ld free of %ld %s pages "
			    "(%s in all): auto uses it last, after the THP backends, and a page it takes is "
			    "taken from what the pool was set up for", s->si.hugetlb_free, p->total, hl,
			    et_tool_size(a, sizeof a, bytes));
		else
			say(ss, "hugetlb", "note", NULL, "the hugetlb pool (%ld %s pages) has no free page "
			    "that is not reserved now: the hugetlb backend cannot be used", p->total, hl);
		if (s->mem_total && bytes * 4 > s->mem_total)
			say(ss, "hugetlb", "warning", NULL, "the hugetlb pools hold %s, %.0f%% of MemTotal "
			    "(%s): memory nothing but hugetlb mappings can use",
			    et_tool_size(a, sizeof a, bytes), 100.0 * (double)bytes / (double)s->mem_total,
			    et_tool_size(b, sizeof b, s->mem_total));
	}

	/* the page cache of the file system */
	const struct file_probe *f = &s->file;
	char other[PATH_MAX + 96] = "";
	if (f->p.works >= 0 && !f->same_fs)
		snprintf(other, sizeof other, " (%s is not on the file system of the programs: there it "
		         "may differ)", f->dir);
	if (f->p.works == 1)
		say(ss, "file", "advice", "enormoustext prime PROGRAM LIBRARY...",
		    "%s at %s gives the page cache huge folios: text there can be mapped huge from the "
		    "page cache, shared by every process, with no copy; the library primes what it "
		    "copies by default (ENORMOUSTEXT_PRIME=auto), and `enormoustext prime PROGRAM "
		    "LIBRARY...` does it ahead of the first run%s",
		    f->fs, f->dir, other);
	else if (f->p.works == 0)
		say(ss, "file", "note", NULL, "%s at %s gives the page cache no huge folios: text is "
		    "copied into anonymous memory, which costs each process the size of what it moves "
		    "(private copies)%s", f->fs, f->dir, other);
	else
		say(ss, "file", "note", NULL, "whether the file system gives the page cache huge folios "
		    "(zero-copy text) was %s", not_probed(s));
	if (!strcmp(f->fs, "tmpfs"))
		say(ss, "shmem", "note", NULL, "%s is tmpfs: its files are shmem, huge only as the "
		    "mount's huge= option and shmem_enabled=%s allow", f->dir,
		    s->shmem[0] ? s->shmem : "unknown");

	/* memory cgroup */
	const struct et_memcg *m = &s->memcg;
	if (m->garbled)
		say(ss, "memcg", "warning", NULL, "the memory cgroup %s has limit files this command "
		    "cannot read: the library copies nothing there", m->path);
	else if (m->budget == ET_MEMCG_UNLIMITED)
		say(ss, "memcg", "fine", NULL, "no memory cgroup limit over this process: copies are not "
		    "held back (a service runs in its own cgroup, which may have one: MemoryMax=)");
	else
		say(ss, "memcg", "note", NULL, "this process's memory cgroup (%s, cgroup v%d) allows %s "
		    "more (limit %s, usage %s, %s kept back): the library copies at most that much text "
		    "and leaves the rest small", m->path[0] ? m->path : "/", m->version,
		    et_tool_size(a, sizeof a, m->budget), et_tool_size(b, sizeof b, m->limit),
		    et_tool_size(c, sizeof c, m->usage), et_tool_size(hl, sizeof hl, m->margin));

	/* auto */
	char why[1024], chain[96];
	et_tool_auto_chain(s, "nothing", chain, sizeof chain);
	et_tool_auto_reason(s, why, sizeof why);
	say(ss, "auto", s->nchain ? "note" : "warning", NULL, "auto would try %s: %s", chain, why);
}

/* ------------------------------------------------------------ objects */

struct obj {
	char path[PATH_MAX];
	char needed_by[PATH_MAX];
	dev_t dev;
	ino_t ino;
	struct et_check_summary cs;
	struct et_prime_state ps;
	bool have_ps;
	char fs[32];
	int folios;                 /* the page cache gives huge folios: -1 unknown */
	bool file_backed;           /* can be mapped huge from the file */
	uint64_t windows, zero_copy, copy, small;
	uint64_t primeable;         /* copied windows that prime would make zero-copy */
};

struct plan {
	struct obj *o;
	size_t n, cap;
	char missing[8][96];
	size_t nmissing, more_missing;
	char loader_err[1024];      /* why the loader could not be asked ("": it was) */
};

/* Add path (needed by `by`); the index, or -1 when it is there already or
 * the table is full. */
static long add_obj(struct plan *pl, const char *path, const char *by)
{
	struct stat st;
	char by_copy[PATH_MAX];
	snprintf(by_copy, sizeof by_copy, "%s", by ? by : "");   /* by may point into pl->o */
	if (stat(path, &st) != 0)
		return -1;
	for (size_t i = 0; i < pl->n; i++)
		if (pl->o[i].dev == st.st_dev && pl->o[i].ino == st.st_ino)
			return -1;
	if (pl->n == pl->cap) {
		size_t nc = pl->cap ? pl->cap * 2 : 16;
		if (nc > 1024)
			return -1;
		struct obj *no = realloc(pl->o, nc * sizeof *no);
		if (!no)
			return -1;
		pl->o = no;
		pl->cap = nc;
	}
	struct obj *o = &pl->o[pl->n];
	memset(o, 0, sizeof *o);
	snprintf(o->path, sizeof o->path, "%s", path);
	memcpy(o->needed_by, by_copy, sizeof o->needed_by);
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	o->folios = -1;
	return (long)pl->n++;
}

struct names {
	const char *name;
	bool found;
};

static void names_one(void *ctx, const char *name)
{
	struct names *q = ctx;
	q->found |= !strcmp(q->name, name);
}

/* Which object of the plan needs name: the first (in the loader's order,
 * breadth-first as the plan's) whose DT_NEEDED names it; NULL none. */
static const char *needed_by(const struct plan *pl, const char *name)
{
	for (size_t i = 0; i < pl->n; i++) {
		struct et_tool_elf x;
		struct names q = { name, false };
		if (et_tool_elf_open(&x, pl->o[i].path, 0) != 0)
			continue;
		et_tool_elf_needed(&x, names_one, &q);
		et_tool_elf_close(&x);
		if (q.found)
			return pl->o[i].path;
	}
	return NULL;
}

/* check_elf's analysis of one object of the plan; a file it cannot parse
 * is said as status's own line ("enormoustext status: PATH: why", never
 * `check`'s prefix: the user ran status), naming what loads it, with the
 * words the analysis gave with its code.  0 or -1. */
static int summary(const char *path, const char *loaded_by, const struct et_check_opts *co,
                   struct et_check_summary *cs)
{
	struct et_check_failure f;
	if (et_check_summary(path, co, cs, &f) == 0)
		return 0;
	const char *why = f.words[0] ? f.words : et_check_reason(f.why)->sentence;
	if (loaded_by)
		et_tool_err("%s (loaded by %s): %s: left out of the plan", path, loaded_by, why);
	else
		et_tool_err("%s: %s", path, why);
	return -1;
}

/* The program, its interpreter and the libraries it loads (as its own
 * loader lists them), in load order. */
static int collect(struct plan *pl, const char *program, const struct et_check_opts *co)
{
	if (add_obj(pl, program, NULL) != 0)
		return -1;
	if (summary(program, NULL, co, &pl->o[0].cs) != 0)
		return -1;
	if (pl->o[0].cs.interp[0]) {
		long i = add_obj(pl, pl->o[0].cs.interp, program);
		if (i > 0 && summary(pl->o[i].path, program, co, &pl->o[i].cs) != 0)
			pl->n--;
	}
	struct et_tool_libs libs;
	if (et_tool_libraries(program, pl->o[0].cs.interp, &libs, pl->loader_err, sizeof pl->loader_err) != 0)
		return 0;      /* the program and its interpreter only: a sentence says why */
	for (size_t k = 0; k < libs.n; k++) {
		const struct et_tool_lib *l = &libs.v[k];
		if (!l->path) {
			bool seen = false;
			for (size_t m = 0; m < pl->nmissing; m++)
				seen |= !strcmp(pl->missing[m], l->name);
			if (!seen && pl->nmissing < 8)
				snprintf(pl->missing[pl->nmissing++], sizeof pl->missing[0], "%s", l->name);
			else if (!seen)
				pl->more_missing++;
			continue;
		}
		/* the loader itself (and ld.so.preload's) come by their paths: a
		 * DT_NEEDED names the loader by its file name */
		const char *base = strrchr(l->name, '/');
		long j = add_obj(pl, l->path, needed_by(pl, l->needed || !base ? l->name : base + 1));
		if (j > 0 && summary(pl->o[j].path, program, co, &pl->o[j].cs) != 0)
			pl->n--;     /* said why; not counted */
	}
	et_tool_libs_free(&libs);
	return 0;
}

/* --------------------------------------------------------- copy rate */

static long long anon_huge_at(uintptr_t addr)
{
	struct et_smaps sm;
	if (et_smaps_read(&sm, "/proc/self/smaps") != 0)
		return -1;
	const struct et_vma *v = et_smaps_find(&sm, addr);
	long long r = v ? (long long)v->anon_huge : 0;
	et_smaps_free(&sm);
	return r;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

struct rate {
	int samples, huge;          /* copies made, of them huge afterwards */
	uint64_t median_ns;         /* one window */
	const char *how;
};

#define RATE_SAMPLES 5

/* The time of one window's copy, the way backend b makes it: thp, a
 * memcpy into a fresh MADV_HUGEPAGE region (its first write allocates the
 * huge page); collapse, a memcpy onto small pages and MADV_COLLAPSE. */
static bool measure(uint64_t H, enum et_backend b, struct rate *r)
{
	memset(r, 0, sizeof *r);
	if (b != ET_BACKEND_THP && b != ET_BACKEND_COLLAPSE)
		return false;
	r->how = b == ET_BACKEND_THP ? "a memcpy into a fresh MADV_HUGEPAGE region"
	                             : "a memcpy onto small pages, then MADV_COLLAPSE";
	char *src = mmap(NULL, H, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED)
		return false;
	memset(src, 0x90, H);
	uint64_t t[RATE_SAMPLES];
	for (int i = 0; i < RATE_SAMPLES; i++) {
		size_t rl = 3 * H;
		char *res = mmap(NULL, rl, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (res == MAP_FAILED)
			break;
		char *a = (char *)(((uintptr_t)res + H) & ~(uintptr_t)(H - 1));
		if (mprotect(a, H, PROT_READ | PROT_WRITE) != 0) {
			munmap(res, rl);
			break;
		}
		uint64_t t0 = now_ns();
		if (b == ET_BACKEND_THP) {
			madvise(a, H, MADV_HUGEPAGE);
			memcpy(a, src, H);
		} else {
			madvise(a, H, MADV_NOHUGEPAGE);
			memcpy(a, src, H);
			madvise(a, H, MADV_HUGEPAGE);
			madvise(a, H, MADV_COLLAPSE);
		}
		t[r->samples++] = now_ns() - t0;
		if (anon_huge_at((uintptr_t)a) >= (long long)H)
			r->huge++;
		munmap(res, rl);
	}
	munmap(src, H);
	if (!r->samples)
		return false;
	qsort(t, (size_t)r->samples, sizeof *t, cmp_u64);
	r->median_ns = t[r->samples / 2];
	return true;
}

/* ------------------------------------------------------------ program */

struct prog_totals {
	uint64_t text, windows, zero_copy, copy, small, primeable, pad;
	size_t nobjs, textrel, not_file_backed, unknown_folios;
	enum et_backend copy_backend;
	bool have_copy_backend;
	struct rate rate;
	bool have_rate;
	uint64_t startup_ns;
	char prime_cmd[2048], not_fb[512], textrel_names[512];
};

static void plan_program(const struct et_tool_host *s, struct plan *pl, struct prog_totals *t)
{
	const uint64_t H = s->si.pmd_size;
	struct stat pst;
	bool probe_here = s->file.p.works >= 0 && stat(s->file.dir, &pst) == 0;
	memset(t, 0, sizeof *t);
	for (int i = 0; i < s->nchain; i++)
		if (s->chain[i] != ET_BACKEND_FILE && !t->have_copy_backend) {
			t->copy_backend = s->chain[i];
			t->have_copy_backend = true;
		}
	bool files_ok = false;
	for (int i = 0; i < s->nchain; i++)
		files_ok |= s->chain[i] == ET_BACKEND_FILE;
	size_t pn = snprintf(t->prime_cmd, sizeof t->prime_cmd, "enormoustext prime");
	for (size_t i = 0; i < pl->n; i++) {
		struct obj *o = &pl->o[i];
		struct statfs sf;
		char fsb[24];
		snprintf(o->fs, sizeof o->fs, "%s", statfs(o->path, &sf) == 0
		         ? et_tool_fs_name((long)sf.f_type, fsb, sizeof fsb) : "?");
		t->nobjs++;
		t->text += o->cs.text_bytes;
		if (o->cs.textrel) {
			t->textrel++;
			size_t l = strlen(t->textrel_names);
			snprintf(t->textrel_names + l, sizeof t->textrel_names - l, "%s%s", l ? ", " : "", o->path);
			o->small = o->cs.text_bytes;
			t->small += o->small;
			continue;
		}
		/* A shared library of H or more of text is placed H-aligned by the
		 * kernel whatever its p_align (pagecache.c's rule): congruent, it can be
		 * mapped huge from the file, and all its aligned windows count. */
		bool fb = o->cs.file_backed || (o->cs.dso && o->cs.congruent && o->cs.text_bytes >= H);
		o->file_backed = fb;
		o->windows = (fb ? o->cs.eligible_aligned : o->cs.eligible_min) / H;
		uint64_t pad = o->cs.pad_windows;
		if (fb && o->windows && files_ok) {
			o->have_ps = et_tool_prime_state(o->path, H, &o->ps) == 0;
			if (o->have_ps && o->ps.huge)
				o->folios = 1;
			else if (probe_here && pst.st_dev == o->dev)
				o->folios = s->file.p.works;
			if (o->folios < 0)
				t->unknown_folios++;
			uint64_t zc = o->have_ps ? o->ps.huge : 0;
			if (o->folios == 1 && o->have_ps)
				zc += o->ps.not_cached;
			o->zero_copy = zc < o->windows ? zc : o->windows;
			if (o->folios == 1 && o->have_ps) {
				o->primeable = o->ps.small < o->windows - o->zero_copy ? o->ps.small
				                                                      : o->windows - o->zero_copy;
				if (o->primeable)
					pn += (size_t)snprintf(t->prime_cmd + (pn < sizeof t->prime_cmd ? pn : 0),
					                       pn < sizeof t->prime_cmd ? sizeof t->prime_cmd - pn : 0,
					                       " %s", o->path);
			}
		} else if (o->windows) {
			t->not_file_backed++;
			size_t l = strlen(t->not_fb);
			if (l + strlen(o->path) + 8 < sizeof t->not_fb)
				snprintf(t->not_fb + l, sizeof t->not_fb - l, "%s%s", l ? ", " : "", o->path);
		}
		/* without a copying backend only zero-copy windows move */
		uint64_t whole = t->have_copy_backend ? o->windows - o->zero_copy : 0;
		uint64_t padded = t->have_copy_backend ? pad : 0;
		o->copy = whole + padded;
		uint64_t in_huge = (o->zero_copy + whole) * H + (padded ? o->cs.pad_bytes : 0);
		o->small = o->cs.text_bytes > in_huge ? o->cs.text_bytes - in_huge : 0;
		t->pad += padded;
		t->windows += o->zero_copy + o->copy;
		t->zero_copy += o->zero_copy;
		t->copy += o->copy;
		t->small += o->small;
		t->primeable += o->primeable;
	}
	if (t->copy && t->have_copy_backend && measure(H, t->copy_backend, &t->rate)) {
		t->have_rate = true;
		t->startup_ns = t->rate.median_ns * t->copy;
	}
}

static void program_sentences(const struct et_tool_host *s, const struct plan *pl, const struct prog_totals *t,
                              const char *program, struct sentences *ss)
{
	const uint64_t H = s->si.pmd_size;
	char hl[16], a[16], b[16], c[16];
	et_tool_mib(H, hl, sizeof hl);
	say(ss, "program", "note", NULL, "%s and the %zu object%s it loads (its interpreter and "
	    "libraries): %s of text; %llu whole %s window%s (%s) would move, %s would stay on small "
	    "pages", program, t->nobjs - 1, t->nobjs - 1 == 1 ? "" : "s",
	    et_tool_size(a, sizeof a, t->text), (unsigned long long)t->windows, hl,
	    et_tool_s(t->windows), et_tool_size(b, sizeof b, t->windows * H),
	    et_tool_size(c, sizeof c, t->small));
	if (pl->nmissing)
		say(ss, "program", "warning", NULL, "%zu needed librar%s not found (%s%s%s): not counted",
		    pl->nmissing + pl->more_missing, pl->nmissing + pl->more_missing == 1 ? "y" : "ies",
		    pl->missing[0], pl->nmissing > 1 ? ", " : "", pl->nmissing > 1 ? pl->missing[1] : "");
	if (pl->loader_err[0])
		say(ss, "program", "warning", NULL, "%s; only the program and its interpreter are counted",
		    pl->loader_err);
	if (t->textrel)
		say(ss, "program", "note", NULL, "%s %s text relocations: the library leaves %s alone",
		    t->textrel_names, t->textrel == 1 ? "has" : "have", t->textrel == 1 ? "it" : "them");
	if (t->zero_copy)
		say(ss, "program", "fine", NULL, "%llu window%s (%s) come%s zero-copy from the page cache "
		    "(huge there already, or not cached and read in as one folio): shared by every "
		    "process, no memory of their own", (unsigned long long)t->zero_copy,
		    et_tool_s(t->zero_copy), et_tool_size(a, sizeof a, t->zero_copy * H),
		    t->zero_copy == 1 ? "s" : "");
	if (t->primeable)
		say(ss, "program", "advice", t->prime_cmd, "%llu window%s (%s) of file-backed text %s "
		    "cached in small pages: prime them for zero-copy: `%s`",
		    (unsigned long long)t->primeable, et_tool_s(t->primeable),
		    et_tool_size(a, sizeof a, t->primeable * H), t->primeable == 1 ? "is" : "are",
		    t->prime_cmd);
	if (t->not_file_backed)
		say(ss, "program", "note", NULL, "%s cannot be mapped huge from the file (its text's "
		    "address and file offset differ modulo %s, or it is not loaded %s-aligned: "
		    "`enormoustext check FILE` says what would change that): copied", t->not_fb, hl, hl);
	if (t->unknown_folios)
		say(ss, "program", "note", NULL, "for %zu file-backed object%s it is not known whether "
		    "its file system gives huge folios (the probe ran on another one: --probe-dir DIR "
		    "there): counted as copied", t->unknown_folios, t->unknown_folios == 1 ? "" : "s");
	if (t->copy && t->have_copy_backend) {
		say(ss, "program", "note", NULL, "%llu window%s (%s%s) %s copied into anonymous memory by "
		    "the %s backend: %s more memory in every process that runs it (private copies)",
		    (unsigned long long)t->copy, et_tool_s(t->copy), et_tool_size(a, sizeof a, t->copy * H),
		    t->pad ? ", padded tails included" : "", t->copy == 1 ? "is" : "are",
		    et_backend_name(t->copy_backend), et_tool_size(b, sizeof b, t->copy * H));
		if (t->have_rate)
			say(ss, "program", "note", NULL, "start-up: about %.1f ms to copy them, from %d "
			    "copies of %s measured here just now (%s: median %.0f us each, %.1f GiB/s%s)",
			    (double)t->startup_ns / 1e6, t->rate.samples, hl, t->rate.how,
			    (double)t->rate.median_ns / 1e3,
			    (double)H / ((double)t->rate.median_ns / 1e9) / (double)(1u << 30),
			    t->rate.huge == t->rate.samples ? "" : "; some came out on small pages");
		else if (t->copy_backend == ET_BACKEND_HUGETLB)
			say(ss, "program", "note", NULL, "start-up: the copies go into the hugetlb pool; "
			    "their time is not measured here (pages of the pool are not taken for a test)");
		const struct et_memcg *m = &s->memcg;
		if (m->budget != ET_MEMCG_UNLIMITED && t->copy * H > m->budget)
			say(ss, "program", "warning", NULL, "this process's memory cgroup allows %s more: "
			    "of the %s to copy the library copies that much (the hottest first, with a "
			    "profile) and leaves the rest small", et_tool_size(a, sizeof a, m->budget),
			    et_tool_size(b, sizeof b, t->copy * H));
	} else if (t->windows && !t->have_copy_backend && t->windows > t->zero_copy) {
		say(ss, "program", "warning", NULL, "no backend can copy here (auto has only %s): "
		    "windows that are not zero-copy stay small",
		    s->nchain ? et_backend_name(s->chain[0]) : "nothing");
	}
	if (!t->windows)
		say(ss, "program", "note", NULL, "nothing of %s would move: no object has a whole %s "
		    "window of text%s", program, hl, t->textrel ? " the library may move" : "");
	/* gcc's shared AddressSanitizer runtime checks that it is the first
	 * library loaded, and aborts the program where one is preloaded */
	for (size_t i = 0; i < pl->n; i++) {
		const char *base = strrchr(pl->o[i].path, '/');
		base = base ? base + 1 : pl->o[i].path;
		if (strncmp(base, "libasan.so", 10))
			continue;
		char cmd[512];
		snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=verify_asan_link_order=0 enormoustext run -- %s", program);
		say(ss, "program", "warning", cmd, "%s loads the shared AddressSanitizer runtime (%s), which "
		    "stops the program at start when another library is preloaded before it (\"ASan runtime "
		    "does not come first in initial library list\"): run it with "
		    "ASAN_OPTIONS=verify_asan_link_order=0 in its environment: `%s`", program, base, cmd);
		break;
	}
}

/* --------------------------------------------------------------- out */

static void print_sentences(const struct sentences *ss)
{
	for (size_t i = 0; i < ss->n; i++)
		printf("- %s\n", ss->s[i].text);
}

static void json_sentences(struct et_json *j, const char *key, const struct sentences *ss)
{
	et_json_arr(j, key);
	for (size_t i = 0; i < ss->n; i++) {
		et_json_obj(j, NULL);
		et_json_str(j, "topic", ss->s[i].topic);
		et_json_str(j, "verdict", ss->s[i].verdict);
		et_json_str(j, "text", ss->s[i].text);
		et_json_str(j, "command", ss->s[i].command[0] ? ss->s[i].command : NULL);
		et_json_obj_end(j);
	}
	et_json_arr_end(j);
}

static void json_program(struct et_json *j, const struct et_tool_host *s, const struct plan *pl,
                         const struct prog_totals *t, const char *program)
{
	const uint64_t H = s->si.pmd_size;
	et_json_obj(j, "program");
	et_json_str(j, "path", program);
	et_json_arr(j, "objects");
	for (size_t i = 0; i < pl->n; i++) {
		const struct obj *o = &pl->o[i];
		et_json_obj(j, NULL);
		et_json_str(j, "path", o->path);
		et_json_str(j, "needed_by", o->needed_by[0] ? o->needed_by : NULL);
		et_json_str(j, "filesystem", o->fs);
		et_json_u64(j, "text_bytes", o->cs.text_bytes);
		et_json_u64(j, "eligible_bytes", o->windows * H);
		et_json_bool(j, "textrel", o->cs.textrel);
		et_json_bool(j, "file_backed", o->file_backed);
		if (o->folios < 0)
			et_json_null(j, "huge_folios");
		else
			et_json_bool(j, "huge_folios", o->folios);
		if (o->have_ps) {
			et_json_obj(j, "page_cache");
			et_json_u64(j, "windows", o->ps.windows);
			et_json_u64(j, "huge", o->ps.huge);
			et_json_u64(j, "not_cached", o->ps.not_cached);
			et_json_u64(j, "small", o->ps.small);
			et_json_obj_end(j);
		} else {
			et_json_null(j, "page_cache");
		}
		et_json_u64(j, "windows", o->zero_copy + o->copy);
		et_json_u64(j, "zero_copy_windows", o->zero_copy);
		et_json_u64(j, "copy_windows", o->copy);
		et_json_u64(j, "padded_windows", o->cs.pad_windows);
		et_json_u64(j, "primeable_windows", o->primeable);
		et_json_u64(j, "small_bytes", o->small);
		et_json_obj_end(j);
	}
	et_json_arr_end(j);
	et_json_arr(j, "missing");
	for (size_t i = 0; i < pl->nmissing; i++)
		et_json_str(j, NULL, pl->missing[i]);
	et_json_arr_end(j);
	et_json_u64(j, "text_bytes", t->text);
	et_json_u64(j, "windows", t->windows);
	et_json_u64(j, "move_bytes", t->windows * H);
	et_json_u64(j, "zero_copy_windows", t->zero_copy);
	et_json_u64(j, "copy_windows", t->copy);
	et_json_u64(j, "primeable_windows", t->primeable);
	et_json_u64(j, "small_bytes", t->small);
	et_json_str(j, "copy_backend", t->have_copy_backend ? et_backend_name(t->copy_backend) : NULL);
	et_json_u64(j, "memory_per_process_bytes", t->copy * H);
	if (t->have_rate) {
		et_json_obj(j, "copy_rate");
		et_json_str(j, "how", t->rate.how);
		et_json_i64(j, "samples", t->rate.samples);
		et_json_i64(j, "huge", t->rate.huge);
		et_json_u64(j, "window_ns", t->rate.median_ns);
		et_json_obj_end(j);
		et_json_u64(j, "startup_ns", t->startup_ns);
	} else {
		et_json_null(j, "copy_rate");
		et_json_null(j, "startup_ns");
	}
	et_json_obj_end(j);
}

int et_tool_explain(const struct et_tool_host *s, const char *program, struct et_json *j)
{
	static struct sentences host, prog;
	memset(&host, 0, sizeof host);
	memset(&prog, 0, sizeof prog);
	host_sentences(s, &host);
	struct plan pl;
	struct prog_totals t;
	memset(&pl, 0, sizeof pl);
	int rc = ET_EXIT_OK;
	if (program) {
		long pg = sysconf(_SC_PAGESIZE);
		struct et_options lib;
		et_options_defaults(&lib);
		struct et_check_opts co = {
			.pmd_size = s->si.pmd_size,
			.page_size = pg > 0 ? (uint64_t)pg : 4096,
			.pad_threshold = lib.pad_threshold,
		};
		if (collect(&pl, program, &co) != 0) {
			rc = ET_EXIT_BAD;
			program = NULL;
		} else {
			plan_program(s, &pl, &t);
			program_sentences(s, &pl, &t, program, &prog);
		}
	}
	if (j) {
		et_json_obj(j, "explain");
		et_json_str(j, "kernel", s->kernel[0] ? s->kernel : NULL);
		if (s->mem_total)
			et_json_u64(j, "mem_total", s->mem_total);
		else
			et_json_null(j, "mem_total");
		if (s->memcg.budget == ET_MEMCG_UNLIMITED)
			et_json_null(j, "memcg_budget");
		else
			et_json_u64(j, "memcg_budget", s->memcg.budget);
		json_sentences(j, "sentences", &host);
		if (program) {
			json_program(j, s, &pl, &t, program);
			json_sentences(j, "program_sentences", &prog);
		} else {
			et_json_null(j, "program");
		}
		et_json_obj_end(j);
	} else {
		printf("on this host (Linux %s, %s pages):\n", s->kernel[0] ? s->kernel : "unknown",
		       et_tool_mib(s->si.pmd_size, (char[16]){ 0 }, 16));
		print_sentences(&host);
		if (program) {
			char a[16], b[16], c[16];
			printf("\nfor %s:\n", program);
			printf("  %-48s %8s %8s %9s %6s %8s\n", "object", "text", "windows", "zero-copy",
			       "copied", "small");
			for (size_t i = 0; i < pl.n; i++) {
				const struct obj *o = &pl.o[i];
				printf("  %-48s %8s %8llu %9llu %6llu %8s\n", o->path,
				       et_tool_size(a, sizeof a, o->cs.text_bytes),
				       (unsigned long long)(o->zero_copy + o->copy),
				       (unsigned long long)o->zero_copy, (unsigned long long)o->copy,
				       et_tool_size(b, sizeof b, o->small));
			}
			printf("  %-48s %8s %8llu %9llu %6llu %8s\n", "total", et_tool_size(a, sizeof a, t.text),
			       (unsigned long long)t.windows, (unsigned long long)t.zero_copy,
			       (unsigned long long)t.copy, et_tool_size(c, sizeof c, t.small));
			print_sentences(&prog);
		}
	}
	free(pl.o);
	return rc;
}
