/*
 * runtime/init.c — the constructor and the process's life-cycle.
 *
 * The constructor runs once per process, whether the library is preloaded,
 * linked, or both: it reads the options (one pass over environ), decides
 * whether this copy acts, and starts the first pass (runtime/pass.c),
 * which runs the pipeline over every loaded object:
 *
 *   options ─▶ sysinfo ─▶ objects ─▶ plan ─▶ remap ─▶ verify ─▶ report
 *
 * "Once" holds across copies too: if this copy (say, linked statically
 * into the program) finds another copy's public symbol first in the global
 * scope (say, a preloaded libenormoustext.so), it leaves the work to that
 * one and answers the API calls with its figures (runtime/other.c).
 *
 * In a secure-execution process (AT_SECURE) nothing is read from the
 * environment and nothing is done: the environment is the caller's, not
 * the program's.
 *
 * Loaded host-wide (/etc/ld.so.preload, runtime/hostwide.c) into a program
 * with too little text for a window and no variable of the library's in
 * its environment, the constructor reads none of the host's files: it
 * starts quick, and the first dlopen (runtime/pass.c's lazy_init) calls
 * hostwide_decide_later, which reads them, applies the program globs and
 * takes the host's settings.  Every process of the host runs this path:
 * its code is ET_STARTUP (core/base.h) and makes no call of libc's.
 *
 * Owns: the environment snapshot and its warnings, the start-up decisions
 * (off, quick, speak, act).
 * May call: core (options, log, sysinfo), runtime (objects: a count;
 * pass: the start and a snapshot of the figures; record; report; other).
 * Never: a system call or a symbol lookup in the common case (no text
 * segment as large as a huge page, nothing to say): it runs in every
 * process of a preloaded tree.
 */
#include "core/log.h"
#include "core/profile.h"
#include "core/options.h"
#include "core/sysinfo.h"
#include "runtime/defer.h"
#include "runtime/pass_locks.h"
#include "runtime/giveback.h"
#include "runtime/hostwide.h"
#include "runtime/jit.h"
#include "runtime/objects.h"
#include "runtime/other.h"
#include "runtime/pass.h"
#include "runtime/pipeline.h"
#include "runtime/record.h"
#include "runtime/report.h"
#include "runtime/sandbox.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

static int g_started;

/* Named by api.c, so that a static link that takes the API takes this
 * object, with its constructor, too. */
ET_HIDDEN extern const char et_init_linked;
const char et_init_linked = 1;

/*
 * Reading the options: the ENORMOUSTEXT* entries of the environment are
 * gathered in one pass over environ (seven getenv calls would scan it seven
 * times, at every start of every process of a preloaded tree); warnings
 * are kept until we know this copy is the one that speaks.
 */
extern char **environ;

struct pending_warning {
	const char *name, *value, *accepts;
};

/* Up to ET_ENV_KEEP entries are kept; with more (a long-lived shell that
 * exports everything), lookups scan environ itself: nothing is dropped, so
 * ENORMOUSTEXT=0 always wins. */
#define ET_ENV_KEEP 32
#define ET_UNKNOWN_KEEP 4

struct start_ctx {
	const char *env[ET_ENV_KEEP];
	int nenv;
	bool overflow;
	struct pending_warning w[ET_OPT__COUNT];
	int nwarn;
	/* ENORMOUSTEXT* variables that are not options (misspelt?) */
	const char *unknown[ET_UNKNOWN_KEEP];
	int nunknown;
};

/* If s starts with prefix, what follows it; else NULL.  Written out rather
 * than strncmp: on this path every first call of a libc function costs a
 * lazy symbol binding, in every process. */
ET_STARTUP static const char *after_prefix(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (*s != *prefix)
			return NULL;
	return s;
}

ET_STARTUP static void env_snapshot_take(struct start_ctx *c)
{
	c->nenv = 0;
	c->overflow = false;
	c->nunknown = 0;
	for (char **e = environ; e && *e; e++) {
		const char *v = *e;
		if (v[0] != 'E' || !after_prefix(v, "ENORMOUSTEXT"))
			continue;
		if (c->nenv < ET_ENV_KEEP)
			c->env[c->nenv++] = v;
		else
			c->overflow = true;
		if (!et_option_known(v)) {
			if (c->nunknown < ET_UNKNOWN_KEEP)
				c->unknown[c->nunknown] = v;
			c->nunknown++;
		}
	}
}

