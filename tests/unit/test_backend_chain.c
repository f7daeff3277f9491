/*
 * test_backend_chain.c — et_backend_chain, the order backends are tried
 * in, as a table over (THP mode, defrag, THP disabled for the process,
 * free pool pages, requested backend) → (chain, whether `why` is set);
 * then invariants over every combination.
 */
#include "unit_util.h"

#include "core/sysinfo.h"

/* A bug that loops forever fails its test instead of hanging the run; a
 * failed test leaves no temporary directory behind. */
TestSuite(backend_chain, .timeout = 30, .fini = ut_cleanup);

#define T ET_BACKEND_THP
#define C ET_BACKEND_COLLAPSE
#define HT ET_BACKEND_HUGETLB
#define F ET_BACKEND_FILE

struct row {
	enum et_thp_mode thp;
	enum et_defrag_mode defrag;
	bool disabled;
	long pool_free;
	enum et_backend req;
	int n;
	enum et_backend chain[4];
	bool why;          /* a reason expected */
};

static const struct row rows[] = {
	/* auto: THP allowed, defrag lets the fault compact → fault first */
	{ ET_THP_ALWAYS, ET_DEFRAG_MADVISE, false, -1, ET_BACKEND_AUTO, 3, { F, T, C }, false },
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, false, 0, ET_BACKEND_AUTO, 3, { F, T, C }, false },
	{ ET_THP_ALWAYS, ET_DEFRAG_ALWAYS, false, 0, ET_BACKEND_AUTO, 3, { F, T, C }, false },
	{ ET_THP_MADVISE, ET_DEFRAG_DEFER_MADVISE, false, 0, ET_BACKEND_AUTO, 3, { F, T, C }, false },
	{ ET_THP_MADVISE, ET_DEFRAG_UNKNOWN, false, 0, ET_BACKEND_AUTO, 3, { F, T, C }, false },
	/* defrag that does not compact at fault → collapse first */
	{ ET_THP_MADVISE, ET_DEFRAG_DEFER, false, 0, ET_BACKEND_AUTO, 3, { F, C, T }, false },
	{ ET_THP_ALWAYS, ET_DEFRAG_NEVER, false, -1, ET_BACKEND_AUTO, 3, { F, C, T }, false },
	/* never / no THP sysfs → collapse only */
	{ ET_THP_NEVER, ET_DEFRAG_MADVISE, false, 0, ET_BACKEND_AUTO, 2, { F, C }, false },
	{ ET_THP_NEVER, ET_DEFRAG_NEVER, false, -1, ET_BACKEND_AUTO, 2, { F, C }, false },
	{ ET_THP_UNKNOWN, ET_DEFRAG_UNKNOWN, false, -1, ET_BACKEND_AUTO, 2, { F, C }, false },
	/* a pool adds hugetlb last */
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, false, 4, ET_BACKEND_AUTO, 4, { F, T, C, HT }, false },
	{ ET_THP_ALWAYS, ET_DEFRAG_DEFER, false, 1, ET_BACKEND_AUTO, 4, { F, C, T, HT }, false },
	{ ET_THP_NEVER, ET_DEFRAG_MADVISE, false, 4, ET_BACKEND_AUTO, 3, { F, C, HT }, false },
	{ ET_THP_UNKNOWN, ET_DEFRAG_UNKNOWN, false, 1, ET_BACKEND_AUTO, 3, { F, C, HT }, false },
	/* THP disabled for the process: only the pool can work */
	{ ET_THP_ALWAYS, ET_DEFRAG_ALWAYS, true, 0, ET_BACKEND_AUTO, 0, { 0 }, true },
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, true, -1, ET_BACKEND_AUTO, 0, { 0 }, true },
	{ ET_THP_NEVER, ET_DEFRAG_NEVER, true, 2, ET_BACKEND_AUTO, 1, { HT }, false },
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, true, 2, ET_BACKEND_AUTO, 1, { HT }, false },
	/* file: zero-copy only, refused where THP is disabled for the process */
	{ ET_THP_MADVISE, ET_DEFRAG_DEFER, false, 1, ET_BACKEND_FILE, 1, { F }, false },
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, false, 0, ET_BACKEND_FILE, 1, { F }, false },
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, true, 0, ET_BACKEND_FILE, 0, { 0 }, true },
	/* thp requested */
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, false, 0, ET_BACKEND_THP, 1, { T }, false },
	{ ET_THP_ALWAYS, ET_DEFRAG_NEVER, false, 4, ET_BACKEND_THP, 1, { T }, false },
	{ ET_THP_UNKNOWN, ET_DEFRAG_UNKNOWN, false, -1, ET_BACKEND_THP, 1, { T }, false },
	{ ET_THP_NEVER, ET_DEFRAG_MADVISE, false, 4, ET_BACKEND_THP, 0, { 0 }, true },
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, true, 4, ET_BACKEND_THP, 0, { 0 }, true },
	/* collapse requested: independent of the sysfs policy */
	{ ET_THP_NEVER, ET_DEFRAG_NEVER, false, 0, ET_BACKEND_COLLAPSE, 1, { C }, false },
	{ ET_THP_ALWAYS, ET_DEFRAG_ALWAYS, false, 5, ET_BACKEND_COLLAPSE, 1, { C }, false },
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, true, 5, ET_BACKEND_COLLAPSE, 0, { 0 }, true },
	/* hugetlb requested: only the pool matters */
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, false, 0, ET_BACKEND_HUGETLB, 0, { 0 }, true },
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, false, -1, ET_BACKEND_HUGETLB, 0, { 0 }, true },
	{ ET_THP_MADVISE, ET_DEFRAG_MADVISE, false, 1, ET_BACKEND_HUGETLB, 1, { HT }, false },
	{ ET_THP_NEVER, ET_DEFRAG_NEVER, true, 3, ET_BACKEND_HUGETLB, 1, { HT }, false },
};

