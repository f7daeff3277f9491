/*
 * tools/enormoustext/cmd/compare.h — what the files of `enormoustext compare`
 * share: one compare's state (struct cmp), a run's measures, the counters'
 * sources, the figures the rule reads.  compare.c parses and sets up and
 * drives; compare_run.c runs COMMAND (one run, the pairs, the extras);
 * compare_counters.c says where iTLB misses can come from (the PMU, the
 * model); compare_print.c turns the runs into figures, a verdict and the
 * output.  Only the compare files include it.
 */
#ifndef ET_TOOL_COMPARE_H
#define ET_TOOL_COMPARE_H

#include "tool.h"
#include "progress.h"

#include <limits.h>
#include <linux/perf_event.h>
#include <sys/types.h>

/* The rule's figures: the noise threshold (1%), the interval's confidence
 * (95%, two-sided), the pairs a budget may add up to. */
#define NOISE 0.01
#define ALPHA 0.05
#define MIN_INTERVAL_PAIRS 6    /* the fewest pairs with a 95% interval of the median */
#define MAX_PAIRS 1000

/* ------------------------------------------------------------ one run */

enum { V_PLAIN, V_LIB };
extern const char *const et_compare_vname[2];   /* "plain", "library" */

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

/* ------------------------------------------------------------ model */

struct model {
	char lib[PATH_MAX];   /* VALGRIND_LIB to set, or "" (the tool is in valgrind's own directory) */
	char core[32];
	char why[200];
	bool ok;
};

/* ------------------------------------------------------------ figures */

struct side {
	uint64_t wall, cpu, pss, huge, cnt[C_N];
	bool counted[C_N], sampled;
	int status;
	bool report;
	uint64_t huge_bytes, zero_copy_bytes, lib_cpu_ns;
	bool estimated;              /* the model's estimate of translation cycles */
	uint64_t est_cycles;
};

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

/* compare_counters.c: where the counts can come from */
/* Can COMMAND be executed, found as execvp finds it?  errno says why not. */
bool et_compare_runnable(const char *cmd);
/* perf_event_open on pid, any CPU, close-on-exec. */
int et_compare_perf_open(struct perf_event_attr *a, pid_t pid);
/* The hardware counters (p->ok), or why not in words (p->why). */
void et_compare_pmu_probe(struct pmu *p);
/* The model for core (NULL: this CPU's), or why not (m->why). */
void et_compare_model_find(struct model *m, const char *core);

/* compare_run.c: COMMAND run */
/* The environment of a run: the plain one (preload NULL) without this
 * library in LD_PRELOAD; the library's with it first and
 * ENORMOUSTEXT_REPORT=report.  NULL when out of memory. */
char **et_compare_env(const char *preload, const char *report, const char *lib);
/* The warm-up pairs, then the measured ones until the rule is settled or
 * the budget spent: 0, or ET_EXIT_BAD after one line. */
int et_compare_pairs(struct cmp *c);
/* The untimed pair (the text) and the model's runs: 0, or ET_EXIT_BAD. */
int et_compare_extras(struct cmp *c);

/* compare_print.c: the figures, the verdict, the output */
/* The medians of one variant's runs into *s. */
void et_compare_summarise(const struct run *runs, size_t n, int variant, bool pmu, struct side *s);
/* What the measured runs say so far. */
void et_compare_figures(const struct run *rs, size_t measured, struct figures *f);
/* Why no more pairs are needed, or NULL: not yet. */
const char *et_compare_settled(const struct figures *f);
/* r as "1.041" in buf. */
const char *et_compare_ratio3(char *buf, size_t cap, double r);
/* The verdict and its why (c->verdict, c->why, c->rc) from c->f. */
void et_compare_decide(struct cmp *c);
/* The answer: one JSON document, or the table and the verdict's lines. */
void et_compare_print_json(const struct cmp *c);
void et_compare_print_text(const struct cmp *c);

#endif
