/*
 * tools/enormoustext/compare.c — `enormoustext compare [--runs N] [--json]
 * -- COMMAND [ARGS...]`: is the library worth it for this program, on this
 * machine?  COMMAND runs plain and with the library, alternated (one
 * warm-up pair first, not counted), and the answer is the ratio of their
 * times with its spread, what the library cost (its report: CPU, MiB
 * copied and zero-copy; the text's Pss and huge share, from smaps in one
 * more pair, untimed), the iTLB misses of both — from the PMU where the kernel gives
 * them (perf_event_open: the generic iTLB read-miss event, and the
 * vendor's completed-walk event where known), else from the model
 * (itlbgrind, one more run of each under Valgrind) — and one verdict line.
 *
 * Owns: `compare`: the runs, their measures, the ratios and the verdict.
 * May call: preload.c (the library, LD_PRELOAD), core (json), msg.c,
 * common.c.
 * Never: changes the command's environment beyond LD_PRELOAD and
 * ENORMOUSTEXT_REPORT (the library run) and taking the library out of
 * LD_PRELOAD (the plain run); runs it through a shell; leaves a child.
 */
#include "tool.h"
#include "opts.h"
#include "preload.h"
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { O_RUNS = 1, O_BUDGET, O_WARMUP, O_COUNTERS, O_MODEL, O_LIB, O_JSON };

/* The rule's figures: the noise threshold (1%), the interval's confidence
 * (95%, two-sided), the pairs a budget may add up to. */
#define NOISE 0.01
#define ALPHA 0.05
#define MIN_INTERVAL_PAIRS 6    /* the fewest pairs with a 95% interval of the median */
#define MAX_PAIRS 1000

static const struct et_opt options[] = {
	{ "runs", 'n', "N",
	  "pairs of runs measured (plain, library), alternated, at least;\n"
	  "more are run until the verdict is clear or --budget is spent [6]",
	  O_RUNS, 0, 0, 0, NULL, 0 },
	{ "budget", 0, "SECONDS",
	  "time the pairs may take, warm-up included: past --runs pairs,\n"
	  "none is begun that would end after it at the pace so far, and\n"
	  "the verdict is what the pairs show; 0: --runs pairs exactly [30]",
	  O_BUDGET, 0, 0, 0, NULL, 0 },
	{ "warmup", 0, "N", "pairs run first and not counted (page cache, priming) [1]", O_WARMUP, 0, 0, 0, NULL, 0 },
	{ "counters", 0, "SOURCE",
	  "where iTLB misses come from: pmu (the hardware counters), model (itlbgrind\n"
	  "under Valgrind: one more run of each, tens of times slower), none, or auto:\n"
	  "the PMU where the kernel gives it, else the model where installed [auto]",
	  O_COUNTERS, 0, 0, 0, "auto pmu model none", 0 },
	{ "model", 0, "CORE", "the core the model counts for [picked from /proc/cpuinfo, else goldencove]", O_MODEL, 0,
	  0, 0, "goldencove zen4 zen3 skylake neoverse-n1 neoverse-v1 neoverse-v2", 0 },
	{ "lib", 0, "PATH", "the library to preload [this command's]", O_LIB, 0, 0, 0, NULL, ET_COMP_FILE },
	{ "json", 'j', NULL, "one JSON document on stdout", O_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

/* The rule, as the output says it ("rule:", JSON "rule"). */
#define RULE_1 "worth it when the 95% interval of the median time ratio lies above 1.01,"
#define RULE_2 "costs more than it saves when it lies below 0.99, within the noise otherwise;"
#define RULE_3 "nothing to compare when the library moved no text in any of its runs"

static const struct et_cmd_spec spec = {
	.name = "compare",
	.forms = { { NULL, "[--] COMMAND [ARGS...]" } },
	.about = "Run COMMAND plain and with libenormoustext preloaded, alternated (A B A B...),\n"
	         "and say whether the library is worth it for it on this machine: the ratio of\n"
	         "their times (plain / library: above 1 the library makes it faster), its median\n"
	         "over the pairs and the 95% interval of that median, what the library cost (its\n"
	         "CPU, MiB copied and mapped zero-copy), the text's Pss and how much of it was\n"
	         "huge (one more pair, not timed, its smaps read while it runs), iTLB misses of\n"
	         "both, and one verdict, by this rule:\n"
	         "  worth it: the interval lies above 1.01 (faster by more than 1%);\n"
	         "  costs more than it saves: it lies below 0.99 (slower by more than 1%);\n"
	         "  within the noise: otherwise (it lies between, or reaches past 0.99 or 1.01\n"
	         "    when --budget is spent, or there are too few pairs for an interval);\n"
	         "  nothing to compare: the library moved no text in any of its runs (its\n"
	         "    report says so), whatever the times;\n"
	         "  behaves differently: COMMAND exited differently with the library.\n"
	         "The interval is distribution-free (the pairs' ratios' order statistics: 6\n"
	         "pairs at least).  After --runs pairs, more are run, one at a time, until the\n"
	         "interval lies wholly above 1.01, below 0.99 or between them, or --budget is\n"
	         "spent (the answer then is what the pairs show); so a program asked again gets\n"
	         "the same verdict unless its true ratio is near 0.99 or 1.01.  On a terminal,\n"
	         "standard error shows the pair, the time spent and the ratio so far.\n"
	         "The library acts by the environment's ENORMOUSTEXT_* variables (its defaults\n"
	         "where none is set); the plain runs have it taken out of LD_PRELOAD.\n"
	         "COMMAND's input is /dev/null and its output is thrown away; the exit status of\n"
	         "every run is compared.\n",
	.sections = { { NULL, options } },
	.tail = "iTLB misses are user-space counts of the whole process tree (PMU: the generic\n"
	        "iTLB read-miss event, and Intel's itlb_misses.walk_completed or AMD's\n"
	        "bp_l1_tlb_miss_l2_tlb_miss where the CPU is known), or the model's L1 iTLB\n"
	        "misses and page walks of the top process (itlbgrind: installed with the\n"
	        "enormoustext-itlbgrind package, or $ITLBGRIND_LIB, or this build tree's).\n"
	        "Where the machine has no hardware PMU counters (a VM without a virtual PMU),\n"
	        "the model's counts are the figure that shows a gain too small for the time\n"
	        "to show: one run of each under Valgrind, after the pairs, when the library\n"
	        "moved text; with its predicted share of cycles saved.  They never change the\n"
	        "verdict, which is the time's.\n"
	        "\n"
	        "Exit status: 0 both ran alike; 1 COMMAND could not run, a counter source asked\n"
	        "for is not there, or COMMAND exited differently with the library; 2 usage error.\n",
	.operand = ET_COMP_COMMAND,
	.in_order = true,
};

const struct et_cmd_spec *et_cmd_compare_spec(void)
{
	return &spec;
}

/* ------------------------------------------------------------ one run */

enum { V_PLAIN, V_LIB };
static const char *const vname[] = { "plain", "library" };

enum { C_INSTR, C_ITLB, C_WALK, C_N };

struct pmu {
	bool ok;
	char why[300];
	struct perf_event_attr attr[C_N];
	bool have[C_N];
	const char *event[C_N];
};

struct run {
	int variant;
	uint64_t wall_ns, cpu_ns;
	int status;                  /* the wait status */
	uint64_t text_pss_kib, text_huge_kib;  /* the last sample of smaps (0: none) */
	bool sampled;
	uint64_t cnt[C_N];
	bool counted[C_N];
	/* the library's report (library runs) */
	bool report;
	uint64_t huge_bytes, zero_copy_bytes, lib_cpu_ns;
	char reason[160];            /* its "reason" (why it did less than all) */
	/* the model's estimate of translation cycles (code and data) */
	bool estimated;
	uint64_t est_cycles;
};

/* Called every half second while a run goes on (the progress line). */
struct ticker {
	void (*fn)(void *arg);
	void *arg;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The executable mappings' Pss and huge kB of process pid, from smaps. */
static bool sample_text(pid_t pid, uint64_t *pss, uint64_t *huge)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool exec = false, any = false;
	uint64_t p = 0, h = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long v;
		char perms[8];
		/* a mapping's first line, "start-end perms ...", or one of its
		 * fields, "Name: value kB" (capitalised: never hex) */
		if (sscanf(line, "%*[0-9a-f]-%*[0-9a-f] %7s", perms) == 1) {
			exec = strchr(perms, 'x') != NULL;
			continue;
		}
		if (!exec)
			continue;
		if (sscanf(line, "Pss: %llu kB", &v) == 1) {
			p += v;
			any = true;
		} else if (sscanf(line, "AnonHugePages: %llu kB", &v) == 1 ||
		           sscanf(line, "FilePmdMapped: %llu kB", &v) == 1 ||
		           sscanf(line, "ShmemPmdMapped: %llu kB", &v) == 1 ||
		           sscanf(line, "Private_Hugetlb: %llu kB", &v) == 1 ||
		           sscanf(line, "Shared_Hugetlb: %llu kB", &v) == 1) {
			h += v;
		}
	}
	fclose(f);
	if (!any)
		return false;
	*pss = p;
	*huge = h;
	return true;
}

static int perf_open(struct perf_event_attr *a, pid_t pid)
{
	return (int)syscall(SYS_perf_event_open, a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The environment of a run: the plain one without this library in
 * LD_PRELOAD; the library's with it first and ENORMOUSTEXT_REPORT. */
struct envs {
	char **env[2];
};

static bool is_ours(const char *entry, const char *lib)
{
	if (!strcmp(entry, lib))
		return true;
	const char *b = strrchr(entry, '/');
	b = b ? b + 1 : entry;
	return !strncmp(b, "libenormoustext.so", strlen("libenormoustext.so"));
}

static char **make_env(const char *preload, const char *report, const char *lib)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **e = calloc(n + 3, sizeof *e);
	if (!e)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(environ[i], "LD_PRELOAD=", 11)) {
			if (preload)
				continue;
			/* the plain run: the entries that are not this library */
			const char *v = environ[i] + 11;
			char *out = malloc(strlen(environ[i]) + 1), *w;
			char *copy = strdup(v);
			if (!out || !copy) {
				free(out);
				free(copy);
				return NULL;
			}
			w = out + sprintf(out, "LD_PRELOAD=");
			bool first = true;
			for (char *save = NULL, *t = strtok_r(copy, ": ", &save); t; t = strtok_r(NULL, ": ", &save)) {
				if (is_ours(t, lib))
					continue;
				w += sprintf(w, "%s%s", first ? "" : ":", t);
				first = false;
			}
			free(copy);
			e[k++] = out;
			continue;
		}
		if (report && !strncmp(environ[i], "ENORMOUSTEXT_REPORT=", 20))
			continue;
		e[k++] = environ[i];
	}
	if (preload) {
		char *p = malloc(strlen(preload) + 12), *r = malloc(strlen(report) + 21);
		if (!p || !r) {
			free(p);
			free(r);
			return NULL;
		}
		sprintf(p, "LD_PRELOAD=%s", preload);
		sprintf(r, "ENORMOUSTEXT_REPORT=%s", report);
		e[k++] = p;
		e[k++] = r;
	}
	e[k] = NULL;
	return e;
}