static struct et_sysinfo facts(const struct row *r)
{
	struct et_sysinfo si = {
		.pmd_size = 2 * UT_MIB, .pmd_size_read = true, .thp = r->thp, .defrag = r->defrag,
		.thp_disabled_process = r->disabled, .hugetlb_free = r->pool_free,
		.hugetlb_total = r->pool_free < 0 ? -1 : r->pool_free + 2,
	};
	return si;
}

static void chain_str(char *buf, size_t cap, const enum et_backend *c, int n)
{
	size_t k = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? "," : "", et_backend_name(c[i]));
}

Test(backend_chain, table)
{
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		const struct row *r = &rows[i];
		struct et_sysinfo si = facts(r);
		enum et_backend out[5] = { ET_BACKEND__COUNT, ET_BACKEND__COUNT, ET_BACKEND__COUNT,
		                           ET_BACKEND__COUNT, ET_BACKEND__COUNT };
		const char *why = "stale";
		int n = et_backend_chain(&si, r->req, out, &why);
		char got[64], want[64];
		chain_str(got, sizeof got, out, n > 0 && n <= 4 ? n : 0);
		chain_str(want, sizeof want, r->chain, r->n);
		cr_expect_eq(n, r->n, "row %zu (thp %s, defrag %s, disabled %d, pool %ld, req %s): "
		             "got [%s], want [%s]", i, et_thp_mode_name(r->thp), et_defrag_mode_name(r->defrag),
		             r->disabled, r->pool_free, et_backend_name(r->req), got, want);
		cr_expect_str_eq(got, want, "row %zu (thp %s, defrag %s, disabled %d, pool %ld, req %s)", i,
		                 et_thp_mode_name(r->thp), et_defrag_mode_name(r->defrag), r->disabled,
		                 r->pool_free, et_backend_name(r->req));
		for (int k = n > 0 ? n : 0; k < 5; k++)
			cr_expect_eq(out[k], ET_BACKEND__COUNT, "row %zu wrote out[%d] past the count", i, k);
		if (r->why) {
			cr_expect_not_null(why, "row %zu: empty chain without a reason", i);
			if (why) {
				cr_expect_str_neq(why, "stale", "row %zu: why not set", i);
				cr_expect(why[0], "row %zu: empty reason", i);
			}
		} else {
			cr_expect_null(why, "row %zu: unexpected reason \"%s\"", i, why ? why : "");
		}
	}
}