ET_STARTUP static const char *env_find(const struct start_ctx *c, const char *name)
{
	const char *const *list = c->env;
	int n = c->nenv;
	if (c->overflow) {
		list = (const char *const *)environ;
		n = -1;
	}
	for (int i = 0; n < 0 ? list && list[i] != NULL : i < n; i++) {
		const char *rest = after_prefix(list[i], name);
		if (rest && *rest == '=')
			return rest + 1;
	}
	return NULL;
}

/* The environment's value, else the host's setting (`enable --all`:
 * runtime/hostwide.c; NULL in a copy loaded any other way). */
ET_STARTUP static const char *env_get(const char *name, void *ctx)
{
	const char *v = env_find(ctx, name);
	return v ? v : et_hostwide_setting(name);
}

/* "ENORMOUSTEXT_VERBOS=1": one line naming it and the nearest real name. */
static void warn_unknown(const struct start_ctx *c)
{
	for (int i = 0; i < c->nunknown && i < ET_UNKNOWN_KEEP; i++) {
		char name[64];
		size_t n = 0;
		for (const char *p = c->unknown[i]; *p && *p != '=' && n + 1 < sizeof name; p++)
			name[n++] = *p;
		name[n] = '\0';
		const char *near = et_option_nearest(name);
		if (near)
			et_log(0, "%s is not a variable of libenormoustext (did you mean %s?): ignored", name, near);
		else
			et_log(0, "%s is not a variable of libenormoustext: ignored", name);
	}
	if (c->nunknown > ET_UNKNOWN_KEEP)
		et_log(0, "and %d more ENORMOUSTEXT* variables that are not libenormoustext's: ignored",
		       c->nunknown - ET_UNKNOWN_KEEP);
}

ET_STARTUP static void env_warn(const char *name, const char *value, const char *accepts, void *ctx)
{
	struct start_ctx *c = ctx;
	/* a bad value of the host's settings file is said by `enormoustext
	 * status`, never by every process of the host */
	if (!env_find(c, name))
		return;
	if (c->nwarn < ET_OPT__COUNT)
		c->w[c->nwarn++] = (struct pending_warning){ name, value, accepts };
}

/*
 * ENORMOUSTEXT_TOP_ONLY=1 (`enormoustext run --top-only`): the preload
 * stops at this process.  This library's own entry leaves LD_PRELOAD,
 * edited in place in the environment's own string (so environ and the
 * envp main gets agree; nothing is allocated): the programs this one
 * starts — a shell's commands, a shim's children — run without it.  An
 * entry is this library when it is the same file (device and inode), so
 * a relative or linked spelling goes too; other entries stay in order.
 * A LD_PRELOAD left empty stays set, empty (the loader ignores it).
 */
static void strip_own_preload(void)
{
	Dl_info self;
	struct stat me, st;
	if (!dladdr((void *)&strip_own_preload, &self) || !self.dli_fname || stat(self.dli_fname, &me) != 0)
		return;
	for (char **e = environ; e && *e; e++) {
		char *v = (char *)after_prefix(*e, "LD_PRELOAD=");
		if (!v)
			continue;
		char *out = v, name[4096];
		const char *p = v;
		while (*p) {
			size_t len = strcspn(p, ": ");
			bool ours = false;
			if (len > 0 && len < sizeof name) {
				memcpy(name, p, len);
				name[len] = '\0';
				ours = stat(name, &st) == 0 && st.st_dev == me.st_dev && st.st_ino == me.st_ino;
			}
			if (len > 0 && !ours) {
				if (out != v)
					*out++ = ':';
				memmove(out, p, len);
				out += len;
			}
			p += len;
			while (*p == ':' || *p == ' ')
				p++;
		}
		*out = '\0';
	}
}