/* A number after "key": in a JSON text (the first occurrence). */
static bool json_num(const char *text, const char *key, uint64_t *out)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(text, pat);
	if (!p)
		return false;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	char *end;
	unsigned long long v = strtoull(p, &end, 10);
	if (end == p)
		return false;
	*out = v;
	return true;
}

/* A string after "key": in a JSON text (the first occurrence), its escapes
 * \" and \\ undone (others kept as they are); "" when absent. */
static void json_str(const char *text, const char *key, char *out, size_t cap)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	out[0] = '\0';
	const char *p = strstr(text, pat);
	if (!p)
		return;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p++ != '"')
		return;
	size_t n = 0;
	for (; *p && *p != '"' && n + 1 < cap; p++) {
		if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
			p++;
		out[n++] = *p;
	}
	out[n] = '\0';
}

static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	for (;;) {
		if (!b)
			break;
		if (n + 1 >= cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
		}
		ssize_t r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (b)
		b[n] = '\0';
	return b;
}

/*
 * Run argv once with env; fills r.  Counters (pmu->ok) are opened on the
 * child before it execs (enable_on_exec, inherited by its children).  With
 * `sample`, its smaps are read while it runs (not in a timed run: reading
 * the smaps of a process holds its mmap lock, and clang --version ran
 * 0.76x to 1.2x of itself depending on where the reads fell).
 * With tick, tick->fn is called every half second while it runs.
 * Returns 0, or -1 when COMMAND could not be started (errno set).
 */
static int run_once(char **argv, char **env, struct pmu *pmu, const char *report, bool sample,
                    const struct ticker *tick, struct run *r)
{
	int go[2], ex[2];
	if (pipe2(go, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(ex, O_CLOEXEC) != 0) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	if (report)
		unlink(report);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(go[1]);
		close(ex[0]);
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
			if (nul > 2)
				close(nul);
		}
		char c;
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		execvpe(argv[0], argv, env);
		int e = errno;
		ssize_t w = write(ex[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	int fds[C_N] = { -1, -1, -1 };
	if (pmu && pmu->ok) {
		for (int c = 0; c < C_N; c++) {
			if (!pmu->have[c])
				continue;
			fds[c] = perf_open(&pmu->attr[c], pid);
			if (fds[c] < 0 && c == C_WALK)
				pmu->have[c] = false;   /* a vendor event this CPU refuses: without it */
		}
	}
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	uint64_t t0 = now_ns(), t1 = 0;
	if (write(go[1], "g", 1) != 1) {
		/* the child is gone already: its status says why */
	}
	close(go[1]);
	int eno = 0;
	memset(r->cnt, 0, sizeof r->cnt);
	memset(r->counted, 0, sizeof r->counted);
	r->sampled = false;
	r->text_pss_kib = r->text_huge_kib = 0;
	struct rusage ru;
	int st = 0;
	/* Sampled: smaps every 50 ms for the first second, then every 250 ms;
	 * the pidfd says at once when it ends.  Timed: only waited for (and
	 * the progress line drawn every half second). */
	if (pfd >= 0) {
		for (int n_tick = 0;; n_tick++) {
			struct pollfd p = { .fd = pfd, .events = POLLIN };
			int n = poll(&p, 1, sample ? (n_tick < 20 ? 50 : 250) : tick ? 500 : -1);
			if (n > 0)
				break;
			if (n < 0 && errno != EINTR)
				break;
			if (tick)
				tick->fn(tick->arg);
			if (!sample)
				continue;
			uint64_t ps, hg;
			if (sample_text(pid, &ps, &hg)) {
				r->text_pss_kib = ps;
				r->text_huge_kib = hg;
				r->sampled = true;
			}
		}
		t1 = now_ns();
		close(pfd);
	}
	while (wait4(pid, &st, 0, &ru) < 0) {
		if (errno != EINTR) {
			st = 0;
			memset(&ru, 0, sizeof ru);
			break;
		}
	}
	if (!t1)
		t1 = now_ns();
	ssize_t got = read(ex[0], &eno, sizeof eno);
	close(ex[0]);
	for (int c = 0; c < C_N; c++) {
		if (fds[c] < 0)
			continue;
		uint64_t v[3];
		if (read(fds[c], v, sizeof v) == (ssize_t)sizeof v && v[2] > 0) {
			/* scaled where the counter shared the PMU with others */
			r->cnt[c] = v[2] < v[1] ? (uint64_t)((double)v[0] * (double)v[1] / (double)v[2]) : v[0];
			r->counted[c] = true;
		}
		close(fds[c]);
	}
	if (got == (ssize_t)sizeof eno) {
		errno = eno;
		return -1;
	}
	r->wall_ns = t1 - t0;
	r->cpu_ns = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
	            ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
	r->status = st;
	r->report = false;
	r->huge_bytes = r->zero_copy_bytes = r->lib_cpu_ns = 0;
	if (report) {
		char *t = slurp(report);
		if (t && json_num(t, "huge_bytes", &r->huge_bytes)) {
			r->report = true;
			json_num(t, "zero_copy_bytes", &r->zero_copy_bytes);
			json_num(t, "cpu_ns", &r->lib_cpu_ns);
			json_str(t, "reason", r->reason, sizeof r->reason);
		}
		free(t);
	}
	return 0;
}

/* ------------------------------------------------------------ PMU */

/* This CPU, from /proc/cpuinfo (the first CPU's lines): the x86 vendor,
 * family and model, or on Arm vendor "ARM" (implementer 0x41) with the CPU
 * part as the model; -1 where absent. */
struct cpu_id {
	char vendor[64];
	int family, model;
};

static void cpu_id_read(struct cpu_id *id)
{
	char buf[256];
	id->vendor[0] = '\0';
	id->family = id->model = -1;
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return;
	while (fgets(buf, sizeof buf, f)) {
		if (!buf[0] || buf[0] == '\n')
			break;   /* the first CPU's lines only */
		if (!id->vendor[0])
			sscanf(buf, "vendor_id : %63s", id->vendor);
		if (id->family < 0)
			sscanf(buf, "cpu family : %d", &id->family);
		if (id->model < 0 && !strncmp(buf, "model\t", 6))
			sscanf(buf, "model : %d", &id->model);
		if (!strncmp(buf, "CPU implementer", 15) && strstr(buf, "0x41"))
			snprintf(id->vendor, sizeof id->vendor, "ARM");
		unsigned part = 0;
		if (!strncmp(buf, "CPU part", 8) && sscanf(buf, "CPU part : %x", &part) == 1)
			id->model = (int)part;
	}
	fclose(f);
}

/* The name of an errno perf_event_open gives ("ENOENT"), or its text. */
static const char *errno_name(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENODEV: return "ENODEV";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	case ENOSYS: return "ENOSYS";
	default: return strerror(e);
	}
}

/* Why the hardware counters cannot be had, as a sentence (p->why): no PMU
 * (ENOENT, EOPNOTSUPP, ENODEV for a hardware event: a VM without a virtual
 * PMU, a kernel without its driver), refused (the paranoid setting), or
 * the error itself. */
static void pmu_why(struct pmu *p, int e, const char *event)
{
	if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV) {
		snprintf(p->why, sizeof p->why,
		         "this machine has no hardware PMU counters (perf_event_open: %s for hardware events: "
		         "a VM without a virtual PMU?)", errno_name(e));
	} else if (e == EACCES || e == EPERM) {
		char par[16];
		if (et_tool_read("/proc/sys/kernel/perf_event_paranoid", par, sizeof par) <= 0)
			snprintf(par, sizeof par, "?");
		snprintf(p->why, sizeof p->why,
		         "the hardware PMU counters are refused to this process (perf_event_open: %s; "
		         "kernel.perf_event_paranoid is %s: 2 or less lets a user count their own programs)",
		         errno_name(e), par);
	} else {
		snprintf(p->why, sizeof p->why, "the hardware PMU counters cannot be opened (perf_event_open: %s "
		         "for the hardware event '%s')", errno_name(e), event);
	}
}

