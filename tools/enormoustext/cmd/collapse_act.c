/*
 * tools/enormoustext/cmd/collapse_act.c — what `enormoustext collapse` does to
 * a process (collapse.c drives it, round by round): read its executable
 * mappings from /proc/PID/smaps, trim each to its whole PMD windows or
 * leave it out with the reason, with --profile keep only the windows the
 * profile names hot (core/plan.c's et_plan_hot), ask the kernel for each
 * window with one process_madvise(MADV_COLLAPSE) call, and read smaps again
 * for what the kernel really did.
 *
 * Owns: collapse's targets (struct cproc, struct crange of collapse.h):
 * their mappings, the windows asked, the calls, the errno of each.
 * May call: core (smaps, plan's et_plan_hot, options, log, util), elffile.c
 * (a file's PT_LOADs and build-id, for --profile), msg.c, common.c.
 * Never: touches the target in any other way than MADV_COLLAPSE (its
 * contents, protections and mappings stay as they are), nor asks at all
 * with --dry-run; prints nothing but the one stderr line of an error that
 * stops every call for a process (the report is collapse_print.c's).
 */
#include "collapse.h"
#include "elffile.h"

#include "core/mm_flags.h"
#include "core/run.h"

#include <errno.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ------------------------------------------------------------ reasons */

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

void et_collapse_range_free(struct crange *r)
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
			et_collapse_range_free(&p->r[i]);
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

int et_collapse_pidfd_open(long pid)
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

bool et_collapse_range_small(const struct crange *r)
{
	return !r->left_out && r->after < r->asked;
}

/* ------------------------------------------------------------ rounds */

/* ------------------------------------------------------------ rounds */

/* One round for p (collapse.h). */
int et_collapse_round(struct cproc *p, struct copts *o)
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

void et_collapse_read_comm(struct cproc *p)
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

void et_collapse_kernel_facts(struct copts *o)
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