/*
 * Start-up.  The common case — no text segment as large as a huge page,
 * nothing to say — must cost next to nothing: one pass over environ and
 * one over the loaded objects, no system call, no symbol lookup.
 */
static void stats_read(const struct et_run *run, void *st)
{
	et_report_stats(run, st);
}

/* The first pass, then the summary line and the report: in the
 * constructor, or on the deferred worker (runtime/defer.c). */
/*
 * ENORMOUSTEXT_HOT=auto: while the worker waits, the process samples where
 * it executes (runtime/record.c: perf_event_open, or a CPU-time timer);
 * at the end of the deferral the samples become a profile in memory and
 * the pass moves only the hot windows, as ENORMOUSTEXT_PROFILE would (by
 * ENORMOUSTEXT_HOT_COVERAGE and _BUDGET).  Too few samples to tell (a
 * process that slept through the deferral): every window moves, and one
 * line at verbosity 1 says so.
 */
#define ET_HOT_AUTO_MIN_SAMPLES 50
static bool g_hot_auto;

static void hot_auto_take(void)
{
	struct et_profile p;
	size_t n = 0;
	int e = et_record_take_profile(&p, &n);
	if (e == 0 && n >= ET_HOT_AUTO_MIN_SAMPLES) {
		et_log(2, "ENORMOUSTEXT_HOT=auto: %zu samples during the deferral: the hot windows move", n);
		et_pipeline_use_profile(&p);
		return;
	}
	if (e == 0)
		et_profile_free(&p);
	char eb[24];
	if (e == 0 || e == -ENODATA)
		et_log(1, "ENORMOUSTEXT_HOT=auto: %zu samples during the deferral, too few to tell: every window moves", n);
	else
		et_log(1, "ENORMOUSTEXT_HOT=auto: no profile from the samples (%s): every window moves",
		       et_errno_text(-e, eb));
}

/* In the constructor: sample for ENORMOUSTEXT_HOT=auto, when it can mean
 * something (a deferral to sample in, no profile given, no recording of
 * the process's own). */
static void hot_auto_start(const struct et_run *run)
{
	if (run->quick)
		return;
	if (!run->opt.defer_ns)
		et_log(0, "ENORMOUSTEXT_HOT=auto samples during ENORMOUSTEXT_DEFER, which is 0: every window moves");
	else if (run->opt.profile)
		et_log(1, "ENORMOUSTEXT_HOT=auto: ENORMOUSTEXT_PROFILE is given and is used instead");
	else if (run->opt.record)
		et_log(1, "ENORMOUSTEXT_HOT=auto: ENORMOUSTEXT_RECORD samples this process for its file: "
		          "every window moves");
	else {
		et_record_start(NULL);
		g_hot_auto = true;
	}
}

/* The worker's due and on_due: priming tries (runtime/pass.c) and the
 * memory cgroup's watch (runtime/giveback.c), whichever comes first. */
static uint64_t next_due(void)
{
	uint64_t a = et_pass_prime_due(), b = et_giveback_due();
	return !a ? b : !b ? a : a < b ? a : b;
}

static void on_due(void)
{
	uint64_t a = et_pass_prime_due();
	if (a && a <= et_now_ns()) {
		et_pass_prime_later();
		et_giveback_arm();
	}
	et_giveback_tick();
}

static void serve(void)
{
	et_pass_serve();
	et_giveback_arm();
}

static void start_and_report(void)
{
	struct et_run *run = et_pass_state();
	if (g_hot_auto)
		hot_auto_take();
	if (run->opt.enabled) {
		et_pass_start();
		et_pass_pace();   /* ENORMOUSTEXT_DEFER_RATE: on the worker, the pieces left */
	}
	/* the figures as the API gives them (a pass that was asked for
	 * meanwhile runs first) */
	struct enormoustext_stats st = { .size = sizeof st };
	if (run->ran)
		et_pass_read(stats_read, &st);
	et_report_log(run, &st);
	__atomic_store_n(&run->summarised, true, __ATOMIC_RELEASE);
	if (run->opt.report)
		et_report_write(run);
	if (run->ran)
		et_giveback_arm();
}

