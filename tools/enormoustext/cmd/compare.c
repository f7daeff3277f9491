/*
 * tools/enormoustext/cmd/compare.c — `enormoustext compare [--runs N] [--json]
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
 * Parse, act, print: this file parses (the options, COMMAND), sets up (the
 * library, the two environments, where the counts come from) and drives;
 * compare_run.c runs, compare_counters.c finds the counters,
 * compare_print.c decides and prints (compare.h: what they share).
 *
 * Owns: `compare`: its options and help, one compare's setup and its
 * order (pairs, extras, verdict, output), its temporary directory.
 * May call: compare_run.c, compare_counters.c, compare_print.c,
 * preload.c (the library, LD_PRELOAD), progress.c, opts.c, msg.c,
 * common.c.
 * Never: changes the command's environment beyond LD_PRELOAD and
 * ENORMOUSTEXT_REPORT (the library run) and taking the library out of
 * LD_PRELOAD (the plain run); runs it through a shell; leaves a child.
 */
#include "compare.h"
#include "opts.h"
#include "preload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

enum { O_RUNS = 1, O_BUDGET, O_WARMUP, O_COUNTERS, O_MODEL, O_LIB, O_JSON };

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
	.sections = { { NULL, options, NULL } },
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

/* ------------------------------------------------------------ the command */

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
	if (!et_compare_runnable(c->cmd[0])) {
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
	c->env[0] = et_compare_env(NULL, NULL, c->lib);
	c->env[1] = et_compare_env(c->preload, c->report, c->lib);
	if (!c->env[0] || !c->env[1]) {
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	bool want_pmu = !strcmp(c->counters, "auto") || !strcmp(c->counters, "pmu");
	bool want_model = !strcmp(c->counters, "auto") || !strcmp(c->counters, "model");
	c->source = "none";
	if (want_pmu) {
		et_compare_pmu_probe(&c->pmu);
		if (c->pmu.ok) {
			c->source = "pmu";
		} else if (!strcmp(c->counters, "pmu")) {
			et_tool_err("--counters pmu: %s", c->pmu.why);
			return ET_EXIT_BAD;
		}
	}
	if (!c->pmu.ok && want_model) {
		et_compare_model_find(&c->model, c->core);
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
		rc = et_compare_pairs(c);
	}
	if (rc == ET_EXIT_OK)
		rc = et_compare_extras(c);
	et_progress_end(&c->prog);
	if (rc == ET_EXIT_OK) {
		et_compare_decide(c);
		if (c->json)
			et_compare_print_json(c);
		else
			et_compare_print_text(c);
		rc = c->rc;
	}
	compare_free(c);
	free(c);
	return rc;
}
