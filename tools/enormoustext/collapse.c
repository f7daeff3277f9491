/*
 * tools/enormoustext/collapse.c — `enormoustext collapse PID... [--jit]
 * [--profile FILE] [--dry-run] [--watch SECONDS] [--json]`: put the
 * executable ranges of running processes on huge pages from outside, with
 * no restart and no preload: process_madvise(MADV_COLLAPSE) (Linux 6.1),
 * the user-space counterpart of DAMON's DAMOS_COLLAPSE.
 *
 * What is asked.  Every executable mapping of /proc/PID/smaps, file-backed
 * and anonymous (the library's copies, JIT code caches), each trimmed to
 * its whole PMD windows; with --jit only the anonymous ones that are JIT
 * code (not the library's copies of a file's text: which is which, by the
 * one rule of core/smaps.c, et_smaps_attribute, also in the listing);
 * with --profile only the windows of the files the profile names hot, by
 * the library's own rule (core/plan.c's et_plan_hot: the hottest windows
 * that cover ENORMOUSTEXT_HOT_COVERAGE of the samples; objects matched by
 * build-id, those the profile lacks left alone).  Left out, with the
 * reason: mappings without a whole window, file text whose address and
 * offset are not congruent modulo the PMD size (no collapse could map it
 * huge), hugetlb memory and kernel pseudo-mappings ([vdso]).
 *
 * How.  One pidfd_open per PID, then one process_madvise call per window,
 * so that one failure hides no other; before and after, the mapping's huge
 * bytes from smaps (AnonHugePages, FilePmdMapped, ShmemPmdMapped).  What
 * stayed small gets its reason from the errno (see why_small).  The kernel
 * wants PTRACE_MODE_READ_FSCREDS access to the target (mm_access: EACCES
 * without it) and CAP_SYS_NICE (EPERM) — mm/madvise.c, process_madvise,
 * since commit 96cfe2c0fd23 "mm/madvise: replace ptrace attach requirement
 * for process_madvise" — and takes MADV_COLLAPSE from Linux 6.1 on (with
 * MADV_COLD, MADV_PAGEOUT, MADV_WILLNEED: process_madvise(2)).  Yama's
 * ptrace_scope restricts PTRACE_MODE_ATTACH only, so it does not apply.
 *
 * --watch SECONDS repeats until every target has exited (its pidfd becomes
 * readable) or SIGINT/SIGTERM, asking for mappings that are new since the
 * last round (a JIT that keeps growing) and again for windows that failed
 * for want of a huge page or, in anonymous memory, because nothing was
 * there yet (EINVAL: a JIT grows into what it reserved); it prints only
 * what changed.
 *
 * Owns: `collapse`.
 * May call: core (smaps, profile, plan's et_plan_hot, json, mm_flags),
 * elffile.c (a file's PT_LOADs and build-id, for --profile), profiles.c
 * (the profile loaded), msg.c, common.c.
 * Never: touches the target in any other way than MADV_COLLAPSE (its
 * contents, protections and mappings stay as they are); with --dry-run,
 * not even that.
 */
#include "tool.h"
#include "elffile.h"
#include "opts.h"
#include "profiles.h"

#include "core/mm_flags.h"
#include "core/run.h"

#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* The same numbers on x86-64 and aarch64 (and every architecture with the
 * generic table); older headers lack them. */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif

enum rkind { K_FILE, K_ANON };

struct crange {
	uint64_t start, end;        /* the mapping, from smaps */
	uint64_t lo, hi;            /* its whole PMD windows */
	uint64_t offset, inode;
	char *what;                 /* the file, or "[anon:jit]" and the like */
	char *file;                 /* the file to read (--profile), NULL for anonymous */
	enum rkind kind;
	const char *left_out;       /* why it is not asked at all (NULL: asked) */
	uint8_t *ask;               /* per window: asked (the others are cold) */
	unsigned nwin, nasked, nfailed;
	uint64_t asked;             /* bytes of windows asked */
	uint64_t before, after, printed;   /* huge bytes of the mapping */
	int err;                    /* errno of the first window that failed, 0 none */
	bool seen;                  /* in this round's smaps */
	bool fresh;                 /* found this round */
	bool retry;                 /* --watch: ask again (the failure may pass) */
	bool done;                  /* asked (or left out) at least once */
};

struct cproc {
	long pid;
	int pidfd;
	char comm[64];
	struct crange *r;
	size_t n, cap;
	bool gone, denied, thp_disabled;
	bool said_gone;             /* --watch --json: its exit reported */
	int fatal;                  /* errno that stops every call for it (EPERM...) */
};

