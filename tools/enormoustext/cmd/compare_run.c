/*
 * tools/enormoustext/cmd/compare_run.c — `compare`'s act: COMMAND run once
 * (timed, counted, its smaps sampled, the library's report read), the
 * pairs until the rule is et_compare_settled or the budget spent, and the extras (one
 * untimed pair for the text, the model's run of each).
 *
 * Owns: running COMMAND: the child, its environments, its counters'
 * descriptors, the report it leaves, the model's run; the pairs' order and
 * when they stop; the progress line's words while they run.
 * May call: compare_counters.c (opening a counter), compare_print.c (the
 * figures the stop reads), progress.c, msg.c, common.c.
 * Never: runs COMMAND through a shell; leaves a child; decides or prints
 * the verdict.
 */
#include "compare.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

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

static bool is_ours(const char *entry, const char *lib)
{
	if (!strcmp(entry, lib))
		return true;
	const char *b = strrchr(entry, '/');
	b = b ? b + 1 : entry;
	return !strncmp(b, "libenormoustext.so", strlen("libenormoustext.so"));
}

/* The environment of a run: the plain one without this library in
 * LD_PRELOAD; the library's with it first and ENORMOUSTEXT_REPORT. */
char **et_compare_env(const char *preload, const char *report, const char *lib)
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
			fds[c] = et_compare_perf_open(&pmu->attr[c], pid);
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
		char *t = et_tool_slurp_text(report);
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

/* ------------------------------------------------------------ model */

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
	char *t = et_tool_slurp_text(out);
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

/* ------------------------------------------------------------ the pairs */

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
		snprintf(ratio, sizeof ratio, ", ratio %sx, 95%% interval %s..%s", et_compare_ratio3(m, sizeof m, c->f.med),
		         et_compare_ratio3(a, sizeof a, c->f.lo), et_compare_ratio3(b, sizeof b, c->f.hi));
	else if (c->f.np)
		snprintf(ratio, sizeof ratio, ", ratio %sx (pairs %s..%s)", et_compare_ratio3(m, sizeof m, c->f.med),
		         et_compare_ratio3(a, sizeof a, c->f.min), et_compare_ratio3(b, sizeof b, c->f.max));
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
 * is et_compare_settled, or the budget is spent (the next pair, at the pace so far,
 * would go past it), or MAX_PAIRS. */
int et_compare_pairs(struct cmp *c)
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
		et_compare_figures(c->rs, c->measured, &c->f);
		if (c->f.np < c->min_pairs)
			continue;
		if ((c->stopped = et_compare_settled(&c->f)))
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
int et_compare_extras(struct cmp *c)
{
	et_compare_summarise(c->rs, c->measured, V_PLAIN, c->pmu.ok, &c->s[0]);
	et_compare_summarise(c->rs, c->measured, V_LIB, c->pmu.ok, &c->s[1]);
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
		snprintf(c->phase, sizeof c->phase, "the model: the %s run under Valgrind", et_compare_vname[v]);
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