/* "1 s", "1.5 s", "20 ms": a duration for a line. */
static const char *secs(char *buf, size_t cap, uint64_t ns)
{
	uint64_t ms = (ns + 500000ull) / 1000000ull;
	if (ms < 1000)
		snprintf(buf, cap, "%llu ms", (unsigned long long)ms);
	else if (ms % 1000 == 0)
		snprintf(buf, cap, "%llu s", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, cap, "%llu.%02llu s", (unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000 / 10));
	return buf;
}

/*
 * A process that ends within the deferral (clang --version: 50 ms) moved
 * nothing.  Asked to speak (ENORMOUSTEXT_VERBOSE>=1) or to report
 * (ENORMOUSTEXT_REPORT), it says so, and the report says so too; asked
 * for neither, exit costs one load.  Not in a fork's child (it has no
 * worker: defer.c), nor after the worker began (it reports for itself).
 */
ET_STARTUP __attribute__((destructor)) static void ended_first(void)
{
	if (et_defer_tick_armed)
		et_defer_tick_exit();
	struct et_run *run = et_pass_state();
	if (!run->opt.enabled || (run->opt.verbose < 1 && !run->opt.report))
		return;
	uint64_t lived, delay;
	if (!et_defer_end_if_waiting(&lived, &delay))
		return;
	static char detail[96];
	char a[32], b[32];
	snprintf(detail, sizeof detail, "it ended after %s, the deferral is %s", secs(a, sizeof a, lived),
	         secs(b, sizeof b, delay));
	et_log(1, "ended after %s, before the %s deferral (ENORMOUSTEXT_DEFER): nothing moved", a, b);
	run->reason = ET_R_ENDED_FIRST;
	run->reason_detail = detail;
	if (run->opt.report)
		et_report_write(run);
}

/* No warning said after start-up: the host's bad values are said by
 * `enormoustext status`, never by a process. */
static void warn_none(const char *name, const char *value, const char *accepts, void *ctx)
{
	(void)name, (void)value, (void)accepts, (void)ctx;
}

/*
 * The host-wide decision the constructor put off (a program with too
 * little text, nothing in its environment): at the first dlopen or API
 * call (runtime/pass.c's lazy_init).  Nothing read where a sandbox is
 * known or in force (runtime/sandbox.c); the options are the host's alone
 * (the environment had none of the library's at start-up), applied as the
 * constructor applies them.  False: the library stands down.
 */
static bool hostwide_decide_later(struct et_run *run)
{
	const char *why = NULL;
	if (et_sandbox_blocks(&why)) {
		run->reason = ET_R_SANDBOX;
		run->reason_detail = why;
		return false;
	}
	if (et_hostwide_stands_down()) {
		run->reason = ET_R_OFF;
		return false;
	}
	struct start_ctx c = { .nenv = 0, .nwarn = 0 };
	et_options_parse(&run->opt, env_get, warn_none, &c);
	/* nothing of the library's in the environment: silent but at the
	 * verbosity the host's settings ask for (as the constructor) */
	et_log_setup(run->opt.verbose, run->opt.verbose == 0);
	if (!run->opt.enabled) {
		run->reason = ET_R_OFF;
		return false;
	}
	if ((run->opt.mode & ET_MODE_JIT) && !et_other_find())
		et_jit_start(&run->opt);
	if (!(run->opt.mode & ET_MODE_TEXT)) {
		run->opt.enabled = false;
		run->reason = ET_R_MODE;
		return false;
	}
	return true;
}

/* Loaded host-wide (/etc/ld.so.preload): a program with too little text
 * for a window and no variable of the library's in its environment starts
 * quick, the host's files left for decide_later; any other reads them now
 * (after the sandbox's check).  True when the constructor is done. */
