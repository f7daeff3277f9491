/*
 * tools/enormoustext/cmd/compare_print.c — `compare`'s answer: the runs made
 * figures (medians, the pairs' ratios and the distribution-free interval
 * of their median), the rule's verdict, and the output (text, or one JSON
 * document).
 *
 * Owns: the rule (when the figures are et_compare_settled, what the verdict is and
 * why) and every word and key of the output.
 * May call: core (json), common.c, msg.c.
 * Never: runs anything; reads a file; changes the runs it is given.
 */
#include "compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

const char *const et_compare_vname[2] = { "plain", "library" };

/* The rule, as the output says it ("rule:", JSON "rule"). */
#define RULE_1 "worth it when the 95% interval of the median time ratio lies above 1.01,"
#define RULE_2 "costs more than it saves when it lies below 0.99, within the noise otherwise;"
#define RULE_3 "nothing to compare when the library moved no text in any of its runs"

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


void et_compare_summarise(const struct run *runs, size_t n, int variant, bool pmu, struct side *s)
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


void et_compare_figures(const struct run *rs, size_t measured, struct figures *f)
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
const char *et_compare_settled(const struct figures *f)
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

/* A ratio as the output writes it: "1.041". */
const char *et_compare_ratio3(char *buf, size_t cap, double r)
{
	snprintf(buf, cap, "%.3f", r);
	return buf;
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
		snprintf(out, cap, "%sx median over %zu pairs, 95%% interval %s..%s", et_compare_ratio3(m, sizeof m, f->med),
		         f->np, et_compare_ratio3(a, sizeof a, f->lo), et_compare_ratio3(b, sizeof b, f->hi));
	else
		snprintf(out, cap, "%sx median over %zu pair%s (%s..%s)", et_compare_ratio3(m, sizeof m, f->med), f->np,
		         et_tool_s(f->np), et_compare_ratio3(a, sizeof a, f->min), et_compare_ratio3(b, sizeof b, f->max));
}

void et_compare_decide(struct cmp *c)
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
		         "may et_compare_decide)", iv, f->lo < 1.0 - NOISE && f->hi > 1.0 + NOISE ? "both 0.99 and 1.01"
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

void et_compare_print_json(const struct cmp *c)
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
		et_json_obj(&j, et_compare_vname[v]);
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
		et_json_str(&j, "variant", et_compare_vname[c->rs[i].variant]);
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

void et_compare_print_text(const struct cmp *c)
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
		snprintf(iv, sizeof iv, "; 95%% interval %s..%s", et_compare_ratio3(y, sizeof y, f->lo), et_compare_ratio3(z, sizeof z, f->hi));
	else
		snprintf(iv, sizeof iv, "; too few for a 95%% interval");
	printf("time ratio (plain / library): %sx, the median of %zu pair%s%s; pairs %s..%s; %.1f s\n",
	       et_compare_ratio3(x, sizeof x, f->med), f->np, et_tool_s(f->np), iv, et_compare_ratio3(y, sizeof y, f->min),
	       et_compare_ratio3(z, sizeof z, f->max), c->pairs_s);
	printf("rule: %s\n      %s\n      %s\n", RULE_1, RULE_2, RULE_3);
	printf("verdict: %s (%s)\n", c->verdict, c->why);
}