/* The hardware counters: instructions and the generic iTLB read misses
 * must open on this process (else pmu->why says why), and the vendor's
 * completed-walk event where the CPU is one we know. */
static void pmu_probe(struct pmu *p)
{
	memset(p, 0, sizeof *p);
	for (int c = 0; c < C_N; c++) {
		struct perf_event_attr *a = &p->attr[c];
		a->size = sizeof *a;
		a->disabled = 1;
		a->enable_on_exec = 1;
		a->inherit = 1;
		a->exclude_kernel = 1;
		a->exclude_hv = 1;
		a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	}
	p->attr[C_INSTR].type = PERF_TYPE_HARDWARE;
	p->attr[C_INSTR].config = PERF_COUNT_HW_INSTRUCTIONS;
	p->event[C_INSTR] = "instructions";
	p->attr[C_ITLB].type = PERF_TYPE_HW_CACHE;
	p->attr[C_ITLB].config = PERF_COUNT_HW_CACHE_ITLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
	                         (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	p->event[C_ITLB] = "iTLB-load-misses";
	p->have[C_INSTR] = p->have[C_ITLB] = true;
	for (int c = 0; c <= C_ITLB; c++) {
		struct perf_event_attr a = p->attr[c];
		a.enable_on_exec = 0;
		int fd = perf_open(&a, 0);
		if (fd < 0) {
			pmu_why(p, errno, p->event[c]);
			return;
		}
		close(fd);
	}
	/* the vendor's walk event, raw, on the core PMU ("cpu", or on a
	 * hybrid part "cpu_core") */
	struct cpu_id id;
	cpu_id_read(&id);
	const char *vendor = id.vendor;
	const int family = id.family;
	uint64_t raw = 0;
	if (!strcmp(vendor, "GenuineIntel") && family == 6) {
		raw = 0x0e85;   /* ITLB_MISSES.WALK_COMPLETED: event 0x85, umask 0x0e (Haswell on) */
		p->event[C_WALK] = "itlb_misses.walk_completed";
	} else if (!strcmp(vendor, "AuthenticAMD") && family >= 0x17) {
		raw = 0xff85;   /* BP_L1_TLB_MISS_L2_TLB_MISS: event 0x85, umask 0xff (Zen) */
		p->event[C_WALK] = "bp_l1_tlb_miss_l2_tlb_miss";
	}
	if (raw) {
		uint32_t type = PERF_TYPE_RAW;
		char t[32];
		if (et_tool_read("/sys/bus/event_source/devices/cpu_core/type", t, sizeof t) > 0)
			type = (uint32_t)strtoul(t, NULL, 10);
		p->attr[C_WALK].type = type;
		p->attr[C_WALK].config = raw;
		struct perf_event_attr a = p->attr[C_WALK];
		a.enable_on_exec = 0;
		int fd = perf_open(&a, 0);
		if (fd >= 0) {
			close(fd);
			p->have[C_WALK] = true;
		}
	}
	p->ok = true;
}

/* Can COMMAND be executed, found as execvp finds it?  errno says why not. */
static bool runnable(const char *cmd)
{
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	const char *path = getenv("PATH");
	char *copy = strdup(path && *path ? path : "/usr/local/bin:/bin:/usr/bin");
	int err = ENOENT;
	bool ok = false;
	for (char *save = NULL, *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !ok;
	     d = strtok_r(NULL, ":", &save)) {
		char p[PATH_MAX];
		if (snprintf(p, sizeof p, "%s/%s", d, cmd) >= (int)sizeof p)
			continue;
		if (access(p, X_OK) == 0)
			ok = true;
		else if (errno == EACCES)
			err = EACCES;
	}
	free(copy);
	if (!ok)
		errno = err;
	return ok;
}

/* ------------------------------------------------------------ model */

struct model {
	char lib[PATH_MAX];   /* VALGRIND_LIB to set, or "" (the tool is in valgrind's own directory) */
	char core[32];
	char why[200];
	bool ok;
};

static bool tool_in(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/itlbgrind-amd64-linux", dir);
	return access(p, X_OK) == 0;
}

/* The core the model counts for: this CPU's where it is one of the model's. */
static void pick_core(char *out, size_t cap)
{
	struct cpu_id id;
	cpu_id_read(&id);
	const char *vendor = id.vendor;
	const int family = id.family, model = id.model;
	const char *c = "goldencove";
	if (!strcmp(vendor, "GenuineIntel") && family == 6) {
		switch (model) {
		case 85: case 94: case 78: case 142: case 158: case 165: c = "skylake"; break;
		default: c = "goldencove"; break;
		}
	} else if (!strcmp(vendor, "AuthenticAMD")) {
		c = family == 0x19 && model >= 0x10 ? "zen4" : family >= 0x17 && family < 0x1a ? "zen3" : "zen4";
	} else if (!strcmp(vendor, "ARM")) {
		c = model == 0xd0c ? "neoverse-n1" : model == 0xd40 ? "neoverse-v1" : model == 0xd4f ? "neoverse-v2" : "neoverse-n1";
	}
	snprintf(out, cap, "%s", c);
}

static void model_find(struct model *m, const char *core)
{
	memset(m, 0, sizeof *m);
	if (core)
		snprintf(m->core, sizeof m->core, "%s", core);
	else
		pick_core(m->core, sizeof m->core);
	const char *env = getenv("ITLBGRIND_LIB");
	static const char *const dirs[] = { "/usr/libexec/valgrind", "/usr/lib/x86_64-linux-gnu/valgrind",
		                            "/usr/lib64/valgrind", "/usr/lib/valgrind", "/usr/local/libexec/valgrind",
		                            "/usr/local/lib/valgrind" };
	bool found = false;
	if (env && *env) {
		if (!tool_in(env)) {
			snprintf(m->why, sizeof m->why, "ITLBGRIND_LIB=%.120s holds no itlbgrind-amd64-linux", env);
			return;
		}
		snprintf(m->lib, sizeof m->lib, "%s", env);
		found = true;
	}
	for (size_t i = 0; !found && i < sizeof dirs / sizeof *dirs; i++)
		if (tool_in(dirs[i]))
			found = true;   /* valgrind finds it itself */
#if defined(ET_TOOL_BUILD_EXE) && defined(ET_TOOL_BUILD_VGLIB)
	if (!found) {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = '\0';
		if (!strcmp(exe, ET_TOOL_BUILD_EXE) && tool_in(ET_TOOL_BUILD_VGLIB)) {
			snprintf(m->lib, sizeof m->lib, "%s", ET_TOOL_BUILD_VGLIB);
			found = true;
		}
	}
#endif
	if (!found) {
		snprintf(m->why, sizeof m->why,
		         "itlbgrind is not installed (the enormoustext-itlbgrind package; or set ITLBGRIND_LIB)");
		return;
	}
	if (!runnable("valgrind")) {
		snprintf(m->why, sizeof m->why, "valgrind is not installed (itlbgrind is a Valgrind tool)");
		return;
	}
	m->ok = true;
}

/* COMMAND once under the model, in the environment env; the top process's
 * counts into r (C_INSTR, C_ITLB, C_WALK).  0, or -1 with m->why set. */
static int model_run(struct model *m, char **argv, int argc, char **env, const char *out, const struct ticker *tick,
                     struct run *r)
{
	char o1[64], o2[2 * PATH_MAX + 16];
	snprintf(o1, sizeof o1, "--model=%s", m->core);
	snprintf(o2, sizeof o2, "--out=%s", out);
	char **av = calloc((size_t)argc + 8, sizeof *av);
	if (!av)
		return -1;
	int k = 0;
	av[k++] = "valgrind";
	av[k++] = "--tool=itlbgrind";
	av[k++] = "-q";
	av[k++] = "--json=yes";
	av[k++] = o1;
	av[k++] = o2;
	for (int i = 0; i < argc; i++)
		av[k++] = argv[i];
	av[k] = NULL;
	/* VALGRIND_LIB where the tool is not in valgrind's directory */
	size_t n = 0;
	while (env[n])
		n++;
	char **e = calloc(n + 2, sizeof *e);
	char vl[PATH_MAX + 16];
	if (!e) {
		free(av);
		return -1;
	}
	size_t j = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], "VALGRIND_LIB=", 13) || !m->lib[0])
			e[j++] = env[i];
	if (m->lib[0]) {
		snprintf(vl, sizeof vl, "VALGRIND_LIB=%s", m->lib);
		e[j++] = vl;
	}
	e[j] = NULL;
	unlink(out);
	struct run mr;
	memset(&mr, 0, sizeof mr);
	int rc = run_once(av, e, NULL, NULL, false, tick, &mr);
	free(av);
	free(e);
	if (rc != 0) {
		snprintf(m->why, sizeof m->why, "valgrind could not run: %s", strerror(errno));
		return -1;
	}
	char *t = slurp(out);
	if (!t || !json_num(t, "itlb_misses", &r->cnt[C_ITLB]) || !json_num(t, "stlb_misses", &r->cnt[C_WALK]) ||
	    !json_num(t, "instructions", &r->cnt[C_INSTR])) {
		snprintf(m->why, sizeof m->why, "the model wrote no counts (valgrind exit status %d)",
		         WIFEXITED(mr.status) ? WEXITSTATUS(mr.status) : 128 + WTERMSIG(mr.status));
		free(t);
		return -1;
	}
	/* the modelled core's estimate: the first model's (the one asked for) */
	uint64_t code = 0, data = 0;
	r->estimated = json_num(t, "estimated_cycles", &code);
	if (r->estimated)
		json_num(t, "data_estimated_cycles", &data);
	r->est_cycles = code + data;
	free(t);
	r->counted[C_INSTR] = r->counted[C_ITLB] = r->counted[C_WALK] = true;
	return 0;
}