struct copts {
	bool jit, dry, json;
	const char *profile_path;
	struct et_profile prof;
	bool have_prof;
	double watch;               /* seconds, 0: once */
	uint64_t H;
	bool old_kernel;            /* before 6.1: no MADV_COLLAPSE in process_madvise */
	char release[65];
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

enum { O_JIT = 1, O_PROFILE, O_DRY_RUN, O_WATCH, O_JSON };

static const struct et_opt options[] = {
	{ "jit", 0, NULL,
	  "only anonymous executable mappings that are JIT code\n"
	  "(code caches, r-x or rwx); file-backed text and\n"
	  "libenormoustext's copies of it are left alone",
	  O_JIT, 0, 1, 0, NULL, 0 },
	{ "profile", 0, "FILE",
	  "only the windows FILE (a profile from `enormoustext\n"
	  "record`) names hot, by the library's rule (the hottest\n"
	  "windows that cover 95% of the samples; files matched\n"
	  "by build-id, those it lacks left alone); anonymous\n"
	  "code has no build-id, so not with --jit",
	  O_PROFILE, 0, 1, 0, NULL, ET_COMP_FILE },
	{ "dry-run", 'n', NULL, "say what would be asked; change nothing", O_DRY_RUN, 0, 0, 0, NULL, 0 },
	{ "watch", 0, "SECONDS",
	  "repeat every SECONDS until the processes exit (or\n"
	  "SIGINT), asking for mappings that are new (a JIT that\n"
	  "grows) and again for windows that found no free huge\n"
	  "page or, in anonymous memory, nothing yet (code a JIT\n"
	  "writes later); only changes are printed",
	  O_WATCH, 0, 0, 0, NULL, ET_COMP_NONE },
	{ "json", 0, NULL,
	  "JSON: pmd_size, dry_run, jit, profile, and per process\n"
	  "pid, command, asked_bytes, huge_before, huge_after,\n"
	  "error and ranges (start, end, kind, what, windows,\n"
	  "asked_bytes, huge_before, huge_after, huge, errno,\n"
	  "reason); with --watch one such object a line per round\n"
	  "that changed something",
	  O_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec spec = {
	.name = "collapse",
	.forms = { { NULL, "PID..." } },
	.about =
	        "Collapse the executable ranges of running processes onto huge pages from\n"
	        "outside, with no restart and no preload: process_madvise(MADV_COLLAPSE)\n"
	        "(Linux 6.1 and later), one call per 2M window, checked in /proc/PID/smaps.\n"
	        "\n"
	        "What is asked: every executable mapping, file-backed and anonymous (the\n"
	        "library's anonymous copies, JIT code caches), trimmed to its whole 2M windows.\n"
	        "Left out, with the reason: mappings without a whole window, file text whose\n"
	        "address and file offset differ modulo 2M, hugetlb memory, [vdso] and the like.\n"
	        "Anonymous memory collapses whatever the THP policy (even `never`), unless the\n"
	        "process or mapping refuses THP (PR_SET_THP_DISABLE, MADV_NOHUGEPAGE).\n"
	        "File-backed text collapses only where the kernel can collapse that file's\n"
	        "page cache (CONFIG_READ_ONLY_THP_FOR_FS, or a file system with large folios);\n"
	        "elsewhere it stays small and the reason says so (EINVAL).\n",
	.sections = { { NULL, options } },
	.tail = "Needs CAP_SYS_NICE and ptrace read access to each process (its owner, or\n"
	        "CAP_SYS_PTRACE; the process must be dumpable): root has both.\n"
	        "\n"
	        "Exit status: 0 every range asked for is huge afterwards (or, with --dry-run,\n"
	        "could be asked); 1 some stayed small (each named, with the reason), a process\n"
	        "could not be read or collapsed, a PID names no process or the profile cannot\n"
	        "be read; 2 a usage error (a PID that is not a number, an unknown option).\n",
	.operand = ET_COMP_PID,
};

const struct et_cmd_spec *et_cmd_collapse_spec(void)
{
	return &spec;
}

/* ------------------------------------------------------------ parsing */

static int parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || !(v <= 86400))
		return -1;
	*out = v;
	return 0;
}

/* ------------------------------------------------------------ reasons */

static const char *errno_name(int e)
{
	switch (e) {
	case 0: return NULL;
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ESRCH: return "ESRCH";
	case EINVAL: return "EINVAL";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case ENOSYS: return "ENOSYS";
	case EFAULT: return "EFAULT";
	default: return "other";
	}
}

/* Why a window stayed small after process_madvise failed with e. */
static const char *why_small(const struct copts *o, const struct cproc *p, const struct crange *r, int e)
{
	switch (e) {
	case EPERM:
		return "EPERM: collapsing another process's memory needs CAP_SYS_NICE";
	case EACCES:
		return "EACCES: no ptrace read access to the process";
	case ESRCH:
		return "ESRCH: the process exited";
	case ENOSYS:
		return "ENOSYS: this kernel has no process_madvise (Linux 5.10)";
	case EAGAIN:
		return "EAGAIN: pages busy or no huge page free just now (try again)";
	case ENOMEM:
		return "ENOMEM: no free huge page could be allocated (memory fragmented or short)";
	case EBUSY:
		return "EBUSY: the memory cgroup could not be charged for the huge page";
	case EINVAL:
		if (o->old_kernel)
			return "EINVAL: process_madvise takes MADV_COLLAPSE from Linux 6.1 on";
		if (p->thp_disabled)
			return "EINVAL: THP is disabled for this process (PR_SET_THP_DISABLE)";
		if (r->kind == K_FILE)
			return "EINVAL: this kernel cannot collapse file-backed text (that needs "
			       "CONFIG_READ_ONLY_THP_FOR_FS); where the page cache holds a window as one huge "
			       "folio it is mapped huge when first executed: `enormoustext prime FILE` before "
			       "the program starts gives zero-copy huge text";
		return "EINVAL: nothing there yet (a part never touched: the kernel collapses only "
		       "pages that exist), or the mapping refuses huge pages (MADV_NOHUGEPAGE)";
	case 0:
		return "the kernel said it collapsed, but smaps shows it small";
	default:
		return "process_madvise failed";
	}
}

/* The one stderr line for an error that stops every call for a process. */
static void fatal_line(const struct cproc *p, int e)
{
	if (e == EPERM)
		et_tool_err("PID %ld: process_madvise: Operation not permitted: collapsing another "
		            "process's memory needs CAP_SYS_NICE (run as root, or give the command "
		            "the capability: setcap cap_sys_nice+ep), and ptrace read access to it", p->pid);
	else if (e == EACCES)
		et_tool_err("PID %ld: permission denied: collapsing its memory needs ptrace read access "
		            "to it (the same user and a dumpable process, or CAP_SYS_PTRACE; Yama's "
		            "ptrace_scope limits attaching only, not this) and CAP_SYS_NICE", p->pid);
	else if (e == ENOSYS)
		et_tool_err("PID %ld: this kernel has no process_madvise (it needs Linux 5.10; "
		            "MADV_COLLAPSE through it, 6.1)", p->pid);
	else
		et_tool_err("PID %ld: %s", p->pid, strerror(e));
}

/* ------------------------------------------------------------ the target */

/* What mapping i is, in the listing: the library's copy of a file's text
 * (the one rule, core/smaps.c: inside an executable PT_LOAD of that file),
 * a named anonymous mapping, JIT code, or the file itself. */
static const char *what_is(const struct et_smaps *sm, size_t i, bool anon, char *buf, size_t cap)
{
	const char *path = et_vma_path(sm, &sm->vmas[i]);
	const struct et_vma *from = et_smaps_copied_from(sm, i);
	if (from) {
		snprintf(buf, cap, "[anon: copy of %s]", et_vma_path(sm, from));
		return buf;
	}
	if (!anon)
		return path;
	if (!strncmp(path, "[anon:", 6) || !strncmp(path, "[anon_shmem:", 12))
		return path;
	return "[anon:jit]";
}

static struct crange *range_find(struct cproc *p, uint64_t start, uint64_t end, uint64_t inode)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->r[i].start == start && p->r[i].end == end && p->r[i].inode == inode)
			return &p->r[i];
	return NULL;
}