ET_STARTUP static bool hostwide_start(struct et_run *run, const struct start_ctx *c)
{
	uint64_t seg = 0, fl = et_pmd_size_floor();
	(void)et_objects_collect(NULL, 0, &seg, &run->quick_text);
	if (c->nenv == 0 && !c->overflow && fl && seg < fl) {
		/* the quick start-up below, with the options left for
		 * decide_later to read (nothing reads them before it) */
		run->decide_later = hostwide_decide_later;
		run->ran = true;
		run->quick = true;
		run->si.pmd_size = fl;
		et_pass_start_quick();
		return true;
	}
	/* a seccomp filter in force (systemd's SystemCallFilter=) may
	 * kill for the readlink the host-wide check makes: stand down
	 * first, silently (ENORMOUSTEXT_SECCOMP=trust in the
	 * environment, not the host's settings, says otherwise) */
	const char *t = env_find(c, "ENORMOUSTEXT_SECCOMP");
	const char *why = NULL;
	if (!(t && strcmp(t, "trust") == 0) && et_sandbox_blocks(&why)) {
		run->reason = ET_R_SANDBOX;
		run->reason_detail = why;
		return true;
	}
	if (et_hostwide_stands_down()) {
		run->reason = ET_R_OFF;
		return true;
	}
	return false;
}

/* A seccomp filter (systemd's SystemCallFilter=, a sandbox the parent
 * installed) may kill for any call the program never makes: where one
 * is in force, nothing of the library's makes a call (runtime/sandbox.c).
 * Asked only where something would act now (a quick start-up makes no
 * call; a later pass checks again).  True when the library stands down. */
ET_STARTUP static bool sandbox_stands_down(struct et_run *run, bool silenced)
{
	const char *sandbox_why = NULL;
	if (!et_sandbox_blocks(&sandbox_why))
		return false;
	et_log_setup(run->opt.verbose, silenced);
	run->reason = ET_R_SANDBOX;
	run->reason_detail = sandbox_why;
	et_log(1, "%s: the library stands down (no text moved, no sampling, no JIT advice)", sandbox_why);
	return true;
}

/* From here on this copy acts or speaks: unless another copy of the
 * library in this process does.  The warnings kept, then the first pass:
 * now, or on the deferred worker (nobjs: the objects loaded now). */
ET_STARTUP static void act_or_speak(struct et_run *run, const struct start_ctx *c, bool silenced, size_t nobjs)
{
	if (et_other_find_in_constructor())
		return;
	et_log_setup(run->opt.verbose, silenced);
	for (int i = 0; i < c->nwarn; i++)
		et_log(0, "%s=%s is not valid: it accepts %s; using the default", c->w[i].name,
		       c->w[i].value, c->w[i].accepts);
	warn_unknown(c);
	/* ENORMOUSTEXT_DEFER: the same work, later, on a worker thread; when
	 * no thread can be made (seccomp, RLIMIT_NPROC, a static program),
	 * here and now, with a line that says why. */
	if (run->opt.enabled && run->opt.hot_auto)
		hot_auto_start(run);
	if (run->opt.enabled && run->opt.defer_rate && !run->opt.defer_ns && !run->quick)
		et_log(0, "ENORMOUSTEXT_DEFER_RATE paces the deferred worker, and ENORMOUSTEXT_DEFER is 0: ignored");
	if (run->opt.enabled && run->opt.defer_ns && !run->quick) {
		et_pass_reserve(nobjs + 8);
		/* on the program's own thread while it has no other, unless the
		 * work needs a thread of its own: sampling during the deferral
		 * (HOT=auto, RECORD), pacing (DEFER_RATE), or it is asked for */
		/* on the stack: a static table of pointers is a relocation in
		 * every process the library loads into */
		const struct et_defer_jobs jobs = { start_and_report, serve, next_due, on_due, et_pass_locks_busy };
		bool on_main = run->opt.defer_main && !run->opt.hot_auto && !run->opt.record && !run->opt.defer_rate;
		int e = et_defer_start(run->opt.defer_ns, &jobs, on_main);
		if (e == 0)
			return;
		char eb[24];
		et_log(1, "ENORMOUSTEXT_DEFER: no worker thread (%s): text moved at start-up",
		       et_errno_text(e, eb));
	}
	start_and_report();
}

/* The start-up decisions: off, the host-wide list, the options, the
 * sandbox, recording and JIT, quick, then act or speak (act_or_speak). */
