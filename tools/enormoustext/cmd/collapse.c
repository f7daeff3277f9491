/*
 * tools/enormoustext/cmd/collapse.c — `enormoustext collapse PID... [--jit]
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
 * The command in three files, parse -> act -> print: this one parses the
 * command line, opens the targets and drives the rounds; collapse_act.c
 * reads the mappings and asks the kernel; collapse_print.c reports each
 * round.
 *
 * Owns: `collapse`: its options, the targets opened (one pidfd each), the
 * rounds of --watch and how they end (every target gone, SIGINT/SIGTERM),
 * the exit status.
 * May call: collapse_act.c, collapse_print.c, core (profile), profiles.c
 * (the profile loaded), opts.c, msg.c, common.c.
 * Never: touches the target in any other way than MADV_COLLAPSE (its
 * contents, protections and mappings stay as they are); with --dry-run,
 * not even that.
 */
#include "collapse.h"
#include "opts.h"
#include "profiles.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
	.sections = { { NULL, options, NULL } },
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

/* ------------------------------------------------------------ rounds */

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

/* The command line into o and its PIDs, each once, into *ps (*n of them;
 * the caller frees *ps, also on failure).  false: stop with *rc. */
static bool parse(int argc, char **argv, struct copts *o, struct cproc **ps, size_t *n, int *rc)
{
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_JIT: o->jit = true; break;
		case O_PROFILE: o->profile_path = a.val; break;
		case O_DRY_RUN: o->dry = true; break;
		case O_WATCH:
			if (parse_seconds(a.val, &o->watch)) {
				*rc = et_tool_usage("--watch takes a number of seconds above 0 (at most 86400), "
				                    "not '%s'", a.val);
				return false;
			}
			break;
		case O_JSON: o->json = true; break;
		}
	}
	if (c < 0) {
		*rc = et_args_exit(c);
		return false;
	}
	int npids = a.nops;
	if (npids <= 0) {
		*rc = et_tool_usage("no PID given");
		return false;
	}
	/* --jit with --profile: the parser refuses the pair (one group) */
	*ps = calloc((size_t)npids, sizeof **ps);
	if (!*ps) {
		et_tool_err("out of memory");
		*rc = ET_EXIT_BAD;
		return false;
	}
	for (int i = 0; i < npids; i++) {
		const char *w = a.ops[i];
		long pid;
		if (et_tool_parse_pid(w, &pid)) {
			*rc = et_tool_usage("'%s' is not a process id", w);
			return false;
		}
		for (size_t k = 0; k < *n; k++)
			if ((*ps)[k].pid == pid)
				goto next;
		(*ps)[*n].pid = pid;
		(*ps)[*n].pidfd = -1;
		(*n)++;
	next:;
	}
	return true;
}

/* The kernel's facts, the profile, and a pidfd for each PID: every PID
 * names a process, up front, for nothing is done for any when one is
 * wrong.  ET_EXIT_OK, or ET_EXIT_BAD after one line. */
static int open_targets(struct copts *o, struct cproc *ps, size_t n)
{
	et_collapse_kernel_facts(o);
	if (o->profile_path) {
		if (et_tool_profile_load(&o->prof, o->profile_path) != 0)
			return ET_EXIT_BAD;
		o->have_prof = true;
	}
	for (size_t i = 0; i < n; i++) {
		struct cproc *p = &ps[i];
		p->pidfd = et_collapse_pidfd_open(p->pid);
		if (p->pidfd < 0 && errno == ESRCH) {
			et_tool_err("PID %ld: no such process", p->pid);
			return ET_EXIT_BAD;
		}
		if (p->pidfd < 0 && errno == ENOSYS && kill((pid_t)p->pid, 0) != 0 && errno == ESRCH) {
			et_tool_err("PID %ld: no such process", p->pid);
			return ET_EXIT_BAD;
		}
		if (p->pidfd < 0) {
			et_tool_err("PID %ld: pidfd_open: %s (process_madvise needs a pidfd: Linux 5.10 or later)",
			            p->pid, strerror(errno));
			return ET_EXIT_BAD;
		}
		if (et_tool_refuse_kthread("/proc", p->pid))
			return ET_EXIT_BAD;
		et_collapse_read_comm(p);
	}
	return ET_EXIT_OK;
}

/* One round of every process still there: true when one could not be
 * read or collapsed at all (said on stderr). */
static bool act(struct cproc *ps, size_t n, struct copts *o)
{
	bool bad = false;
	for (size_t i = 0; i < n; i++) {
		struct cproc *p = &ps[i];
		if (p->gone || p->denied || p->fatal)
			continue;
		int err = et_collapse_round(p, o);
		if (err == -ENOENT) {
			p->gone = true;
			if (!o->json)
				printf("PID %ld (%s): exited\n", p->pid, p->comm);
		} else if (err == -EACCES || err == -EPERM) {
			p->denied = true;
			et_tool_err("PID %ld: permission denied reading /proc/%ld/smaps: collapsing its "
			            "memory needs ptrace read access to it (the same user and a dumpable "
			            "process, or CAP_SYS_PTRACE; Yama's ptrace_scope limits attaching only) "
			            "and CAP_SYS_NICE", p->pid, p->pid);
			bad = true;
		} else if (err) {
			et_tool_err("PID %ld: %s", p->pid, strerror(-err));
			p->denied = true;
			bad = true;
		}
		if (p->fatal == EPERM || p->fatal == EACCES || p->fatal == ENOSYS)
			bad = true;
	}
	return bad;
}

/* Act and report, once or (--watch) round after round until every target
 * is gone or SIGINT/SIGTERM; the exit status. */
static int rounds(struct cproc *ps, size_t n, struct copts *o)
{
	sigset_t blocked, old;
	sigemptyset(&blocked);
	sigemptyset(&old);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGTERM);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	if (o->watch > 0) {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigprocmask(SIG_BLOCK, &blocked, &old);
	}
	bool any_bad = false;
	for (unsigned round = 0;; round++) {
		if (act(ps, n, o))
			any_bad = true;
		et_collapse_report(ps, n, o, round);
		if (o->watch <= 0 || stop)
			break;
		size_t alive = 0;
		for (size_t i = 0; i < n; i++)
			alive += !ps[i].gone && !ps[i].denied && !ps[i].fatal;
		if (!alive)
			break;
		wait_round(ps, n, o->watch, &old, !o->json);
		fflush(stdout);
		if (stop)
			break;
	}
	if (o->watch > 0)
		sigprocmask(SIG_SETMASK, &old, NULL);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ps[i].n; k++)
			if (!o->dry && et_collapse_range_small(&ps[i].r[k]) && !ps[i].gone)
				any_bad = true;
	return any_bad ? ET_EXIT_BAD : ET_EXIT_OK;
}

int et_cmd_collapse(int argc, char **argv)
{
	struct copts o;
	memset(&o, 0, sizeof o);
	struct cproc *ps = NULL;
	size_t n = 0;
	int rc = ET_EXIT_OK;
	if (parse(argc, argv, &o, &ps, &n, &rc) && (rc = open_targets(&o, ps, n)) == ET_EXIT_OK)
		rc = rounds(ps, n, &o);
	for (size_t i = 0; i < n; i++) {
		if (ps[i].pidfd >= 0)
			close(ps[i].pidfd);
		for (size_t k = 0; k < ps[i].n; k++)
			et_collapse_range_free(&ps[i].r[k]);
		free(ps[i].r);
	}
	free(ps);
	if (o.have_prof)
		et_profile_free(&o.prof);
	return rc;
}