static void range_free(struct crange *r)
{
	free(r->what);
	free(r->file);
	free(r->ask);
}

static int read_smaps(long pid, struct et_smaps *sm)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/smaps", pid);
	int err = et_smaps_read(sm, path);
	return err == -ESRCH ? -ENOENT : err;
}

/* Huge bytes of the mappings covering [start, end) in sm. */
static uint64_t huge_in(const struct et_smaps *sm, uint64_t start, uint64_t end)
{
	uint64_t h = 0;
	for (size_t i = 0; i < sm->count; i++)
		if (sm->vmas[i].start < end && start < sm->vmas[i].end)
			h += et_vma_huge_bytes(&sm->vmas[i]);
	return h;
}

/* The mappings of this round: new ones added (fresh), all marked seen. */
static int scan(struct cproc *p, const struct et_smaps *sm, const struct copts *o)
{
	const uint64_t H = o->H;
	for (size_t i = 0; i < p->n; i++)
		p->r[i].seen = p->r[i].fresh = false;
	for (size_t i = 0; i < sm->count; i++) {
		const struct et_vma *v = &sm->vmas[i];
		if (!(v->prot & PROT_EXEC))
			continue;
		const char *path = et_vma_path(sm, v);
		bool anon = !path[0] || !strncmp(path, "[anon:", 6) || !strncmp(path, "[anon_shmem:", 12) ||
		            !strcmp(path, "/dev/zero (deleted)");
		/* --jit: JIT code only, not a file's text nor the library's copy of it */
		if (o->jit && (!anon || et_smaps_copied_from(sm, i)))
			continue;
		struct crange *r = range_find(p, v->start, v->end, v->inode);
		if (r) {
			r->seen = true;
			r->before = r->after = et_vma_huge_bytes(v);
			continue;
		}
		if (p->n == p->cap) {
			size_t cap = p->cap ? 2 * p->cap : 16;
			struct crange *nr = realloc(p->r, cap * sizeof *nr);
			if (!nr)
				return -ENOMEM;
			p->r = nr;
			p->cap = cap;
		}
		r = &p->r[p->n++];
		memset(r, 0, sizeof *r);
		r->start = v->start;
		r->end = v->end;
		r->offset = v->offset;
		r->inode = v->inode;
		r->kind = anon ? K_ANON : K_FILE;
		r->seen = r->fresh = true;
		char buf[4200];
		r->what = strdup(what_is(sm, i, anon, buf, sizeof buf));
		if (!anon)
			r->file = strdup(path);
		if (!r->what || (!anon && !r->file))
			return -ENOMEM;
		r->before = r->after = r->printed = et_vma_huge_bytes(v);
		r->lo = v->start > UINT64_MAX - (H - 1) ? UINT64_MAX : (v->start + H - 1) & ~(H - 1);
		r->hi = v->end & ~(H - 1);
		if (r->hi <= r->lo) {
			r->lo = r->hi = 0;
			r->left_out = "no whole 2M window inside";
		} else if (path[0] == '[' && !anon) {
			r->left_out = "a kernel pseudo-mapping";
		} else if (!strncmp(path, "/anon_hugepage", 14) || v->hugetlb) {
			r->left_out = "hugetlb memory (huge already)";
		} else if (!anon && ((v->start - v->offset) & (H - 1))) {
			r->left_out = "address and file offset differ modulo 2M: the file cannot be mapped huge here";
		}
		if (!r->left_out) {
			r->nwin = (unsigned)((r->hi - r->lo) / H);
			r->ask = malloc(r->nwin);
			if (!r->ask)
				return -ENOMEM;
			memset(r->ask, 1, r->nwin);
		}
	}
	/* what vanished (unmapped, or changed into another mapping) is dropped */
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (p->r[i].seen)
			p->r[k++] = p->r[i];
		else
			range_free(&p->r[i]);
	}
	p->n = k;
	return 0;
}