ET_STARTUP __attribute__((constructor)) static void et_constructor(void)
{
	struct et_run *run = et_pass_state();
	if (__atomic_exchange_n(&g_started, 1, __ATOMIC_ACQ_REL))
		return;
	if (getauxval(AT_SECURE)) {
		run->reason = ET_R_SECURE;
		return;
	}
	/* the off switch, /etc/enormoustext/off: nothing, silently, whatever
	 * loaded this copy (runtime/hostwide.c) */
	if (et_hostwide_off()) {
		run->reason = ET_R_OFF;
		return;
	}
	struct start_ctx c = { .nenv = 0, .nwarn = 0 };
	env_snapshot_take(&c);
	/* /etc/ld.so.preload: only the listed programs (runtime/hostwide.c).
	 * The host's files are read where their answer matters now: a program
	 * with too little text for a window, and no variable of the library's
	 * in its environment, has nothing to move, to arm or to say before its
	 * first dlopen, which decides (decide_later); it starts as an empty
	 * preloaded library would (bench/startup-cost --hostwide). */
	if (et_hostwide_loaded() && hostwide_start(run, &c))
		return;
	et_options_parse(&run->opt, env_get, env_warn, &c);
	if (run->opt.top_only)
		strip_own_preload();
	/* Host-wide (enable --all) with nothing of the library's in the
	 * environment, nobody asked this process for a word: not even a
	 * warning about the host's settings (ENORMOUSTEXT_PROFILE gone, a
	 * PERFMAP that cannot be written) unless the settings ask for
	 * ENORMOUSTEXT_VERBOSE; `enormoustext status` says what is wrong. */
	bool silenced = (run->opt.verbose_set && run->opt.verbose == 0) ||
	                (c.nenv == 0 && !c.overflow && et_hostwide_settings_used() && run->opt.verbose == 0);
	if (!run->opt.enabled)
		run->reason = ET_R_OFF;
	/* ENORMOUSTEXT_MODE: 2 is JIT code only (file text left alone), 3 both
	 * (runtime/jit.c: armed here, once, by the copy that acts) */
	bool jit = run->opt.enabled && (run->opt.mode & ET_MODE_JIT);
	bool text = run->opt.enabled && (run->opt.mode & ET_MODE_TEXT);

	uint64_t max_seg = 0;
	size_t nobjs = et_objects_collect(NULL, 0, &max_seg, &run->quick_text);
	uint64_t floor = et_pmd_size_floor();
	/* "quick": nothing to move now; "account": the user wants every object
	 * described, which needs the whole pipeline anyway. */
	bool quick = floor && max_seg < floor;
	bool account = run->opt.enabled && (run->opt.verbose >= 2 || run->opt.report);
	et_sandbox_trust(run->opt.seccomp_trust);
	if ((run->opt.record || jit || (text && (!quick || account))) && sandbox_stands_down(run, silenced))
		return;

	/* recording is independent of moving text (a baseline can be recorded
	 * with ENORMOUSTEXT=0) */
	if (run->opt.record) {
		et_log_setup(run->opt.verbose, silenced);
		et_record_start(run->opt.record);
	}
	if (run->opt.enabled && !(run->opt.mode & ET_MODE_TEXT)) {
		run->opt.enabled = false;
		run->reason = ET_R_MODE;
	}
	if (jit && !et_other_find_in_constructor()) {
		et_log_setup(run->opt.verbose, silenced);
		et_jit_start(&run->opt);
	}
	bool speak = ((c.nwarn > 0 || c.nunknown > 0) && !silenced) || run->opt.verbose >= 1 || run->opt.report;

	/* Whatever is loaded later (dlopen) is handled unless the library is
	 * off or another copy does the work; that check costs a symbol lookup,
	 * so in the quick case it waits until a dlopen needs it. */
	if (run->opt.enabled && quick && !account) {
		run->ran = true;
		run->quick = true;
		run->si.pmd_size = floor;
		if (!speak) {
			et_log_setup(run->opt.verbose, silenced);
			et_pass_start_quick();
			return;
		}
	}
	if (!run->opt.enabled && !speak)
		return;
	act_or_speak(run, &c, silenced, nobjs);
}
