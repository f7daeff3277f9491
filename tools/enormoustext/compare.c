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

enum { O_RUNS = 1, O_WARMUP, O_COUNTERS, O_MODEL, O_LIB, O_JSON };

static const struct et_opt options[] = {
	{ "runs", 'n', "N", "pairs of runs measured (plain, library), alternated [5]", O_RUNS, 0, 0, 0, NULL, 0 },
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

static const struct et_cmd_spec spec = {
	.name = "compare",
	.forms = { { NULL, "[--] COMMAND [ARGS...]" } },
	.about = "Run COMMAND plain and with libenormoustext preloaded, alternated (A B A B...),\n"
	         "and say whether the library is worth it for it on this machine: the ratio of\n"
	         "their times (plain / library: above 1 the library makes it faster) with its\n"
	         "spread over the pairs, what the library cost (its CPU, MiB copied and mapped\n"
	         "zero-copy), the text's Pss and how much of it was huge (one more pair, not\n"
	         "timed, its smaps read while it runs), iTLB misses of both,\n"
	         "and one verdict: worth it (faster in every pair, by 1% or more at the median),\n"
	         "costs more than it saves (slower in every pair, by 1% or more), or within the\n"
	         "noise.  The library acts by the environment's ENORMOUSTEXT_* variables (its\n"
	         "defaults where none is set); the plain runs have it taken out of LD_PRELOAD.\n"
	         "COMMAND's input is /dev/null and its output is thrown away; the exit status of\n"
	         "every run is compared.\n",
	.sections = { { NULL, options } },
	.tail = "iTLB misses are user-space counts of the whole process tree (PMU: the generic\n"
	        "iTLB read-miss event, and Intel's itlb_misses.walk_completed or AMD's\n"
	        "bp_l1_tlb_miss_l2_tlb_miss where the CPU is known), or the model's L1 iTLB\n"
	        "misses and page walks of the top process (itlbgrind: installed with the\n"
	        "enormoustext-itlbgrind package, or $ITLBGRIND_LIB, or this build tree's).\n"
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
	char why[160];
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
 * Returns 0, or -1 when COMMAND could not be started (errno set).
 */
static int run_once(char **argv, char **env, struct pmu *pmu, const char *report, bool sample, struct run *r)
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
	 * the pidfd says at once when it ends.  Timed: only waited for. */
	if (pfd >= 0) {
		for (int tick = 0;; tick++) {
			struct pollfd p = { .fd = pfd, .events = POLLIN };
			int n = poll(&p, 1, !sample ? -1 : tick < 20 ? 50 : 250);
			if (n > 0)
				break;
			if (n < 0 && errno != EINTR)
				break;
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
			int e = errno;
			snprintf(p->why, sizeof p->why, "%s: %s%s", p->event[c], strerror(e),
			         e == ENOENT || e == EOPNOTSUPP || e == ENODEV
			                 ? " (no hardware PMU here: a VM without a virtual PMU?)"
			         : e == EACCES || e == EPERM ? " (kernel.perf_event_paranoid?)"
			                                     : "");
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
static int model_run(struct model *m, char **argv, int argc, char **env, const char *out, struct run *r)
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
	int rc = run_once(av, e, NULL, NULL, false, &mr);
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

static const char *ratio_str(char *buf, size_t cap, uint64_t m)
{
	snprintf(buf, cap, "%llu.%03llu", (unsigned long long)(m / 1000), (unsigned long long)(m % 1000));
	return buf;
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

/* ------------------------------------------------------------ the command */

int et_cmd_compare(int argc, char **argv)
{
	uint64_t runs = 5, warmup = 1;
	const char *counters = "auto", *core = NULL, *lib_opt = NULL;
	bool json = false;
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_RUNS:
			if (et_tool_parse_u64(a.val, &runs) != 0 || runs < 1 || runs > 1000)
				return et_tool_usage("%s takes a number of pairs 1..1000, not '%s'", et_args_name(&a), a.val);
			break;
		case O_WARMUP:
			if (et_tool_parse_u64(a.val, &warmup) != 0 || warmup > 100)
				return et_tool_usage("%s takes a number of pairs 0..100, not '%s'", et_args_name(&a), a.val);
			break;
		case O_COUNTERS: counters = a.val; break;
		case O_MODEL: core = a.val; break;
		case O_LIB: lib_opt = a.val; break;
		case O_JSON: json = true; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (!a.nops)
		return et_tool_usage("give the COMMAND to compare (enormoustext compare [options] -- COMMAND [ARGS...])");

	if (!runnable(a.ops[0])) {
		et_tool_err("cannot run %s: %s", a.ops[0], strerror(errno));
		return ET_EXIT_BAD;
	}
	char lib[PATH_MAX];
	if (et_tool_library(lib_opt, lib, sizeof lib) != 0)
		return ET_EXIT_BAD;
	char *preload = et_tool_preload(lib_opt);
	if (!preload)
		return ET_EXIT_BAD;
	char dir[] = "/tmp/enormoustext-compare.XXXXXX";
	if (!mkdtemp(dir)) {
		et_tool_err("cannot make a directory for the library's reports: %s", strerror(errno));
		free(preload);
		return ET_EXIT_BAD;
	}
	char report[PATH_MAX], mout[2][PATH_MAX];
	snprintf(report, sizeof report, "%s/report.json", dir);
	snprintf(mout[0], sizeof mout[0], "%s/model-plain.json", dir);
	snprintf(mout[1], sizeof mout[1], "%s/model-library.json", dir);
	char **env[2] = { make_env(NULL, NULL, lib), make_env(preload, report, lib) };
	int rc = ET_EXIT_OK;
	struct run *rs = NULL;
	if (!env[0] || !env[1]) {
		et_tool_err("out of memory");
		rc = ET_EXIT_BAD;
		goto out;
	}

	/* where the counts come from */
	struct pmu pmu;
	struct model model;
	memset(&model, 0, sizeof model);
	const char *source = "none";
	char why_none[420] = "";
	bool want_pmu = !strcmp(counters, "auto") || !strcmp(counters, "pmu");
	bool want_model = !strcmp(counters, "auto") || !strcmp(counters, "model");
	memset(&pmu, 0, sizeof pmu);
	if (want_pmu) {
		pmu_probe(&pmu);
		if (pmu.ok)
			source = "pmu";
		else if (!strcmp(counters, "pmu")) {
			et_tool_err("--counters pmu: the hardware counters cannot be read: %s", pmu.why);
			rc = ET_EXIT_BAD;
			goto out;
		}
	}
	if (!pmu.ok && want_model) {
		model_find(&model, core);
		if (model.ok)
			source = "model";
		else if (!strcmp(counters, "model")) {
			et_tool_err("--counters model: %s", model.why);
			rc = ET_EXIT_BAD;
			goto out;
		}
	}
	if (!strcmp(source, "none")) {
		if (!strcmp(counters, "none"))
			snprintf(why_none, sizeof why_none, "--counters none");
		else
			snprintf(why_none, sizeof why_none, "%s; %s", pmu.why, model.why);
	}

	size_t total = (size_t)(runs + warmup) * 2;
	rs = calloc(total, sizeof *rs);
	if (!rs) {
		et_tool_err("out of memory");
		rc = ET_EXIT_BAD;
		goto out;
	}
	if (!json) {
		fprintf(stderr, "compare: %s: %llu pair%s (after %llu warm-up pair%s), plain and with %s, alternated\n",
		        a.ops[0], (unsigned long long)runs, et_tool_s(runs), (unsigned long long)warmup,
		        et_tool_s(warmup), lib);
	}
	size_t measured = 0;
	for (size_t i = 0; i < total; i++) {
		int v = (int)(i % 2);
		struct run r;
		memset(&r, 0, sizeof r);
		r.variant = v;
		if (run_once(a.ops, env[v], pmu.ok ? &pmu : NULL, v == V_LIB ? report : NULL, false, &r) != 0) {
			et_tool_err("cannot run %s: %s", a.ops[0], strerror(errno));
			rc = ET_EXIT_BAD;
			goto out;
		}
		if (i >= warmup * 2)
			rs[measured++] = r;
	}
	struct side s[2];
	summarise(rs, measured, V_PLAIN, pmu.ok, &s[0]);
	summarise(rs, measured, V_LIB, pmu.ok, &s[1]);
	/* the text: one more pair, untimed, its smaps read while it runs */
	for (int v = 0; v < 2; v++) {
		struct run r;
		memset(&r, 0, sizeof r);
		if (run_once(a.ops, env[v], NULL, NULL, true, &r) == 0 && r.sampled) {
			s[v].sampled = true;
			s[v].pss = r.text_pss_kib;
			s[v].huge = r.text_huge_kib;
		}
	}

	/* the model: one run of each */
	if (!strcmp(source, "model")) {
		if (!json)
			fprintf(stderr, "compare: counting iTLB misses with the model (itlbgrind, %s): one more run of each under Valgrind\n",
			        model.core);
		for (int v = 0; v < 2; v++) {
			struct run mr;
			memset(&mr, 0, sizeof mr);
			if (model_run(&model, a.ops, a.nops, env[v], mout[v], &mr) != 0) {
				if (!strcmp(counters, "model")) {
					et_tool_err("--counters model: %s", model.why);
					rc = ET_EXIT_BAD;
					goto out;
				}
				source = "none";
				snprintf(why_none, sizeof why_none, "%s; the model: %s", pmu.why, model.why);
				break;
			}
			memcpy(s[v].cnt, mr.cnt, sizeof mr.cnt);
			memcpy(s[v].counted, mr.counted, sizeof mr.counted);
		}
	}

	/* ratios: time per pair, plain / library */
	uint64_t *pr = calloc(runs, sizeof *pr);
	size_t np = 0;
	for (size_t i = 0; pr && i + 1 < measured; i += 2)
		pr[np++] = milli(rs[i].wall_ns, rs[i + 1].wall_ns);
	uint64_t rmin = 0, rmax = 0, rmed = 0;
	if (np) {
		rmed = median(pr, np);   /* sorts */
		rmin = pr[0];
		rmax = pr[np - 1];
	}
	free(pr);
	bool have_itlb = s[0].counted[C_ITLB] && s[1].counted[C_ITLB];
	bool have_walk = s[0].counted[C_WALK] && s[1].counted[C_WALK];
	/* fewer misses with the library: plain / library (library 0: as if 1) */
	uint64_t itlb_ratio = have_itlb ? milli(s[0].cnt[C_ITLB], s[1].cnt[C_ITLB] ? s[1].cnt[C_ITLB] : 1) : 0;
	uint64_t walk_ratio = have_walk ? milli(s[0].cnt[C_WALK], s[1].cnt[C_WALK] ? s[1].cnt[C_WALK] : 1) : 0;

	/* the verdict */
	const char *verdict;
	char why[400];
	char b1[32], b2[32], b3[32];
	bool differ = false;
	int st_plain = 0, st_lib = 0;
	for (size_t i = 0; i + 1 < measured; i += 2)
		if (exit_code(rs[i].status) != exit_code(rs[i + 1].status)) {
			differ = true;
			st_plain = exit_code(rs[i].status);
			st_lib = exit_code(rs[i + 1].status);
		}
	if (differ) {
		verdict = "behaves differently";
		snprintf(why, sizeof why, "COMMAND exited %d plain and %d with the library", st_plain, st_lib);
		rc = ET_EXIT_BAD;
	} else if (rmed >= 1010 && rmin > 1000) {
		verdict = "worth it";
		snprintf(why, sizeof why, "faster in every pair: %sx at the median (%s..%s)", ratio_str(b1, sizeof b1, rmed),
		         ratio_str(b2, sizeof b2, rmin), ratio_str(b3, sizeof b3, rmax));
	} else if (rmed <= 990 && rmax < 1000) {
		verdict = "costs more than it saves";
		snprintf(why, sizeof why, "slower in every pair: %sx at the median (%s..%s)", ratio_str(b1, sizeof b1, rmed),
		         ratio_str(b2, sizeof b2, rmin), ratio_str(b3, sizeof b3, rmax));
	} else {
		verdict = "within the noise";
		snprintf(why, sizeof why, "%sx at the median, pairs %s..%s: neither faster nor slower in every pair by 1%%",
		         ratio_str(b1, sizeof b1, rmed), ratio_str(b2, sizeof b2, rmin), ratio_str(b3, sizeof b3, rmax));
	}
	if (!differ && np == 1)
		snprintf(why + strlen(why), sizeof why - strlen(why), " (one pair: --runs 5 or more for a firm answer)");

	if (json) {
		struct et_json j;
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_arr(&j, "command");
		for (int i = 0; i < a.nops; i++)
			et_json_str(&j, NULL, a.ops[i]);
		et_json_arr_end(&j);
		et_json_str(&j, "library_path", lib);
		et_json_u64(&j, "pairs", np);
		et_json_u64(&j, "warmup_pairs", warmup);
		et_json_milli(&j, "time_ratio", (int64_t)rmed);
		et_json_milli(&j, "time_ratio_min", (int64_t)rmin);
		et_json_milli(&j, "time_ratio_max", (int64_t)rmax);
		if (have_itlb)
			et_json_milli(&j, "itlb_ratio", (int64_t)itlb_ratio);
		else
			et_json_null(&j, "itlb_ratio");
		if (have_walk)
			et_json_milli(&j, "walk_ratio", (int64_t)walk_ratio);
		else
			et_json_null(&j, "walk_ratio");
		et_json_str(&j, "source", source);
		et_json_obj(&j, "counters");
		et_json_str(&j, "source", source);
		if (!strcmp(source, "pmu")) {
			et_json_str(&j, "itlb_event", pmu.event[C_ITLB]);
			et_json_str(&j, "walk_event", pmu.have[C_WALK] ? pmu.event[C_WALK] : NULL);
		} else if (!strcmp(source, "model")) {
			et_json_str(&j, "model", model.core);
			et_json_str(&j, "itlb_event", "L1 iTLB misses (modelled)");
			et_json_str(&j, "walk_event", "second-level TLB misses: page walks (modelled)");
		} else {
			et_json_str(&j, "why", why_none);
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
				et_json_u64(&j, "huge_bytes", s[v].huge_bytes);
				et_json_u64(&j, "zero_copy_bytes", s[v].zero_copy_bytes);
				et_json_u64(&j, "copied_bytes",
				            s[v].huge_bytes > s[v].zero_copy_bytes ? s[v].huge_bytes - s[v].zero_copy_bytes : 0);
				et_json_u64(&j, "library_cpu_ns", s[v].lib_cpu_ns);
			}
			et_json_obj_end(&j);
		}
		et_json_arr(&j, "runs");
		for (size_t i = 0; i < measured; i++) {
			et_json_obj_flat(&j, NULL);
			et_json_str(&j, "variant", vname[rs[i].variant]);
			et_json_u64(&j, "wall_ns", rs[i].wall_ns);
			et_json_u64(&j, "cpu_ns", rs[i].cpu_ns);
			et_json_i64(&j, "exit_status", exit_code(rs[i].status));
			et_json_obj_end(&j);
		}
		et_json_arr_end(&j);
		et_json_str(&j, "verdict", verdict);
		et_json_str(&j, "verdict_why", why);
		et_json_obj_end(&j);
		et_json_end(&j);
	} else {
		char x[32], y[32];
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
		if (!strcmp(source, "none")) {
			printf("%-22s not counted: %s\n", "iTLB misses", why_none);
		} else {
			const char *lbl = !strcmp(source, "pmu") ? "pmu" : "model";
			for (int k = C_INSTR; k < C_N; k++) {
				if (!s[0].counted[k] || !s[1].counted[k])
					continue;
				static const char *const row[C_N] = { "instructions", "iTLB misses", "page walks" };
				printf("%-22s %16llu %16llu   (%s: %s)\n", row[k], (unsigned long long)s[0].cnt[k],
				       (unsigned long long)s[1].cnt[k], lbl,
				       !strcmp(lbl, "pmu") ? pmu.event[k] : k == C_INSTR ? "one run each" : model.core);
			}
		}
		if (s[1].report)
			printf("library: %s huge (%s zero-copy, %s copied), %.1f ms of its CPU (its report, median run)\n",
			       et_tool_size(x, sizeof x, s[1].huge_bytes), et_tool_size(y, sizeof y, s[1].zero_copy_bytes),
			       et_tool_size(b1, sizeof b1,
			                    s[1].huge_bytes > s[1].zero_copy_bytes ? s[1].huge_bytes - s[1].zero_copy_bytes : 0),
			       (double)s[1].lib_cpu_ns / 1e6);
		else
			printf("library: no report (it did nothing: a short run under the default deferral, or ENORMOUSTEXT=0)\n");
		printf("time ratio (plain / library): %sx, pairs %s..%s", ratio_str(b1, sizeof b1, rmed),
		       ratio_str(b2, sizeof b2, rmin), ratio_str(b3, sizeof b3, rmax));
		if (have_itlb)
			printf("; iTLB misses plain / library %sx", ratio_str(x, sizeof x, itlb_ratio));
		if (have_walk)
			printf(", page walks %sx", ratio_str(y, sizeof y, walk_ratio));
		printf("\nverdict: %s (%s)\n", verdict, why);
	}
out:
	for (int v = 0; v < 2; v++) {
		if (!env[v])
			continue;
		for (size_t i = 0; env[v][i]; i++) {
			bool own = true;
			for (size_t k = 0; environ[k]; k++)
				if (env[v][i] == environ[k])
					own = false;
			if (own)
				free(env[v][i]);
		}
		free(env[v]);
	}
	free(rs);
	free(preload);
	unlink(report);
	unlink(mout[0]);
	unlink(mout[1]);
	rmdir(dir);
	return rc;
}