/* ------------------------------------------------------------ --profile */

/* The ELF address of file offset `off` (through its PT_LOADs) and the
 * file's build-id; -1 when the file cannot be read as ELF. */
static int elf_facts(const char *path, uint64_t off, uint64_t *vaddr, char bid[41])
{
	struct et_tool_elf x;
	if (et_tool_elf_open(&x, path, 0) != 0)
		return -1;
	int rc = -1;
	struct et_tool_seg *segs;
	long n = et_tool_elf_segments(&x, &segs);
	if (n >= 0) {
		et_tool_elf_build_id_key(&x, bid);
		for (long i = 0; i < n; i++) {
			const struct et_tool_seg *ph = &segs[i];
			uint64_t pg = ph->offset & ~(uint64_t)0xfff;
			if (ph->type == PT_LOAD && off >= pg && off < ph->offset + ph->filesz) {
				*vaddr = ph->vaddr - (ph->offset - off);
				rc = 0;
				break;
			}
		}
		free(segs);
	}
	et_tool_elf_close(&x);
	return rc;
}

/* The fresh file ranges of p: only the windows the profile names hot (the
 * library's rule, et_plan_hot); anonymous ones have no build-id. */
static int apply_profile(struct cproc *p, struct copts *o)
{
	size_t nobj = 0, nwin = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct crange *r = &p->r[i];
		if (!r->fresh || r->left_out)
			continue;
		if (r->kind == K_ANON) {
			r->left_out = "anonymous: a profile names files (by build-id) only";
			continue;
		}
		nobj++;
		nwin += r->nwin;
	}
	if (!nobj)
		return 0;
	struct et_run run;
	memset(&run, 0, sizeof run);
	et_options_defaults(&run.opt);
	run.opt.profile = o->profile_path;
	run.opt.profile_strict = true;     /* what it does not name stays as it is */
	run.si.pmd_size = o->H;
	run.objs = calloc(nobj, sizeof *run.objs);
	run.wins = calloc(nwin, sizeof *run.wins);
	size_t *of = calloc(nobj, sizeof *of);
	if (!run.objs || !run.wins || !of) {
		free(run.objs);
		free(run.wins);
		free(of);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n; i++) {
		struct crange *r = &p->r[i];
		if (!r->fresh || r->left_out || r->kind != K_FILE)
			continue;
		struct et_object *ob = &run.objs[run.nobjs];
		char mf[128];
		uint64_t va = 0;
		/* the file the process maps (the path may name another by now) */
		snprintf(mf, sizeof mf, "/proc/%ld/map_files/%llx-%llx", p->pid, (unsigned long long)r->start,
		         (unsigned long long)r->end);
		if (elf_facts(mf, r->offset, &va, ob->build_id) != 0 &&
		    elf_facts(r->file, r->offset, &va, ob->build_id) != 0)
			ob->build_id[0] = '\0';
		et_strlcpy(ob->path, r->file, sizeof ob->path);
		ob->base = r->start - va;
		ob->first_window = (uint32_t)run.nwins;
		ob->nwindows = r->nwin;
		ob->skip = ET_R_NONE;
		for (unsigned k = 0; k < r->nwin; k++) {
			struct et_window *w = &run.wins[run.nwins++];
			w->addr = r->lo + (uint64_t)k * o->H;
			w->object = (uint32_t)run.nobjs;
			w->candidate = true;
		}
		of[run.nobjs++] = i;
	}
	/* its warnings speak of ENORMOUSTEXT_PROFILE: the command says its own */
	et_log_setup(0, true);
	et_plan_hot(&run, &o->prof);
	for (size_t b = 0; b < run.nobjs; b++) {
		struct crange *r = &p->r[of[b]];
		const struct et_object *ob = &run.objs[b];
		if (!ob->build_id[0] || !et_profile_find(&o->prof, ob->build_id)) {
			r->left_out = "not in the profile (no object with its build-id)";
			continue;
		}
		unsigned hot = 0;
		for (unsigned k = 0; k < r->nwin; k++) {
			r->ask[k] = run.wins[ob->first_window + k].candidate;
			hot += r->ask[k];
		}
		if (!hot)
			r->left_out = "cold: the profile names none of its windows hot";
	}
	free(run.objs);
	free(run.wins);
	free(of);
	return 0;
}