/* ------------------------------------------------------------ figures */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* a / b in thousandths (0 when b is 0) */
static uint64_t milli(uint64_t a, uint64_t b)
{
	return b ? (uint64_t)((double)a * 1000.0 / (double)b + 0.5) : 0;
}

static int exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct side {
	uint64_t wall, cpu, pss, huge, cnt[C_N];
	bool counted[C_N], sampled;
	int status;
	bool report;
	uint64_t huge_bytes, zero_copy_bytes, lib_cpu_ns;
	bool estimated;              /* the model's estimate of translation cycles */
	uint64_t est_cycles;
};

static void summarise(const struct run *runs, size_t n, int variant, bool pmu, struct side *s)
{
	uint64_t *v = calloc(n ? n : 1, sizeof *v);
	memset(s, 0, sizeof *s);
	if (!v)
		return;
	size_t k;
#define MED(field, cond, dst)                                       \
	k = 0;                                                      \
	for (size_t i = 0; i < n; i++)                              \
		if (runs[i].variant == variant && (cond))            \
			v[k++] = runs[i].field;                       \
	dst = median(v, k);
	MED(wall_ns, true, s->wall)
	MED(cpu_ns, true, s->cpu)
	if (pmu) {
		for (int c = 0; c < C_N; c++) {
			MED(cnt[c], runs[i].counted[c], s->cnt[c])
			s->counted[c] = k > 0;
		}
	}
	MED(huge_bytes, runs[i].report, s->huge_bytes)
	MED(zero_copy_bytes, runs[i].report, s->zero_copy_bytes)
	MED(lib_cpu_ns, runs[i].report, s->lib_cpu_ns)
	for (size_t i = 0; i < n; i++)
		if (runs[i].variant == variant) {
			s->status = runs[i].status;
			if (runs[i].report)
				s->report = true;
		}
#undef MED
	free(v);
}

/* ------------------------------------------------------------ the rule */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * The distribution-free interval of the median of n sorted values: the
 * order statistics [v[k-1], v[n-k]] for the largest k with
 * P(Binomial(n, 1/2) < k) <= ALPHA/2; *cover is its confidence,
 * 1 - 2 P(Binomial(n, 1/2) < k) (96.9% for 6 values).  False when n is too
 * small for one at 1 - ALPHA (fewer than 6 values).
 */
static bool median_interval(const double *v, size_t n, double *lo, double *hi, double *cover)
{
	double pmf = 1.0, cum = 0.0;
	for (size_t i = 0; i < n; i++)
		pmf *= 0.5;   /* P(B = 0); n <= MAX_PAIRS keeps it a normal double */
	size_t k = 0;
	for (size_t j = 0; j < n; j++) {
		if (cum + pmf > ALPHA / 2)
			break;
		cum += pmf;
		k = j + 1;
		pmf = pmf * (double)(n - j) / (double)(j + 1);
	}
	if (!k)
		return false;
	*lo = v[k - 1];
	*hi = v[n - k];
	*cover = 1.0 - 2.0 * cum;
	return true;
}

/* What the pairs say so far: the ratios (plain / library, per pair), their
 * median, spread and interval; the exit statuses; what the library moved. */
struct figures {
	size_t np;                   /* measured pairs */
	double med, min, max;        /* the pairs' ratios */
	bool interval;               /* [lo, hi] at confidence cover (6 pairs or more) */
	double lo, hi, cover;
	bool differ;                 /* an exit status differed in a pair */
	int st_plain, st_lib;
	size_t lib_runs, reports, moved_runs;   /* library runs, with a report, that moved text */
	const char *reason;          /* the last report's reason where it moved nothing (in the runs) */
};