/* The reason names the cause. */
Test(backend_chain, reasons_name_the_cause)
{
	enum et_backend out[4];
	const char *why;
	struct et_sysinfo si = { .pmd_size = 2 * UT_MIB, .thp = ET_THP_MADVISE, .thp_disabled_process = true,
	                         .hugetlb_free = 0 };
	cr_assert_eq(et_backend_chain(&si, ET_BACKEND_THP, out, &why), 0);
	cr_expect_not_null(strstr(why, "PR_SET_THP_DISABLE"), "\"%s\"", why);
	cr_assert_eq(et_backend_chain(&si, ET_BACKEND_AUTO, out, &why), 0);
	cr_expect_not_null(strstr(why, "PR_SET_THP_DISABLE"), "\"%s\"", why);
	cr_expect_not_null(strstr(why, "hugetlb"), "\"%s\"", why);
	si.thp_disabled_process = false;
	si.thp = ET_THP_NEVER;
	cr_assert_eq(et_backend_chain(&si, ET_BACKEND_THP, out, &why), 0);
	cr_expect_not_null(strstr(why, "never"), "\"%s\"", why);
	cr_assert_eq(et_backend_chain(&si, ET_BACKEND_HUGETLB, out, &why), 0);
	cr_expect_not_null(strstr(why, "pool"), "\"%s\"", why);
}

/* Over every combination: the chain is short, has no duplicates, holds only
 * real backends, respects the facts, and an empty one always says why. */
Test(backend_chain, invariants_over_all_combinations)
{
	static const long pools[] = { -1, 0, 1, 100 };
	static const enum et_backend reqs[] = { ET_BACKEND_AUTO, ET_BACKEND_FILE, ET_BACKEND_THP,
	                                        ET_BACKEND_COLLAPSE, ET_BACKEND_HUGETLB };
	int combos = 0;
	for (int thp = ET_THP_UNKNOWN; thp <= ET_THP_NEVER; thp++)
	for (int df = ET_DEFRAG_UNKNOWN; df <= ET_DEFRAG_NEVER; df++)
	for (int dis = 0; dis < 2; dis++)
	for (size_t p = 0; p < 4; p++)
	for (size_t q = 0; q < 5; q++) {
		struct et_sysinfo si = { .pmd_size = 2 * UT_MIB, .thp = (enum et_thp_mode)thp,
		                         .defrag = (enum et_defrag_mode)df, .thp_disabled_process = dis,
		                         .hugetlb_free = pools[p], .hugetlb_total = pools[p] };
		enum et_backend out[4];
		const char *why = "stale";
		int n = et_backend_chain(&si, reqs[q], out, &why);
		combos++;
		cr_assert(n >= 0 && n <= 4, "n = %d", n);
		if (n == 0) {
			cr_assert_not_null(why);
			cr_expect(why[0] && strcmp(why, "stale"), "empty chain without a reason");
		}
		bool seen[ET_BACKEND__COUNT] = { false };
		for (int i = 0; i < n; i++) {
			cr_assert(out[i] == F || out[i] == T || out[i] == C || out[i] == HT, "chain holds %s",
			          et_backend_name(out[i]));
			cr_expect(!seen[out[i]], "duplicate %s", et_backend_name(out[i]));
			seen[out[i]] = true;
			if (out[i] == HT)
				cr_expect(pools[p] > 0, "hugetlb with an empty pool");
			if (out[i] == F || out[i] == T || out[i] == C)
				cr_expect(!dis, "%s while THP is disabled for the process", et_backend_name(out[i]));
			if (out[i] == T)
				cr_expect(thp != ET_THP_NEVER, "thp while THP is never");
			if (reqs[q] == F || reqs[q] == T || reqs[q] == C || reqs[q] == HT)
				cr_expect_eq(out[i], reqs[q], "requested %s, chain holds %s",
				             et_backend_name(reqs[q]), et_backend_name(out[i]));
		}
		/* auto always has collapse unless the process flag forbids it,
		 * and tries the zero-copy file backend first */
		if (reqs[q] == ET_BACKEND_AUTO && !dis) {
			cr_expect(seen[C], "auto without collapse");
			cr_expect_eq(out[0], F, "auto does not start with file");
		}
		/* hugetlb, when present in auto, is last */
		if (reqs[q] == ET_BACKEND_AUTO && n > 0 && seen[HT])
			cr_expect_eq(out[n - 1], HT);
	}
	cr_expect_eq(combos, 4 * 6 * 2 * 4 * 5);
}