/* ------------------------------------------------------------ collapsing */

static int pidfd_open_(long pid)
{
	return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0u);
}

static int collapse_window(const struct cproc *p, uint64_t addr, uint64_t len)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)addr, .iov_len = (size_t)len };
	long rc = syscall(SYS_process_madvise, p->pidfd, &iov, 1ul, MADV_COLLAPSE, 0u);
	return rc < 0 ? errno : 0;
}

/* Ask for the windows of r (a fresh range, or one to retry). */
static void collapse_range(struct cproc *p, struct crange *r, const struct copts *o)
{
	r->done = true;
	r->retry = false;
	if (r->left_out)
		return;
	r->nasked = r->nfailed = 0;
	r->err = 0;
	r->asked = 0;
	for (unsigned k = 0; k < r->nwin; k++) {
		if (!r->ask[k])
			continue;
		r->nasked++;
		r->asked += o->H;
	}
	if (o->dry || r->before >= r->asked)
		return;                 /* huge already: nothing to ask */
	for (unsigned k = 0; k < r->nwin; k++) {
		if (!r->ask[k])
			continue;
		int e = p->fatal ? p->fatal : collapse_window(p, r->lo + (uint64_t)k * o->H, o->H);
		if (e) {
			r->nfailed++;
			if (!r->err)
				r->err = e;
		}
		if (e == EPERM || e == EACCES || e == ESRCH || e == ENOSYS) {
			if (!p->fatal && e != ESRCH)
				fatal_line(p, e);
			p->fatal = e;
		}
		/* EINVAL in anonymous memory: mostly a part never touched yet (a
		 * JIT's code cache grows into what it reserved) */
		if (e == EAGAIN || e == ENOMEM || e == EBUSY || (e == EINVAL && r->kind == K_ANON))
			r->retry = true;
	}
}

static bool range_small(const struct crange *r)
{
	return !r->left_out && r->after < r->asked;
}

/* ------------------------------------------------------------ reporting */

static const char *kind_name(enum rkind k)
{
	return k == K_FILE ? "file" : "anon";
}

static void range_text(const struct crange *r, const struct cproc *p, const struct copts *o)
{
	char a[16], b[16], c[16];
	if (r->left_out) {
		printf("  %012llx-%012llx %4s %8s %8s    %-8s %s\n", (unsigned long long)r->start,
		       (unsigned long long)r->end, kind_name(r->kind), "-", et_tool_size(b, sizeof b, r->before),
		       "", r->what);
		printf("      left out: %s\n", r->left_out);
		return;
	}
	printf("  %012llx-%012llx %4s %8s %8s -> %-8s %s\n", (unsigned long long)r->start,
	       (unsigned long long)r->end, kind_name(r->kind), et_tool_size(a, sizeof a, r->asked),
	       et_tool_size(b, sizeof b, r->before),
	       o->dry ? "(dry)" : et_tool_size(c, sizeof c, r->after), r->what);
	if (r->nasked < r->nwin)
		printf("      %u of %u windows hot in the profile\n", r->nasked, r->nwin);
	if (!o->dry && range_small(r))
		printf("      stayed small (%u of %u windows failed): %s\n", r->nfailed, r->nasked,
		       why_small(o, p, r, r->err));
}

static void range_json(struct et_json *j, const struct crange *r, const struct cproc *p,
                       const struct copts *o)
{
	et_json_obj(j, NULL);
	et_json_hex(j, "start", r->start);
	et_json_hex(j, "end", r->end);
	et_json_str(j, "kind", kind_name(r->kind));
	et_json_str(j, "what", r->what);
	et_json_u64(j, "windows", r->nwin);
	et_json_u64(j, "windows_asked", r->left_out ? 0 : r->nasked);
	et_json_u64(j, "asked_bytes", r->left_out ? 0 : r->asked);
	et_json_u64(j, "huge_before", r->before);
	if (o->dry)
		et_json_null(j, "huge_after");
	else
		et_json_u64(j, "huge_after", r->after);
	et_json_bool(j, "huge", !r->left_out && !o->dry && r->after >= r->asked);
	if (r->left_out || o->dry || !range_small(r)) {
		et_json_null(j, "errno");
		if (r->left_out)
			et_json_str(j, "reason", r->left_out);
		else
			et_json_null(j, "reason");
	} else {
		et_json_str(j, "errno", errno_name(r->err));
		et_json_str(j, "reason", why_small(o, p, r, r->err));
	}
	et_json_obj_end(j);
}