static void figures_of(const struct run *rs, size_t measured, struct figures *f)
{
	memset(f, 0, sizeof *f);
	double *r = calloc(measured / 2 + 1, sizeof *r);
	for (size_t i = 0; i + 1 < measured; i += 2) {
		if (exit_code(rs[i].status) != exit_code(rs[i + 1].status)) {
			f->differ = true;
			f->st_plain = exit_code(rs[i].status);
			f->st_lib = exit_code(rs[i + 1].status);
		}
		if (r)
			r[f->np] = rs[i + 1].wall_ns ? (double)rs[i].wall_ns / (double)rs[i + 1].wall_ns : 1.0;
		f->np++;
	}
	for (size_t i = 1; i < measured; i += 2) {
		f->lib_runs++;
		f->reports += rs[i].report;
		f->moved_runs += rs[i].report && rs[i].huge_bytes > 0;
		if (rs[i].report && !rs[i].huge_bytes && rs[i].reason[0])
			f->reason = rs[i].reason;
	}
	if (r && f->np) {
		qsort(r, f->np, sizeof *r, cmp_double);
		f->min = r[0];
		f->max = r[f->np - 1];
		f->med = f->np % 2 ? r[f->np / 2] : (r[f->np / 2 - 1] + r[f->np / 2]) / 2;
		f->interval = median_interval(r, f->np, &f->lo, &f->hi, &f->cover);
	} else {
		f->np = 0;
	}
	free(r);
}

/* Whether no more pairs are needed: "behaves differently", "nothing moved",
 * or the interval lies wholly above 1 + NOISE, below 1 - NOISE or between
 * (NULL: not yet). */
static const char *settled(const struct figures *f)
{
	if (f->differ)
		return "behaves differently";
	if (!f->moved_runs)
		return "nothing moved";
	if (f->interval &&
	    (f->lo > 1.0 + NOISE || f->hi < 1.0 - NOISE || (f->lo >= 1.0 - NOISE && f->hi <= 1.0 + NOISE)))
		return "clear";
	return NULL;
}

/* ------------------------------------------------------------ the command */

/* One compare: its options, what it set up, what it measured, the answer. */
struct cmp {
	/* parsed */
	uint64_t min_pairs, warmup, budget_s;
	const char *counters, *core, *lib_opt;
	bool json;
	char **cmd;
	int ncmd;
	/* set up */
	char lib[PATH_MAX];
	char *preload;
	char dir[40];
	char report[PATH_MAX], mout[2][PATH_MAX];
	char **env[2];
	struct pmu pmu;
	struct model model;
	const char *source;          /* "pmu", "model", "none" */
	char why_none[640];          /* why no counts ("" when there are) */
	/* measured */
	struct et_progress prog;
	bool warming;                /* the warm-up pairs run */
	char phase[80];              /* what runs now, after the pairs (the progress line) */
	struct run *rs;
	size_t measured, cap;
	double pairs_s;              /* what the pairs took, warm-up included */
	const char *stopped;         /* why no more pairs were run */
	struct side s[2];
	bool modelled;               /* the model's counts are in s[] */
	char model_skipped[200];     /* why the model was not run ("" when it was, or not asked) */
	/* the answer */
	struct figures f;
	const char *verdict;
	char why[700];
	int rc;
};

/* --- parse */

#define GO_ON (-1)

/* The options and COMMAND into c: GO_ON, or the exit status now (--help
 * printed, or a usage error said). */
static int compare_parse(struct cmp *c, int argc, char **argv)
{
	c->min_pairs = MIN_INTERVAL_PAIRS;
	c->warmup = 1;
	c->budget_s = 30;
	c->counters = "auto";
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int o;
	while ((o = et_args_next(&a)) > 0) {
		switch (o) {
		case O_RUNS:
			if (et_tool_parse_u64(a.val, &c->min_pairs) != 0 || c->min_pairs < 1 || c->min_pairs > MAX_PAIRS)
				return et_tool_usage("%s takes a number of pairs 1..%d, not '%s'", et_args_name(&a),
				                     MAX_PAIRS, a.val);
			break;
		case O_BUDGET:
			if (et_tool_parse_u64(a.val, &c->budget_s) != 0 || c->budget_s > 86400)
				return et_tool_usage("%s takes a number of seconds 0..86400, not '%s'", et_args_name(&a),
				                     a.val);
			break;
		case O_WARMUP:
			if (et_tool_parse_u64(a.val, &c->warmup) != 0 || c->warmup > 100)
				return et_tool_usage("%s takes a number of pairs 0..100, not '%s'", et_args_name(&a), a.val);
			break;
		case O_COUNTERS: c->counters = a.val; break;
		case O_MODEL: c->core = a.val; break;
		case O_LIB: c->lib_opt = a.val; break;
		case O_JSON: c->json = true; break;
		}
	}
	if (o < 0)
		return et_args_exit(o);
	if (!a.nops)
		return et_tool_usage("give the COMMAND to compare (enormoustext compare [options] -- COMMAND [ARGS...])");
	c->cmd = a.ops;
	c->ncmd = a.nops;
	return GO_ON;
}

/* --- set up: the library, the environments, where the counts come from */