/* Should r be shown this round?  Once: everything with a window; --watch
 * after its first round: what is new or changed. */
static bool shown(const struct crange *r, bool watching)
{
	if (!r->lo && !r->hi)
		return false;           /* no whole window: only counted */
	if (!watching)
		return true;
	return r->fresh || r->after != r->printed;
}

struct totals {
	uint64_t asked, before, after;
	unsigned asked_maps, small, left, tiny;
};

static void proc_totals(const struct cproc *p, const struct copts *o, struct totals *t)
{
	memset(t, 0, sizeof *t);
	for (size_t i = 0; i < p->n; i++) {
		const struct crange *r = &p->r[i];
		if (!r->lo && !r->hi) {
			t->tiny++;
			continue;
		}
		if (r->left_out) {
			t->left++;
			continue;
		}
		t->asked_maps++;
		t->asked += r->asked;
		t->before += r->before < r->asked ? r->before : r->asked;
		t->after += r->after < r->asked ? r->after : r->asked;
		t->small += !o->dry && range_small(r);
	}
}

static void proc_text(struct cproc *p, const struct copts *o, bool watching)
{
	char a[16], b[16], c[16];
	bool header = false;
	for (size_t i = 0; i < p->n; i++) {
		struct crange *r = &p->r[i];
		if (!shown(r, watching))
			continue;
		if (!header) {
			if (!watching)
				printf("PID %ld (%s): executable mappings, huge page size %s\n", p->pid, p->comm,
				       et_tool_size(a, sizeof a, o->H));
			printf("  %-25s %4s %8s %8s    %-8s %s\n", "RANGE", "KIND", "ASKED", "HUGE", "AFTER",
			       "WHAT");
			header = true;
		}
		range_text(r, p, o);
		r->printed = r->after;
	}
	if (watching && !header)
		return;
	struct totals t;
	proc_totals(p, o, &t);
	if (o->dry) {
		printf("PID %ld (%s): would ask %s in %u mapping(s) (%s of it huge now); nothing changed "
		       "(--dry-run)", p->pid, p->comm, et_tool_size(a, sizeof a, t.asked), t.asked_maps,
		       et_tool_size(b, sizeof b, t.before));
	} else {
		printf("PID %ld (%s): %s asked in %u mapping(s): huge %s before, %s after", p->pid, p->comm,
		       et_tool_size(a, sizeof a, t.asked), t.asked_maps, et_tool_size(b, sizeof b, t.before),
		       et_tool_size(c, sizeof c, t.after));
		if (!t.asked_maps)
			printf(": nothing to collapse");
		else if (!t.small)
			printf(": all huge");
		else {
			printf(": %u mapping(s) stayed small:", t.small);
			for (size_t i = 0; i < p->n; i++)
				if (range_small(&p->r[i]))
					printf(" %llx-%llx (%s)", (unsigned long long)p->r[i].start,
					       (unsigned long long)p->r[i].end, errno_name(p->r[i].err) ?
					       errno_name(p->r[i].err) : "not huge");
		}
	}
	if (t.left)
		printf("; %u mapping(s) left out (reasons above)", t.left);
	if (t.tiny)
		printf("; %u without a whole %s window", t.tiny, et_tool_size(a, sizeof a, o->H));
	putchar('\n');
}

static void proc_json(struct et_json *j, struct cproc *p, const struct copts *o, bool watching)
{
	struct totals t;
	proc_totals(p, o, &t);
	et_json_obj(j, NULL);
	et_json_i64(j, "pid", p->pid);
	et_json_str(j, "command", p->comm);
	if (p->gone)
		et_json_str(j, "error", "exited");
	else if (p->fatal && p->fatal != ESRCH)
		et_json_str(j, "error", p->fatal == EPERM ? "EPERM: needs CAP_SYS_NICE" :
		            p->fatal == EACCES ? "EACCES: needs ptrace read access" : errno_name(p->fatal));
	else if (p->denied)
		et_json_str(j, "error", "EACCES: cannot read its smaps (needs ptrace read access)");
	else
		et_json_null(j, "error");
	et_json_u64(j, "asked_bytes", t.asked);
	et_json_u64(j, "huge_before", t.before);
	if (o->dry)
		et_json_null(j, "huge_after");
	else
		et_json_u64(j, "huge_after", t.after);
	et_json_u64(j, "stayed_small", t.small);
	et_json_u64(j, "no_window", t.tiny);
	et_json_arr(j, "ranges");
	for (size_t i = 0; i < p->n; i++) {
		struct crange *r = &p->r[i];
		if (!shown(r, watching))
			continue;
		range_json(j, r, p, o);
		r->printed = r->after;
	}
	et_json_arr_end(j);
	et_json_obj_end(j);
}

/* ------------------------------------------------------------ rounds */

/* One round for p: read its mappings, ask for what is new (or to retry),
 * read them again.  0, or -errno reading smaps (-ENOENT: it exited). */
static int round_proc(struct cproc *p, struct copts *o)
{
	struct et_smaps sm;
	int err = read_smaps(p->pid, &sm);
	if (err)
		return err;
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%ld", p->pid);
	et_smaps_attribute(&sm, dir);   /* the copies told from JIT code */
	err = scan(p, &sm, o);
	et_smaps_free(&sm);
	if (err)
		return err;
	if (o->have_prof && (err = apply_profile(p, o)) != 0)
		return err;
	bool asked = false;
	for (size_t i = 0; i < p->n; i++) {
		struct crange *r = &p->r[i];
		if (r->fresh || (r->retry && r->after < r->asked)) {
			collapse_range(p, r, o);
			asked = asked || (!r->left_out && !o->dry);
		}
	}
	if (!asked)
		return 0;
	/* after: what the kernel really did */
	err = read_smaps(p->pid, &sm);
	if (err == -ENOENT) {
		p->gone = true;
		return 0;
	}
	if (err)
		return err;
	for (size_t i = 0; i < p->n; i++)
		p->r[i].after = huge_in(&sm, p->r[i].start, p->r[i].end);
	et_smaps_free(&sm);
	return 0;
}

static void read_comm(struct cproc *p)
{
	char path[64], buf[128];
	snprintf(path, sizeof path, "/proc/%ld/comm", p->pid);
	if (et_tool_read(path, p->comm, sizeof p->comm) < 0)
		snprintf(p->comm, sizeof p->comm, "?");
	/* THP_enabled (Linux 5.0): 0 under PR_SET_THP_DISABLE */
	snprintf(path, sizeof path, "/proc/%ld/status", p->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(buf, sizeof buf, f))
		if (!strncmp(buf, "THP_enabled:", 12))
			p->thp_disabled = atoi(buf + 12) == 0;
	fclose(f);
}

static void kernel_facts(struct copts *o)
{
	struct utsname u;
	unsigned maj = 0, min = 0;
	if (uname(&u) == 0) {
		et_strlcpy(o->release, u.release, sizeof o->release);
		if (sscanf(u.release, "%u.%u", &maj, &min) == 2)
			o->old_kernel = maj < 6 || (maj == 6 && min < 1);
	}
	char buf[32];
	uint64_t h = 0;
	if (et_tool_read("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", buf, sizeof buf) > 0 &&
	    et_tool_parse_u64(buf, &h) == 0 && h >= 4096 && !(h & (h - 1)))
		o->H = h;
	else
		o->H = 2u << 20;
}

/* Sleep up to `s` seconds or until a pidfd is readable (its process
 * exited) or SIGINT/SIGTERM. */
static void wait_round(struct cproc *ps, size_t n, double s, const sigset_t *unblocked, bool say)
{
	struct pollfd pf[64];
	size_t m = 0;
	for (size_t i = 0; i < n && m < 64; i++)
		if (!ps[i].gone && ps[i].pidfd >= 0)
			pf[m++] = (struct pollfd){ .fd = ps[i].pidfd, .events = POLLIN };
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
	ppoll(pf, m, &ts, unblocked);
	for (size_t i = 0, k = 0; i < n && k < m; i++)
		if (!ps[i].gone && ps[i].pidfd >= 0 && ps[i].pidfd == pf[k].fd) {
			if (pf[k].revents & (POLLIN | POLLHUP)) {
				ps[i].gone = true;
				if (say)
					printf("PID %ld (%s): exited\n", ps[i].pid, ps[i].comm);
			}
			k++;
		}
}

static void json_head(struct et_json *j, const struct copts *o, unsigned round)
{
	et_json_init(j, stdout);
	if (o->watch > 0)
		et_json_obj_flat(j, NULL);
	else
		et_json_obj(j, NULL);
	et_json_u64(j, "pmd_size", o->H);
	et_json_bool(j, "dry_run", o->dry);
	et_json_bool(j, "jit", o->jit);
	et_json_str(j, "profile", o->profile_path);
	if (o->watch > 0)
		et_json_u64(j, "round", round);
	et_json_arr(j, "processes");
}