static int compare_setup(struct cmp *c)
{
	if (!runnable(c->cmd[0])) {
		et_tool_err("cannot run %s: %s", c->cmd[0], strerror(errno));
		return ET_EXIT_BAD;
	}
	if (et_tool_library(c->lib_opt, c->lib, sizeof c->lib) != 0)
		return ET_EXIT_BAD;
	c->preload = et_tool_preload(c->lib_opt);
	if (!c->preload)
		return ET_EXIT_BAD;
	snprintf(c->dir, sizeof c->dir, "/tmp/enormoustext-compare.XXXXXX");
	if (!mkdtemp(c->dir)) {
		et_tool_err("cannot make a directory for the library's reports: %s", strerror(errno));
		c->dir[0] = '\0';
		return ET_EXIT_BAD;
	}
	snprintf(c->report, sizeof c->report, "%s/report.json", c->dir);
	snprintf(c->mout[0], sizeof c->mout[0], "%s/model-plain.json", c->dir);
	snprintf(c->mout[1], sizeof c->mout[1], "%s/model-library.json", c->dir);
	c->env[0] = make_env(NULL, NULL, c->lib);
	c->env[1] = make_env(c->preload, c->report, c->lib);
	if (!c->env[0] || !c->env[1]) {
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	bool want_pmu = !strcmp(c->counters, "auto") || !strcmp(c->counters, "pmu");
	bool want_model = !strcmp(c->counters, "auto") || !strcmp(c->counters, "model");
	c->source = "none";
	if (want_pmu) {
		pmu_probe(&c->pmu);
		if (c->pmu.ok) {
			c->source = "pmu";
		} else if (!strcmp(c->counters, "pmu")) {
			et_tool_err("--counters pmu: %s", c->pmu.why);
			return ET_EXIT_BAD;
		}
	}
	if (!c->pmu.ok && want_model) {
		model_find(&c->model, c->core);
		if (c->model.ok) {
			c->source = "model";
		} else if (!strcmp(c->counters, "model")) {
			et_tool_err("--counters model: %s", c->model.why);
			return ET_EXIT_BAD;
		}
	}
	if (!strcmp(c->counters, "none"))
		snprintf(c->why_none, sizeof c->why_none, "--counters none");
	else if (!strcmp(c->source, "none"))
		snprintf(c->why_none, sizeof c->why_none, "%s, and no model: %s", c->pmu.why, c->model.why);
	return ET_EXIT_OK;
}

/* --- act: the pairs, the text's sample, the model */

static const char *ratio3(char *buf, size_t cap, double r)
{
	snprintf(buf, cap, "%.3f", r);
	return buf;
}

/* The progress line while the pairs run: the pair, the time, the ratio. */
static void show_pairs(struct cmp *c, bool force)
{
	if (!c->prog.on)
		return;
	size_t pair = c->measured / 2 + 1;   /* the pair running now, counted from the first measured */
	double t = et_progress_elapsed(&c->prog);
	char of[64], ratio[96] = "", a[16], b[16], m[16];
	size_t done = c->measured / 2;
	if (c->warming) {
		et_progress_show(&c->prog, force, "warm-up, %.1f s", t);
		return;
	}
	if (pair <= c->min_pairs || !c->budget_s) {
		snprintf(of, sizeof of, "of %llu", (unsigned long long)c->min_pairs);
	} else {
		/* the pairs the budget leaves room for, at the pace so far */
		double per = c->pairs_s / (double)(done + c->warmup);
		size_t most = done + (per > 0 ? (size_t)(((double)c->budget_s - t) / per) : 0);
		if (most < pair)
			most = pair;
		if (most > MAX_PAIRS)
			most = MAX_PAIRS;
		snprintf(of, sizeof of, "of at most %zu (%llu s budget)", most, (unsigned long long)c->budget_s);
	}
	if (c->f.np && c->f.interval)
		snprintf(ratio, sizeof ratio, ", ratio %sx, 95%% interval %s..%s", ratio3(m, sizeof m, c->f.med),
		         ratio3(a, sizeof a, c->f.lo), ratio3(b, sizeof b, c->f.hi));
	else if (c->f.np)
		snprintf(ratio, sizeof ratio, ", ratio %sx (pairs %s..%s)", ratio3(m, sizeof m, c->f.med),
		         ratio3(a, sizeof a, c->f.min), ratio3(b, sizeof b, c->f.max));
	et_progress_show(&c->prog, force, "pair %zu %s, %.1f s%s", pair, of, t, ratio);
}

static void tick_pairs(void *arg)
{
	show_pairs(arg, false);
}

/* The next pair: plain, then the library; kept unless a warm-up one.
 * 0, or ET_EXIT_BAD after one line (COMMAND could not be started). */
static int run_pair(struct cmp *c, bool keep)
{
	const struct ticker tick = { tick_pairs, c };
	if (c->measured + 2 > c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 32;
		struct run *n = realloc(c->rs, cap * sizeof *n);
		if (!n) {
			et_tool_err("out of memory");
			return ET_EXIT_BAD;
		}
		c->rs = n;
		c->cap = cap;
	}
	for (int v = 0; v < 2; v++) {
		struct run r;
		memset(&r, 0, sizeof r);
		r.variant = v;
		if (run_once(c->cmd, c->env[v], c->pmu.ok ? &c->pmu : NULL, v == V_LIB ? c->report : NULL, false,
		             c->prog.on ? &tick : NULL, &r) != 0) {
			et_progress_clear(&c->prog);
			et_tool_err("cannot run %s: %s", c->cmd[0], strerror(errno));
			return ET_EXIT_BAD;
		}
		if (keep)
			c->rs[c->measured + (size_t)v] = r;
	}
	if (keep)
		c->measured += 2;
	return ET_EXIT_OK;
}

/* The warm-up pairs, then pairs until --runs are measured and the answer
 * is settled, or the budget is spent (the next pair, at the pace so far,
 * would go past it), or MAX_PAIRS. */
static int run_pairs(struct cmp *c)
{
	char more[96] = ", no more (--budget 0)";
	if (c->budget_s)
		snprintf(more, sizeof more, ", more until the verdict is clear or %llu s are spent (--budget)",
		         (unsigned long long)c->budget_s);
	if (!c->json)
		fprintf(stderr, "compare: %s: %llu pair%s at least (after %llu warm-up pair%s)%s, plain and with %s, "
		        "alternated\n", c->cmd[0], (unsigned long long)c->min_pairs, et_tool_s(c->min_pairs),
		        (unsigned long long)c->warmup, et_tool_s(c->warmup), more, c->lib);
	uint64_t t0 = now_ns();
	c->warming = true;
	for (uint64_t i = 0; i < c->warmup; i++) {
		show_pairs(c, true);
		if (run_pair(c, false) != ET_EXIT_OK)
			return ET_EXIT_BAD;
	}
	c->warming = false;
	for (;;) {
		show_pairs(c, true);
		uint64_t p0 = now_ns();
		if (run_pair(c, true) != ET_EXIT_OK)
			return ET_EXIT_BAD;
		uint64_t p1 = now_ns();
		c->pairs_s = (double)(p1 - t0) / 1e9;
		figures_of(c->rs, c->measured, &c->f);
		if (c->f.np < c->min_pairs)
			continue;
		if ((c->stopped = settled(&c->f)))
			break;
		if (!c->budget_s) {
			c->stopped = "--runs pairs (--budget 0)";
			break;
		}
		if (c->f.np >= MAX_PAIRS) {
			c->stopped = "the most pairs (1000)";
			break;
		}
		if (c->pairs_s + (double)(p1 - p0) / 1e9 > (double)c->budget_s) {
			c->stopped = "budget";
			break;
		}
	}
	return ET_EXIT_OK;
}

static void tick_phase(void *arg)
{
	struct cmp *c = arg;
	et_progress_show(&c->prog, false, "%s, %.1f s", c->phase, et_progress_elapsed(&c->prog));
}

/* One more pair, untimed: the text's Pss and huge share from smaps while
 * each runs; then the model's run of each (where it is the source, and the
 * library moved text: otherwise there is nothing for it to count). */
static int run_extras(struct cmp *c)
{
	summarise(c->rs, c->measured, V_PLAIN, c->pmu.ok, &c->s[0]);
	summarise(c->rs, c->measured, V_LIB, c->pmu.ok, &c->s[1]);
	if (c->f.differ)
		return ET_EXIT_OK;
	const struct ticker tick = { tick_phase, c };
	snprintf(c->phase, sizeof c->phase, "one more pair, untimed: the text from smaps");
	for (int v = 0; v < 2; v++) {
		struct run r;
		memset(&r, 0, sizeof r);
		if (run_once(c->cmd, c->env[v], NULL, NULL, true, c->prog.on ? &tick : NULL, &r) == 0 && r.sampled) {
			c->s[v].sampled = true;
			c->s[v].pss = r.text_pss_kib;
			c->s[v].huge = r.text_huge_kib;
		}
	}
	if (strcmp(c->source, "model"))
		return ET_EXIT_OK;
	if (!c->f.moved_runs) {
		snprintf(c->model_skipped, sizeof c->model_skipped,
		         "the library moved no text, so there is nothing to count");
		return ET_EXIT_OK;
	}
	if (!c->json) {
		et_progress_clear(&c->prog);
		fprintf(stderr, "compare: counting iTLB misses with the model (itlbgrind, %s): one more run of each "
		        "under Valgrind\n", c->model.core);
	}
	for (int v = 0; v < 2; v++) {
		snprintf(c->phase, sizeof c->phase, "the model: the %s run under Valgrind", vname[v]);
		struct run mr;
		memset(&mr, 0, sizeof mr);
		if (model_run(&c->model, c->cmd, c->ncmd, c->env[v], c->mout[v], c->prog.on ? &tick : NULL, &mr) != 0) {
			if (!strcmp(c->counters, "model")) {
				et_progress_clear(&c->prog);
				et_tool_err("--counters model: %s", c->model.why);
				return ET_EXIT_BAD;
			}
			c->source = "none";
			snprintf(c->why_none, sizeof c->why_none, "%s, and the model failed: %s", c->pmu.why,
			         c->model.why);
			return ET_EXIT_OK;
		}
		memcpy(c->s[v].cnt, mr.cnt, sizeof mr.cnt);
		memcpy(c->s[v].counted, mr.counted, sizeof mr.counted);
		c->s[v].estimated = mr.estimated;
		c->s[v].est_cycles = mr.est_cycles;
	}
	c->modelled = true;
	return ET_EXIT_OK;
}

/* --- the answer */

/* The model's predicted share of cycles saved with the library: its
 * translation cycles per instruction, plain and with the library, against
 * one cycle per instruction for everything else (as bench/run's); false
 * where it gave no estimate. */
static bool model_prediction(const struct cmp *c, double *share)
{
	const struct side *p = &c->s[0], *l = &c->s[1];
	if (!c->modelled || !p->estimated || !l->estimated || !p->cnt[C_INSTR] || !l->cnt[C_INSTR])
		return false;
	double bc = (double)p->est_cycles / (double)p->cnt[C_INSTR];
	double vc = (double)l->est_cycles / (double)l->cnt[C_INSTR];
	*share = (bc - vc) / (1.0 + bc);
	return true;
}

/* The interval, in words: "1.041x median over 12 pairs, 95% interval 1.032..1.051". */
static void say_interval(const struct figures *f, char *out, size_t cap)
{
	char m[16], a[16], b[16];
	if (f->interval)
		snprintf(out, cap, "%sx median over %zu pairs, 95%% interval %s..%s", ratio3(m, sizeof m, f->med),
		         f->np, ratio3(a, sizeof a, f->lo), ratio3(b, sizeof b, f->hi));
	else
		snprintf(out, cap, "%sx median over %zu pair%s (%s..%s)", ratio3(m, sizeof m, f->med), f->np,
		         et_tool_s(f->np), ratio3(a, sizeof a, f->min), ratio3(b, sizeof b, f->max));
}

static void decide(struct cmp *c)
{
	const struct figures *f = &c->f;
	char iv[160];
	say_interval(f, iv, sizeof iv);
	if (f->differ) {
		c->verdict = "behaves differently";
		snprintf(c->why, sizeof c->why, "COMMAND exited %d plain and %d with the library", f->st_plain, f->st_lib);
		c->rc = ET_EXIT_BAD;
	} else if (!f->moved_runs) {
		char said[220];
		if (f->reports)
			snprintf(said, sizeof said, "its report: %s", f->reason ? f->reason : "0 bytes on huge pages");
		else
			snprintf(said, sizeof said, "no report: ENORMOUSTEXT=0, or a program it is not loaded into");
		c->verdict = "nothing to compare";
		snprintf(c->why, sizeof c->why,
		         "the library moved no text in any of its %zu runs (%s), so it cannot have made COMMAND "
		         "faster: the time ratio is what loading it costs",
		         f->lib_runs, said);
	} else if (!f->interval) {
		c->verdict = "within the noise";
		snprintf(c->why, sizeof c->why, "%s: too few pairs for a 95%% interval (%d at least)", iv,
		         MIN_INTERVAL_PAIRS);
	} else if (f->lo > 1.0 + NOISE) {
		c->verdict = "worth it";
		snprintf(c->why, sizeof c->why, "%s, lies above 1.01: faster with the library by more than 1%%", iv);
	} else if (f->hi < 1.0 - NOISE) {
		c->verdict = "costs more than it saves";
		snprintf(c->why, sizeof c->why, "%s, lies below 0.99: slower with the library by more than 1%%", iv);
	} else if (f->lo >= 1.0 - NOISE && f->hi <= 1.0 + NOISE) {
		c->verdict = "within the noise";
		snprintf(c->why, sizeof c->why, "%s, lies within 0.99..1.01: any difference is under 1%%", iv);
	} else {
		c->verdict = "within the noise";
		snprintf(c->why, sizeof c->why, "%s, reaches past %s: undecided after %.1f s (%s; a longer --budget "
		         "may decide)", iv, f->lo < 1.0 - NOISE && f->hi > 1.0 + NOISE ? "both 0.99 and 1.01"
		                            : f->hi > 1.0 + NOISE ? "1.01" : "0.99",
		         c->pairs_s, !c->stopped || !strcmp(c->stopped, "budget") ? "the budget is spent" : c->stopped);
	}
	if (c->f.moved_runs && c->f.moved_runs < c->f.lib_runs && !f->differ)
		snprintf(c->why + strlen(c->why), sizeof c->why - strlen(c->why),
		         " (the library moved text in %zu of its %zu runs)", c->f.moved_runs, c->f.lib_runs);
}

/* --- print */

/* Where the counts came from, in one sentence ("" for the PMU's). */
static void say_counters(const struct cmp *c, char *out, size_t cap)
{
	if (!strcmp(c->source, "pmu"))
		snprintf(out, cap, "the hardware PMU (perf_event_open: %s%s%s)", c->pmu.event[C_ITLB],
		         c->pmu.have[C_WALK] ? ", " : "", c->pmu.have[C_WALK] ? c->pmu.event[C_WALK] : "");
	else if (!strcmp(c->source, "model"))
		snprintf(out, cap, "%s; iTLB misses from the model instead (itlbgrind, %s%s%s", c->pmu.why,
		         c->model.core, c->model_skipped[0] ? "), not run here: " : ": one more run of each under Valgrind)",
		         c->model_skipped);
	else if (!strcmp(c->counters, "none"))
		snprintf(out, cap, "--counters none: iTLB misses not counted");
	else
		snprintf(out, cap, "%s: iTLB misses not counted; the verdict is from the time alone", c->why_none);
}

static void print_json(const struct cmp *c)
{
	const struct side *s = c->s;
	const struct figures *f = &c->f;
	struct et_json j;
	et_json_init(&j, stdout);
	et_json_obj(&j, NULL);
	et_json_arr(&j, "command");
	for (int i = 0; i < c->ncmd; i++)
		et_json_str(&j, NULL, c->cmd[i]);
	et_json_arr_end(&j);
	et_json_str(&j, "library_path", c->lib);
	et_json_u64(&j, "pairs", f->np);
	et_json_u64(&j, "warmup_pairs", c->warmup);
	et_json_u64(&j, "min_pairs", c->min_pairs);
	et_json_u64(&j, "budget_s", c->budget_s);
	et_json_milli(&j, "pairs_s", (int64_t)(c->pairs_s * 1000 + 0.5));
	et_json_str(&j, "stopped", c->stopped ? c->stopped : "");
	et_json_milli(&j, "time_ratio", (int64_t)(f->med * 1000 + 0.5));
	et_json_milli(&j, "time_ratio_min", (int64_t)(f->min * 1000 + 0.5));
	et_json_milli(&j, "time_ratio_max", (int64_t)(f->max * 1000 + 0.5));
	if (f->interval) {
		et_json_milli(&j, "time_ratio_low", (int64_t)(f->lo * 1000 + 0.5));
		et_json_milli(&j, "time_ratio_high", (int64_t)(f->hi * 1000 + 0.5));
		et_json_milli(&j, "interval_confidence", (int64_t)(f->cover * 1000));
	} else {
		et_json_null(&j, "time_ratio_low");
		et_json_null(&j, "time_ratio_high");
		et_json_null(&j, "interval_confidence");
	}
	bool have_itlb = s[0].counted[C_ITLB] && s[1].counted[C_ITLB];
	bool have_walk = s[0].counted[C_WALK] && s[1].counted[C_WALK];
	if (have_itlb)
		et_json_milli(&j, "itlb_ratio", (int64_t)milli(s[0].cnt[C_ITLB], s[1].cnt[C_ITLB] ? s[1].cnt[C_ITLB] : 1));
	else
		et_json_null(&j, "itlb_ratio");
	if (have_walk)
		et_json_milli(&j, "walk_ratio", (int64_t)milli(s[0].cnt[C_WALK], s[1].cnt[C_WALK] ? s[1].cnt[C_WALK] : 1));
	else
		et_json_null(&j, "walk_ratio");
	double pred;
	if (model_prediction(c, &pred))
		et_json_milli(&j, "model_cycles_saved", (int64_t)(pred * 1000 + (pred < 0 ? -0.5 : 0.5)));
	else
		et_json_null(&j, "model_cycles_saved");
	et_json_str(&j, "source", c->source);
	et_json_obj(&j, "counters");
	et_json_str(&j, "source", c->source);
	et_json_bool(&j, "pmu", c->pmu.ok);
	if (!c->pmu.ok && strcmp(c->counters, "none") && strcmp(c->counters, "model"))
		et_json_str(&j, "pmu_why", c->pmu.why);
	if (!strcmp(c->source, "pmu")) {
		et_json_str(&j, "itlb_event", c->pmu.event[C_ITLB]);
		et_json_str(&j, "walk_event", c->pmu.have[C_WALK] ? c->pmu.event[C_WALK] : NULL);
	} else if (!strcmp(c->source, "model")) {
		et_json_str(&j, "model", c->model.core);
		et_json_str(&j, "itlb_event", "L1 iTLB misses (modelled)");
		et_json_str(&j, "walk_event", "second-level TLB misses: page walks (modelled)");
		if (c->model_skipped[0])
			et_json_str(&j, "why", c->model_skipped);
	} else {
		et_json_str(&j, "why", c->why_none);
	}
	et_json_obj_end(&j);
	for (int v = 0; v < 2; v++) {
		et_json_obj(&j, vname[v]);
		et_json_u64(&j, "wall_ns_median", s[v].wall);
		et_json_u64(&j, "cpu_ns_median", s[v].cpu);
		et_json_i64(&j, "exit_status", exit_code(s[v].status));
		if (s[v].sampled) {
			et_json_u64(&j, "text_pss_kib", s[v].pss);
			et_json_u64(&j, "text_huge_kib", s[v].huge);
		} else {
			et_json_null(&j, "text_pss_kib");
			et_json_null(&j, "text_huge_kib");
		}
		static const char *const key[C_N] = { "instructions", "itlb_misses", "walks" };
		for (int k = 0; k < C_N; k++) {
			if (s[v].counted[k])
				et_json_u64(&j, key[k], s[v].cnt[k]);
			else
				et_json_null(&j, key[k]);
		}
		if (v == V_LIB) {
			et_json_bool(&j, "report", s[v].report);
			et_json_u64(&j, "runs", f->lib_runs);
			et_json_u64(&j, "runs_moved", f->moved_runs);
			et_json_u64(&j, "huge_bytes", s[v].huge_bytes);
			et_json_u64(&j, "zero_copy_bytes", s[v].zero_copy_bytes);
			et_json_u64(&j, "copied_bytes",
			            s[v].huge_bytes > s[v].zero_copy_bytes ? s[v].huge_bytes - s[v].zero_copy_bytes : 0);
			et_json_u64(&j, "library_cpu_ns", s[v].lib_cpu_ns);
		}
		et_json_obj_end(&j);
	}
	et_json_arr(&j, "runs");
	for (size_t i = 0; i < c->measured; i++) {
		et_json_obj_flat(&j, NULL);
		et_json_str(&j, "variant", vname[c->rs[i].variant]);
		et_json_u64(&j, "wall_ns", c->rs[i].wall_ns);
		et_json_u64(&j, "cpu_ns", c->rs[i].cpu_ns);
		et_json_i64(&j, "exit_status", exit_code(c->rs[i].status));
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_str(&j, "rule", RULE_1 " " RULE_2 " " RULE_3);
	et_json_str(&j, "verdict", c->verdict);
	et_json_str(&j, "verdict_why", c->why);
	et_json_obj_end(&j);
	et_json_end(&j);
}

/* The counts' rows and the model's prediction (text). */
static void print_counts(const struct cmp *c)
{
	const struct side *s = c->s;
	char line[1200];
	say_counters(c, line, sizeof line);
	printf("%-22s %s\n", "counters", line);
	if (!strcmp(c->source, "none"))
		return;
	const char *lbl = !strcmp(c->source, "pmu") ? "pmu" : "model";
	for (int k = C_INSTR; k < C_N; k++) {
		if (!s[0].counted[k] || !s[1].counted[k])
			continue;
		static const char *const row[C_N] = { "instructions", "iTLB misses", "page walks" };
		printf("%-22s %16llu %16llu   (%s: %s)\n", row[k], (unsigned long long)s[0].cnt[k],
		       (unsigned long long)s[1].cnt[k], lbl,
		       !strcmp(lbl, "pmu") ? c->pmu.event[k] : k == C_INSTR ? "one run each" : c->model.core);
	}
	double pred;
	if (model_prediction(c, &pred))
		printf("%-22s %.2f%% %s cycles with the library (its translations at the cited\n"
		       "%-22s costs, 1 cycle per instruction besides; the library's own work not counted)\n",
		       "model: predicts", 100.0 * (pred < 0 ? -pred : pred), pred < 0 ? "more" : "fewer", "");
}

static void print_text(const struct cmp *c)
{
	const struct side *s = c->s;
	const struct figures *f = &c->f;
	char x[32], y[32], z[32], iv[160];
	printf("%-22s %16s %16s\n", "", "plain", "library");
	printf("%-22s %14.3f s %14.3f s\n", "time (median)", (double)s[0].wall / 1e9, (double)s[1].wall / 1e9);
	printf("%-22s %14.3f s %14.3f s\n", "CPU (median)", (double)s[0].cpu / 1e9, (double)s[1].cpu / 1e9);
	if (s[0].sampled || s[1].sampled) {
		printf("%-22s %16s %16s\n", "text Pss", s[0].sampled ? et_tool_size(x, sizeof x, s[0].pss * 1024) : "-",
		       s[1].sampled ? et_tool_size(y, sizeof y, s[1].pss * 1024) : "-");
		printf("%-22s %16s %16s\n", "text on huge pages",
		       s[0].sampled ? et_tool_size(x, sizeof x, s[0].huge * 1024) : "-",
		       s[1].sampled ? et_tool_size(y, sizeof y, s[1].huge * 1024) : "-");
	} else {
		printf("%-22s %s\n", "text Pss", "not sampled (each run ended within 50 ms)");
	}
	print_counts(c);
	if (s[1].report && f->moved_runs)
		printf("library: %s huge (%s zero-copy, %s copied), %.1f ms of its CPU (its report, median run)\n",
		       et_tool_size(x, sizeof x, s[1].huge_bytes), et_tool_size(y, sizeof y, s[1].zero_copy_bytes),
		       et_tool_size(z, sizeof z,
		                    s[1].huge_bytes > s[1].zero_copy_bytes ? s[1].huge_bytes - s[1].zero_copy_bytes : 0),
		       (double)s[1].lib_cpu_ns / 1e6);
	else if (s[1].report)
		printf("library: moved nothing (its report: %s)\n", f->reason ? f->reason : "0 bytes on huge pages");
	else
		printf("library: no report (it did nothing: ENORMOUSTEXT=0, or a program it is not loaded into)\n");
	if (f->interval)
		snprintf(iv, sizeof iv, "; 95%% interval %s..%s", ratio3(y, sizeof y, f->lo), ratio3(z, sizeof z, f->hi));
	else
		snprintf(iv, sizeof iv, "; too few for a 95%% interval");
	printf("time ratio (plain / library): %sx, the median of %zu pair%s%s; pairs %s..%s; %.1f s\n",
	       ratio3(x, sizeof x, f->med), f->np, et_tool_s(f->np), iv, ratio3(y, sizeof y, f->min),
	       ratio3(z, sizeof z, f->max), c->pairs_s);
	printf("rule: %s\n      %s\n      %s\n", RULE_1, RULE_2, RULE_3);
	printf("verdict: %s (%s)\n", c->verdict, c->why);
}

static void compare_free(struct cmp *c)
{
	for (int v = 0; v < 2; v++) {
		if (!c->env[v])
			continue;
		for (size_t i = 0; c->env[v][i]; i++) {
			bool own = true;
			for (size_t k = 0; environ[k]; k++)
				if (c->env[v][i] == environ[k])
					own = false;
			if (own)
				free(c->env[v][i]);
		}
		free(c->env[v]);
	}
	free(c->rs);
	free(c->preload);
	if (c->dir[0]) {
		unlink(c->report);
		unlink(c->mout[0]);
		unlink(c->mout[1]);
		rmdir(c->dir);
	}
}

int et_cmd_compare(int argc, char **argv)
{
	struct cmp *c = calloc(1, sizeof *c);
	if (!c) {
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	int rc = compare_parse(c, argc, argv);
	if (rc != GO_ON) {
		free(c);
		return rc;
	}
	rc = compare_setup(c);
	if (rc == ET_EXIT_OK) {
		et_progress_start(&c->prog, "compare");
		rc = run_pairs(c);
	}
	if (rc == ET_EXIT_OK)
		rc = run_extras(c);
	et_progress_end(&c->prog);
	if (rc == ET_EXIT_OK) {
		decide(c);
		if (c->json)
			print_json(c);
		else
			print_text(c);
		rc = c->rc;
	}
	compare_free(c);
	free(c);
	return rc;
}