int et_cmd_collapse(int argc, char **argv)
{
	struct copts o;
	memset(&o, 0, sizeof o);
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_JIT: o.jit = true; break;
		case O_PROFILE: o.profile_path = a.val; break;
		case O_DRY_RUN: o.dry = true; break;
		case O_WATCH:
			if (parse_seconds(a.val, &o.watch))
				return et_tool_usage("--watch takes a number of seconds above 0 (at most 86400), "
				                     "not '%s'", a.val);
			break;
		case O_JSON: o.json = true; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	int npids = a.nops;
	if (npids <= 0)
		return et_tool_usage("no PID given");
	/* --jit with --profile: the parser refuses the pair (one group) */
	struct cproc *ps = calloc((size_t)npids, sizeof *ps);
	if (!ps) {
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	int rc = ET_EXIT_OK;
	size_t n = 0;
	for (int i = 0; i < npids; i++) {
		const char *w = a.ops[i];
		long pid;
		if (et_tool_parse_pid(w, &pid)) {
			rc = et_tool_usage("'%s' is not a process id", w);
			goto out;
		}
		for (size_t k = 0; k < n; k++)
			if (ps[k].pid == pid)
				goto next;
		ps[n].pid = pid;
		ps[n].pidfd = -1;
		n++;
	next:;
	}
	kernel_facts(&o);
	if (o.profile_path) {
		if (et_tool_profile_load(&o.prof, o.profile_path) != 0) {
			rc = ET_EXIT_BAD;
			goto out;
		}
		o.have_prof = true;
	}
	/* Every PID names a process, up front: nothing is done for any when one
	 * is wrong. */
	for (size_t i = 0; i < n; i++) {
		struct cproc *p = &ps[i];
		p->pidfd = pidfd_open_(p->pid);
		if (p->pidfd < 0 && errno == ESRCH) {
			et_tool_err("PID %ld: no such process", p->pid);
			rc = ET_EXIT_BAD;
			goto out;
		}
		if (p->pidfd < 0 && errno == ENOSYS && kill((pid_t)p->pid, 0) != 0 && errno == ESRCH) {
			et_tool_err("PID %ld: no such process", p->pid);
			rc = ET_EXIT_BAD;
			goto out;
		}
		if (p->pidfd < 0) {
			et_tool_err("PID %ld: pidfd_open: %s (process_madvise needs a pidfd: Linux 5.10 or later)",
			            p->pid, strerror(errno));
			rc = ET_EXIT_BAD;
			goto out;
		}
		if (et_tool_refuse_kthread("/proc", p->pid)) {
			rc = ET_EXIT_BAD;
			goto out;
		}
		read_comm(p);
	}

	sigset_t blocked, old;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGTERM);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	if (o.watch > 0) {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigprocmask(SIG_BLOCK, &blocked, &old);
	}
	bool any_bad = false;
	for (unsigned round = 0;; round++) {
		bool watching = round > 0;
		bool print_any = false;
		for (size_t i = 0; i < n; i++) {
			struct cproc *p = &ps[i];
			if (p->gone || p->denied || p->fatal)
				continue;
			int err = round_proc(p, &o);
			if (err == -ENOENT) {
				p->gone = true;
				if (!o.json)
					printf("PID %ld (%s): exited\n", p->pid, p->comm);
			} else if (err == -EACCES || err == -EPERM) {
				p->denied = true;
				et_tool_err("PID %ld: permission denied reading /proc/%ld/smaps: collapsing its "
				            "memory needs ptrace read access to it (the same user and a dumpable "
				            "process, or CAP_SYS_PTRACE; Yama's ptrace_scope limits attaching only) "
				            "and CAP_SYS_NICE", p->pid, p->pid);
				any_bad = true;
			} else if (err) {
				et_tool_err("PID %ld: %s", p->pid, strerror(-err));
				p->denied = true;
				any_bad = true;
			}
			if (p->fatal == EPERM || p->fatal == EACCES || p->fatal == ENOSYS)
				any_bad = true;
		}
		/* report */
		if (o.json) {
			bool changed = !watching;
			for (size_t i = 0; i < n && !changed; i++) {
				changed = ps[i].gone && !ps[i].said_gone;
				for (size_t k = 0; k < ps[i].n && !changed; k++)
					changed = shown(&ps[i].r[k], true);
			}
			if (changed) {
				struct et_json j;
				json_head(&j, &o, round);
				for (size_t i = 0; i < n; i++) {
					if (watching && (ps[i].denied || ps[i].said_gone))
						continue;
					proc_json(&j, &ps[i], &o, watching);
					ps[i].said_gone = ps[i].gone;
				}
				et_json_arr_end(&j);
				et_json_obj_end(&j);
				et_json_end(&j);
				print_any = true;
			}
		} else {
			for (size_t i = 0; i < n; i++)
				if (!ps[i].denied && (!ps[i].gone || (!watching && ps[i].n)))
					proc_text(&ps[i], &o, watching);
			print_any = true;
		}
		if (print_any)
			fflush(stdout);
		if (o.watch <= 0 || stop)
			break;
		size_t alive = 0;
		for (size_t i = 0; i < n; i++)
			alive += !ps[i].gone && !ps[i].denied && !ps[i].fatal;
		if (!alive)
			break;
		wait_round(ps, n, o.watch, &old, !o.json);
		fflush(stdout);
		if (stop)
			break;
	}
	if (o.watch > 0)
		sigprocmask(SIG_SETMASK, &old, NULL);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ps[i].n; k++)
			if (!o.dry && range_small(&ps[i].r[k]) && !ps[i].gone)
				any_bad = true;
	rc = any_bad ? ET_EXIT_BAD : ET_EXIT_OK;
out:
	for (size_t i = 0; i < n; i++) {
		if (ps[i].pidfd >= 0)
			close(ps[i].pidfd);
		for (size_t k = 0; k < ps[i].n; k++)
			range_free(&ps[i].r[k]);
		free(ps[i].r);
	}
	free(ps);
	if (o.have_prof)
		et_profile_free(&o.prof);
	return rc;
}
