/*
 * test_plan.c — the pure planner on synthetic objects: et_plan_windows and
 * et_plan_pads on segment lists; et_plan_object (an object's windows, pads
 * in place), et_plan_classify (include/exclude) and et_plan_hot (the hot
 * windows of a profile) on made-up runs, touching no memory but the tables.
 *
 * Every case checks the count from the counting call (cap = 0), the count
 * from the filling call, each window's address/segment/object, and that the
 * filling call wrote nothing past `cap` (a guard element after the table).
 * A 128-bit reference implementation cross-checks a few thousand random
 * segment lists, including addresses near UINT64_MAX.
 */
#include "unit_util.h"

#include "core/plan.h"

#include <stdint.h>

/* A bug that loops forever fails its test instead of hanging the run; a
 * failed test leaves no temporary directory behind. */
TestSuite(plan, .timeout = 30, .fini = ut_cleanup);

#define GUARD_BYTE 0xA5

static struct et_segment seg(uint64_t start, uint64_t end)
{
	return (struct et_segment){ .start = start, .end = end, .offset = 0,
	                            .flags = PF_R_FLAG | PF_X_FLAG };
}

/* Reference planner in 128-bit arithmetic (no overflow to think about). */
static size_t ref_plan(const struct et_segment *segs, size_t nsegs, uint64_t pmd, uint64_t *addrs,
                       uint32_t *segidx, size_t cap)
{
	size_t n = 0;
	if (pmd == 0 || (pmd & (pmd - 1)))
		return 0;
	for (size_t s = 0; s < nsegs; s++) {
		unsigned __int128 start = segs[s].start, end = segs[s].end, p = pmd;
		unsigned __int128 w = (start + p - 1) / p * p;
		for (; w + p <= end; w += p) {
			if (n < cap) {
				addrs[n] = (uint64_t)w;
				segidx[n] = (uint32_t)s;
			}
			n++;
		}
	}
	return n;
}

/* Plan with the count call, then a fill call into a table with one guard
 * element; check the two counts agree, the guard is intact, and return the
 * table (caller frees). */
static struct et_window *plan(const struct et_segment *segs, size_t nsegs, uint64_t pmd,
                              uint32_t object, size_t *count)
{
	size_t n = et_plan_windows(segs, nsegs, pmd, object, NULL, 0);
	struct et_window *w = malloc((n + 1) * sizeof *w);
	cr_assert_not_null(w);
	memset(w, GUARD_BYTE, (n + 1) * sizeof *w);
	size_t n2 = et_plan_windows(segs, nsegs, pmd, object, w, n);
	cr_assert_eq(n2, n, "count call said %zu, fill call %zu", n, n2);
	const unsigned char *g = (const unsigned char *)&w[n];
	for (size_t i = 0; i < sizeof *w; i++)
		cr_assert_eq(g[i], GUARD_BYTE, "guard element overwritten at byte %zu", i);
	*count = n;
	return w;
}

/* The fields every planned window must have besides its address. */
static void check_window(const struct et_window *w, uint64_t addr, uint32_t segi, uint32_t object)
{
	cr_expect_eq(w->addr, addr, "addr 0x%llx, expected 0x%llx", (unsigned long long)w->addr,
	             (unsigned long long)addr);
	cr_expect_eq(w->seg, segi, "seg %u, expected %u", w->seg, segi);
	cr_expect_eq(w->object, object, "object %u, expected %u", w->object, object);
	cr_expect_eq(w->backend, ET_BACKEND_NONE);
	cr_expect_eq(w->reason, ET_R_NONE);
	cr_expect_eq(w->err, 0);
	cr_expect(!w->candidate && !w->staged && !w->remapped && !w->file_huge && !w->huge);
	cr_expect_eq(w->slot, 0);
}

/* Plan one list and compare against explicit expected addresses (all in
 * segment `segi[i]`). */
static void expect_plan(const struct et_segment *segs, size_t nsegs, uint64_t pmd,
                        const uint64_t *addrs, const uint32_t *segi, size_t nexp)
{
	size_t n;
	struct et_window *w = plan(segs, nsegs, pmd, 7, &n);
	cr_assert_eq(n, nexp, "planned %zu windows, expected %zu", n, nexp);
	for (size_t i = 0; i < n; i++)
		check_window(&w[i], addrs[i], segi ? segi[i] : 0, 7);
	free(w);
}

#define H2M (2 * UT_MIB)

Test(plan, unaligned_start_and_end)
{
	struct et_segment s[] = { seg(0x400123, 0xA00456) };
	const uint64_t exp[] = { 0x600000, 0x800000 };
	expect_plan(s, 1, H2M, exp, NULL, 2);
}

Test(plan, smaller_than_a_window)
{
	struct et_segment inside[] = { seg(0x401000, 0x5ff000) };
	expect_plan(inside, 1, H2M, NULL, NULL, 0);
	/* Less than a window but straddling a 2 MiB boundary. */
	struct et_segment straddle[] = { seg(0x5ff000, 0x601000) };
	expect_plan(straddle, 1, H2M, NULL, NULL, 0);
	/* 2 MiB long but not aligned: still no whole window. */
	struct et_segment shifted[] = { seg(0x401000, 0x601000) };
	expect_plan(shifted, 1, H2M, NULL, NULL, 0);
}

Test(plan, exactly_aligned_segment)
{
	struct et_segment s[] = { seg(0x200000, 0x800000) };
	const uint64_t exp[] = { 0x200000, 0x400000, 0x600000 };
	expect_plan(s, 1, H2M, exp, NULL, 3);
}

Test(plan, exactly_one_window)
{
	struct et_segment s[] = { seg(0x400000, 0x600000) };
	const uint64_t exp[] = { 0x400000 };
	expect_plan(s, 1, H2M, exp, NULL, 1);
	/* One byte short at the end, and one byte early at the start. */
	struct et_segment shortend[] = { seg(0x400000, 0x5fffff) };
	expect_plan(shortend, 1, H2M, NULL, NULL, 0);
	struct et_segment early[] = { seg(0x3fffff, 0x600000) };
	expect_plan(early, 1, H2M, exp, NULL, 1);
	struct et_segment late[] = { seg(0x400001, 0x800000) };
	const uint64_t exp_late[] = { 0x600000 };
	expect_plan(late, 1, H2M, exp_late, NULL, 1);
}

Test(plan, several_segments_in_one_object)
{
	struct et_segment s[] = {
		seg(0x400000, 0x800000),           /* 2 windows */
		seg(0x1001000, 0x1600000),         /* 0x1200000, 0x1400000 */
		seg(0x1700000, 0x1800000),         /* too small */
		seg(0x2000000, 0x2200000),         /* exactly one */
	};
	const uint64_t exp[] = { 0x400000, 0x600000, 0x1200000, 0x1400000, 0x2000000 };
	const uint32_t segi[] = { 0, 0, 1, 1, 3 };
	expect_plan(s, 4, H2M, exp, segi, 5);
}

Test(plan, object_index_is_copied)
{
	struct et_segment s[] = { seg(0x400000, 0x800000) };
	struct et_window w[2];
	cr_assert_eq(et_plan_windows(s, 1, H2M, 41, w, 2), 2);
	cr_expect_eq(w[0].object, 41);
	cr_expect_eq(w[1].object, 41);
	cr_assert_eq(et_plan_windows(s, 1, H2M, UINT32_MAX, w, 2), 2);
	cr_expect_eq(w[1].object, UINT32_MAX);
}

Test(plan, ten_gib_segment_at_high_address)
{
	const uint64_t base = UINT64_C(0x7f0000000000) + 0x1234;
	struct et_segment s[] = { seg(base, base + 10 * UT_GIB) };
	size_t n;
	struct et_window *w = plan(s, 1, H2M, 3, &n);
	/* 5120 windows in 10 GiB; the unaligned start and end lose one. */
	cr_assert_eq(n, 5119);
	check_window(&w[0], UINT64_C(0x7f0000200000), 0, 3);
	check_window(&w[n - 1], UINT64_C(0x7f0000000000) + 10 * UT_GIB - H2M, 0, 3);
	for (size_t i = 1; i < n; i++)
		cr_assert_eq(w[i].addr, w[i - 1].addr + H2M, "window %zu not contiguous", i);
	free(w);

	/* The same, aligned: all 5120. */
	struct et_segment a[] = { seg(UINT64_C(0x7f0000000000), UINT64_C(0x7f0000000000) + 10 * UT_GIB) };
	cr_expect_eq(et_plan_windows(a, 1, H2M, 0, NULL, 0), 5120);
}

Test(plan, segment_ending_near_uint64_max)
{
	/* Aligned start 20 MiB below 2^64, end at UINT64_MAX: the window
	 * [2^64 - 2 MiB, 2^64) cannot be expressed with an exclusive end, so
	 * the last one starts at 2^64 - 4 MiB: 9 windows. */
	const uint64_t start = (uint64_t)0 - 10 * H2M;
	struct et_segment s[] = { seg(start, UINT64_MAX) };
	size_t n;
	struct et_window *w = plan(s, 1, H2M, 0, &n);
	cr_assert_eq(n, 9);
	check_window(&w[0], start, 0, 0);
	check_window(&w[8], (uint64_t)0 - 2 * H2M, 0, 0);
	free(w);

	/* A start that would overflow when rounded up. */
	struct et_segment top[] = { seg(UINT64_MAX - 5, UINT64_MAX) };
	expect_plan(top, 1, H2M, NULL, NULL, 0);
	struct et_segment last[] = { seg((uint64_t)0 - H2M, UINT64_MAX) };
	expect_plan(last, 1, H2M, NULL, NULL, 0);
	struct et_segment unal[] = { seg((uint64_t)0 - H2M - 1, UINT64_MAX) };
	expect_plan(unal, 1, H2M, NULL, NULL, 0);
	/* Followed by a normal segment: the planner carries on. */
	struct et_segment mix[] = { seg(UINT64_MAX - 5, UINT64_MAX), seg(0x400000, 0x600000) };
	const uint64_t exp[] = { 0x400000 };
	const uint32_t segi[] = { 1 };
	expect_plan(mix, 2, H2M, exp, segi, 1);
}

Test(plan, zero_length_and_inverted_segments)
{
	struct et_segment zero[] = { seg(0x400000, 0x400000) };
	expect_plan(zero, 1, H2M, NULL, NULL, 0);
	struct et_segment inv[] = { seg(0x800000, 0x400000) };
	expect_plan(inv, 1, H2M, NULL, NULL, 0);
	struct et_segment inv_big[] = { seg(UINT64_MAX, 0) };
	expect_plan(inv_big, 1, H2M, NULL, NULL, 0);
	struct et_segment mix[] = { seg(0x800000, 0x400000), seg(0, 0), seg(0x400000, 0x600000) };
	const uint64_t exp[] = { 0x400000 };
	const uint32_t segi[] = { 2 };
	expect_plan(mix, 3, H2M, exp, segi, 1);
	/* No segments at all. */
	cr_expect_eq(et_plan_windows(NULL, 0, H2M, 0, NULL, 0), 0);
}

Test(plan, segment_at_address_zero)
{
	struct et_segment s[] = { seg(0, 0x400000) };
	const uint64_t exp[] = { 0, 0x200000 };
	expect_plan(s, 1, H2M, exp, NULL, 2);
}

Test(plan, non_power_of_two_pmd_gives_nothing)
{
	struct et_segment s[] = { seg(0, 64 * UT_MIB) };
	const uint64_t bad[] = { 0, 3 * UT_MIB, H2M + 4096, H2M - 1, 6 * UT_MIB, UINT64_MAX };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct et_window w[4];
		memset(w, GUARD_BYTE, sizeof w);
		cr_expect_eq(et_plan_windows(s, 1, bad[i], 0, NULL, 0), 0, "pmd %llu",
		             (unsigned long long)bad[i]);
		cr_expect_eq(et_plan_windows(s, 1, bad[i], 0, w, 4), 0, "pmd %llu",
		             (unsigned long long)bad[i]);
		const unsigned char *g = (const unsigned char *)w;
		for (size_t k = 0; k < sizeof w; k++)
			cr_assert_eq(g[k], GUARD_BYTE, "pmd %llu wrote into out[]",
			             (unsigned long long)bad[i]);
	}
	/* And a power of two on the same segment does plan. */
	cr_expect_eq(et_plan_windows(s, 1, H2M, 0, NULL, 0), 32);
}

Test(plan, count_call_equals_fill_call)
{
	struct et_segment s[] = { seg(0x400000, 0x1400000), seg(0x2000001, 0x2c00000) };
	size_t n = et_plan_windows(s, 2, H2M, 0, NULL, 0);
	cr_assert_eq(n, 8 + 5);
	struct et_window w[16];
	cr_expect_eq(et_plan_windows(s, 2, H2M, 0, w, 16), n, "a bigger table changes nothing");
	cr_expect_eq(et_plan_windows(s, 2, H2M, 0, w, n), n);
	/* cap = 0 with a non-NULL table writes nothing. */
	memset(w, GUARD_BYTE, sizeof w);
	cr_expect_eq(et_plan_windows(s, 2, H2M, 0, w, 0), n);
	const unsigned char *g = (const unsigned char *)w;
	for (size_t k = 0; k < sizeof w; k++)
		cr_assert_eq(g[k], GUARD_BYTE, "cap 0 wrote into out[] at byte %zu", k);
}

Test(plan, cap_smaller_than_count)
{
	struct et_segment s[] = { seg(0x400000, 0xe00000) };      /* 5 windows */
	struct et_window w[3];
	memset(w, GUARD_BYTE, sizeof w);
	cr_assert_eq(et_plan_windows(s, 1, H2M, 2, w, 2), 5, "returns the full count");
	check_window(&w[0], 0x400000, 0, 2);
	check_window(&w[1], 0x600000, 0, 2);
	const unsigned char *g = (const unsigned char *)&w[2];
	for (size_t k = 0; k < sizeof w[2]; k++)
		cr_assert_eq(g[k], GUARD_BYTE, "wrote past cap at byte %zu", k);
	/* Cap falling in the second segment. */
	struct et_segment two[] = { seg(0x400000, 0x800000), seg(0x1000000, 0x1600000) };
	struct et_window t[4];
	memset(t, GUARD_BYTE, sizeof t);
	cr_assert_eq(et_plan_windows(two, 2, H2M, 0, t, 3), 5);
	check_window(&t[1], 0x600000, 0, 0);
	check_window(&t[2], 0x1000000, 1, 0);
	g = (const unsigned char *)&t[3];
	for (size_t k = 0; k < sizeof t[3]; k++)
		cr_assert_eq(g[k], GUARD_BYTE, "wrote past cap at byte %zu", k);
}

Test(plan, pmd_64k)
{
	const uint64_t P = 64 * UT_KIB;
	struct et_segment s[] = { seg(3 * P + 5, 7 * P + 3) };
	const uint64_t exp[] = { 4 * P, 5 * P, 6 * P };
	expect_plan(s, 1, P, exp, NULL, 3);
}

Test(plan, pmd_512m)
{
	const uint64_t P = 512 * UT_MIB;
	struct et_segment s[] = { seg(0x10000000, 0x70000000) };
	const uint64_t exp[] = { 0x20000000, 0x40000000 };
	expect_plan(s, 1, P, exp, NULL, 2);
	/* A 100 MiB text has no 512 MiB window at all. */
	struct et_segment small[] = { seg(0x400000, 0x400000 + 100 * UT_MIB) };
	expect_plan(small, 1, P, NULL, NULL, 0);
}

Test(plan, pmd_32m_aarch64_like)
{
	const uint64_t P = 32 * UT_MIB;
	const uint64_t start = UINT64_C(0xaaaa00001000);
	struct et_segment s[] = { seg(start, start + 100 * UT_MIB) };
	const uint64_t exp[] = { UINT64_C(0xaaaa02000000), UINT64_C(0xaaaa04000000) };
	expect_plan(s, 1, P, exp, NULL, 2);
	/* The same text with 2 MiB windows: 49 of them (first at +2 MiB). */
	size_t n;
	struct et_window *w = plan(s, 1, H2M, 0, &n);
	cr_expect_eq(n, 49);
	cr_expect_eq(w[0].addr, UINT64_C(0xaaaa00200000));
	free(w);
}

static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);
static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

Test(plan, random_lists_match_reference)
{
	static const uint64_t pmds[] = { 64 * UT_KIB, 2 * UT_MIB, 32 * UT_MIB, 512 * UT_MIB, UT_GIB };
	for (int iter = 0; iter < 3000; iter++) {
		uint64_t pmd = pmds[rnd() % 5];
		size_t nsegs = rnd() % 6;
		struct et_segment s[6];
		for (size_t i = 0; i < nsegs; i++) {
			uint64_t start, len;
			switch (rnd() % 4) {
			case 0:  /* near the top of the address space */
				start = UINT64_MAX - rnd() % (8 * pmd);
				len = rnd() % (8 * pmd);
				break;
			case 1:  /* aligned */
				start = (rnd() % (UINT64_C(1) << 47)) & ~(pmd - 1);
				len = (rnd() % 16) * pmd;
				break;
			case 2:  /* inverted or empty */
				start = rnd() % (UINT64_C(1) << 47);
				len = 0;
				s[i] = seg(start, start - rnd() % 4096);
				continue;
			default:
				start = rnd() % (UINT64_C(1) << 47);
				len = rnd() % (20 * pmd);
				break;
			}
			uint64_t end = start + len < start ? UINT64_MAX : start + len;
			s[i] = seg(start, end);
		}
		uint64_t ra[256];
		uint32_t rs[256];
		size_t rn = ref_plan(s, nsegs, pmd, ra, rs, 256);
		cr_assert(rn <= 256);
		size_t n;
		struct et_window *w = plan(s, nsegs, pmd, 5, &n);
		cr_assert_eq(n, rn, "iteration %d: planned %zu, reference %zu", iter, n, rn);
		for (size_t i = 0; i < n; i++) {
			cr_assert_eq(w[i].addr, ra[i], "iteration %d window %zu", iter, i);
			cr_assert_eq(w[i].seg, rs[i], "iteration %d window %zu", iter, i);
			cr_assert_eq(w[i].addr % pmd, 0);
		}
		free(w);
	}
}

/* ---------------------------------------------------------------- pads */

#define MIB (1024ull * 1024)

/* et_plan_pads with both calls (count, fill); the fill is checked against
 * the guard like the windows above. */
static size_t pads(const struct et_segment *s, size_t n, uint64_t thr, struct et_window *out, size_t cap)
{
	size_t count = et_plan_pads(s, n, 2 * MIB, thr, 7, NULL, 0);
	struct et_window buf[8];
	memset(buf, GUARD_BYTE, sizeof buf);
	size_t filled = et_plan_pads(s, n, 2 * MIB, thr, 7, buf, cap);
	cr_assert_eq(count, filled, "count call %zu, fill call %zu", count, filled);
	for (size_t i = cap; i < 8; i++) {
		const unsigned char *b = (const unsigned char *)&buf[i];
		for (size_t k = 0; k < sizeof buf[i]; k++)
			cr_assert_eq(b[k], GUARD_BYTE, "wrote past cap at element %zu", i);
	}
	for (size_t i = 0; i < count && i < cap; i++) {
		cr_assert(buf[i].pad, "window %zu is not marked as a pad", i);
		cr_assert_eq(buf[i].object, 7u);
		cr_assert_eq(buf[i].addr % (2 * MIB), 0, "window %zu not aligned", i);
		/* (written so that a window ending at 2^64 does not overflow) */
		cr_assert(buf[i].copy_lo >= buf[i].addr && buf[i].copy_hi - buf[i].addr <= 2 * MIB &&
		          buf[i].copy_lo < buf[i].copy_hi, "window %zu: text part outside its window", i);
		out[i] = buf[i];
	}
	return count;
}

Test(plan, pad_tail_over_and_under_threshold)
{
	/* text [2 MiB, 8 MiB + 10000): whole windows 2..8 MiB, a tail of 10000 bytes */
	struct et_segment s = seg(2 * MIB, 8 * MIB + 10000);
	struct et_window w[8];
	cr_assert_eq(pads(&s, 1, 4096, w, 8), 1);
	cr_assert_eq(w[0].addr, 8 * MIB);
	cr_assert_eq(w[0].copy_lo, 8 * MIB);
	cr_assert_eq(w[0].copy_hi, 8 * MIB + 10000);
	cr_assert_eq(w[0].seg, 0u);
	cr_assert_eq(pads(&s, 1, 9999, w, 8), 1, "10000 bytes > 9999: padded");
	cr_assert_eq(pads(&s, 1, 10000, w, 8), 0, "10000 bytes = threshold: not padded");
	cr_assert_eq(pads(&s, 1, 0, w, 8), 0, "threshold 0 means never");
}

Test(plan, pad_head_and_tail)
{
	/* text [1 MiB, 5 MiB + 3 MiB/2): head 1 MiB in [0, 2), tail 1.5 MiB in [4, 6) */
	struct et_segment s = seg(1 * MIB, 5 * MIB + MIB / 2);
	struct et_window w[8];
	cr_assert_eq(pads(&s, 1, 4096, w, 8), 2);
	cr_assert_eq(w[0].addr, 0);
	cr_assert_eq(w[0].copy_lo, 1 * MIB);
	cr_assert_eq(w[0].copy_hi, 2 * MIB);
	cr_assert_eq(w[1].addr, 4 * MIB);
	cr_assert_eq(w[1].copy_lo, 4 * MIB);
	cr_assert_eq(w[1].copy_hi, 5 * MIB + MIB / 2);
	/* the whole windows are not pads */
	cr_assert_eq(et_plan_windows(&s, 1, 2 * MIB, 0, NULL, 0), 1);
}

Test(plan, pad_segment_inside_one_window)
{
	/* [3 MiB + 4096, 3 MiB + 512 KiB): one window, padded once */
	struct et_segment s = seg(3 * MIB + 4096, 3 * MIB + 512 * 1024);
	struct et_window w[8];
	cr_assert_eq(pads(&s, 1, 4096, w, 8), 1);
	cr_assert_eq(w[0].addr, 2 * MIB);
	cr_assert_eq(w[0].copy_lo, 3 * MIB + 4096);
	cr_assert_eq(w[0].copy_hi, 3 * MIB + 512 * 1024);
	/* aligned start, short: one pad too */
	s = seg(4 * MIB, 4 * MIB + 8192);
	cr_assert_eq(pads(&s, 1, 4096, w, 8), 1);
	cr_assert_eq(w[0].addr, 4 * MIB);
	/* a small segment under the threshold: none */
	s = seg(4 * MIB, 4 * MIB + 4096);
	cr_assert_eq(pads(&s, 1, 4096, w, 8), 0);
}

Test(plan, pad_aligned_segment_needs_none)
{
	struct et_segment s = seg(2 * MIB, 10 * MIB);
	struct et_window w[8];
	cr_assert_eq(pads(&s, 1, 1, w, 8), 0);
}

Test(plan, pad_several_segments_and_cap)
{
	struct et_segment s[2] = { seg(1 * MIB, 3 * MIB), seg(9 * MIB, 11 * MIB + 4097) };
	struct et_window w[8];
	/* seg 0: head [1,2) and tail [2,3); seg 1: head [9,10) and tail [11, 11+4097) */
	cr_assert_eq(pads(s, 2, 4096, w, 8), 4);
	cr_assert_eq(w[0].seg, 0u);
	cr_assert_eq(w[1].seg, 0u);
	cr_assert_eq(w[2].seg, 1u);
	cr_assert_eq(w[3].seg, 1u);
	cr_assert_eq(w[3].addr, 10 * MIB);
	cr_assert_eq(w[3].copy_hi, 11 * MIB + 4097);
	cr_assert_eq(pads(s, 2, 4096, w, 2), 4, "a short table still gets the full count");
}

Test(plan, pad_near_the_top_of_the_address_space)
{
	/* the last window of the address space, [2^64 - 2 MiB, 2^64), holds a
	 * tail of 2 MiB - 4095 bytes: padded, without wrapping around; the
	 * head before it (4095 bytes) is under the threshold */
	struct et_segment s = seg(UINT64_MAX - 2 * MIB - 4094, UINT64_MAX - 4094);
	struct et_window w[8];
	cr_assert_eq(pads(&s, 1, 4096, w, 8), 1);
	cr_assert_eq(w[0].addr, UINT64_MAX - (2 * MIB - 1));
	cr_assert_eq(w[0].copy_hi, UINT64_MAX - 4094);
}

/* ------------------------------------------------------- objects and runs */

#include "core/profile.h"
#include "core/run.h"

#include <string.h>


static struct et_run run_of(struct et_object *objs, size_t n, struct et_window *wins, size_t nwins)
{
	struct et_run r;
	memset(&r, 0, sizeof r);
	r.objs = objs;
	r.nobjs = n;
	r.wins = wins;
	r.nwins = nwins;
	r.si.pmd_size = H2M;
	r.opt.pad_threshold = 4096;
	r.opt.backend = ET_BACKEND_AUTO;
	r.opt.hot_coverage = 90;
	r.opt.profile = "hot.prof";
	return r;
}

/* Text 0x1f0000..0x610000 (64 KiB in each partial window): a head pad [0, 2M), windows 2M..6M, a tail pad
 * [6M, 8M) — in address order, each with its segment's index. */
Test(plan, object_windows_in_address_order_with_pads)
{
	static struct et_object o;
	memset(&o, 0, sizeof o);
	o.segs[0] = seg(0x1000, 0x1000);   /* empty first segment: no window */
	o.segs[1] = seg(0x1f0000, 0x610000);
	o.nsegs = 2;
	struct et_run r = run_of(&o, 1, NULL, 0);
	size_t n = et_plan_object(&r, &o, 7, NULL);
	cr_assert_eq(n, 4, "count: %zu", n);
	struct et_window w[5];
	memset(w, GUARD_BYTE, sizeof w);
	cr_assert_eq(et_plan_object(&r, &o, 7, w), 4);
	const uint64_t want[4] = { 0, H2M, 2 * H2M, 3 * H2M };
	const bool pad[4] = { true, false, false, true };
	for (int i = 0; i < 4; i++) {
		cr_expect_eq(w[i].addr, want[i], "window %d at %#llx", i, (unsigned long long)w[i].addr);
		cr_expect_eq(w[i].pad, pad[i], "window %d pad %d", i, w[i].pad);
		cr_expect_eq(w[i].seg, 1u, "window %d seg %u", i, w[i].seg);
		cr_expect_eq(w[i].object, 7u);
	}
	cr_expect_eq(((unsigned char *)&w[4])[0], GUARD_BYTE, "wrote past the count");
}

/* Padding needs a copy: not with the file backend alone, not when windows
 * move again (a range pass), not with the threshold 0. */
Test(plan, object_no_pads_without_a_copy)
{
	static struct et_object o;
	memset(&o, 0, sizeof o);
	o.segs[0] = seg(0x1f0000, 0x610000);
	o.nsegs = 1;
	struct et_run r = run_of(&o, 1, NULL, 0);
	cr_expect_eq(et_plan_object(&r, &o, 0, NULL), 4);
	r.opt.backend = ET_BACKEND_FILE;
	cr_expect_eq(et_plan_object(&r, &o, 0, NULL), 2, "file backend: whole windows only");
	r.opt.backend = ET_BACKEND_AUTO;
	r.again = true;
	cr_expect_eq(et_plan_object(&r, &o, 0, NULL), 2, "moving again: whole windows only");
	r.again = false;
	r.opt.pad_threshold = 0;
	cr_expect_eq(et_plan_object(&r, &o, 0, NULL), 2, "threshold 0: never pad");
}

Test(plan, classify_include_and_exclude)
{
	static struct et_object o;
	memset(&o, 0, sizeof o);
	strcpy(o.path, "/usr/lib/libfoo.so.1");
	struct et_run r = run_of(&o, 1, NULL, 0);
	et_plan_classify(&r, &o);
	cr_expect_eq(o.skip, ET_R_NONE, "no lists: considered");
	r.opt.include = "libbar*";
	et_plan_classify(&r, &o);
	cr_expect_eq(o.skip, ET_R_NOT_INCLUDED);
	o.skip = ET_R_NONE;
	r.opt.include = "libfoo*";
	r.opt.exclude = "/usr/lib/*";
	et_plan_classify(&r, &o);
	cr_expect_eq(o.skip, ET_R_EXCLUDED, "exclude wins over include");
	o.skip = ET_R_VDSO;
	r.opt.include = r.opt.exclude = NULL;
	et_plan_classify(&r, &o);
	cr_expect_eq(o.skip, ET_R_VDSO, "an earlier skip stays");
}

/* Four windows with 10, 60, 0 and 30 samples (object at base 0x10000000):
 * 90% coverage keeps the 60 and the 30; a budget of one window keeps the
 * 60 alone; the others are cold, with their heat recorded. */
static const char *hot_profile =
	"enormoustext-profile 1\n"
	"granule 4096\n"
	"object 0123456789abcdef0123456789abcdef01234567 /bin/hot\n"
	"0 10\n"
	"200000 60\n"
	"600000 30\n";

static void hot_setup(struct et_object *o, struct et_window *w, struct et_profile *p)
{
	memset(o, 0, sizeof *o);
	strcpy(o->path, "/bin/hot");
	strcpy(o->build_id, "0123456789abcdef0123456789abcdef01234567");
	o->base = 0x10000000;
	o->nwindows = 4;
	o->first_window = 0;
	for (int i = 0; i < 4; i++) {
		memset(&w[i], 0, sizeof w[i]);
		w[i].addr = o->base + (uint64_t)i * H2M;
		w[i].candidate = true;
	}
	cr_assert_eq(et_profile_parse(p, hot_profile, strlen(hot_profile)), 0, "profile: %s", p->err);
}

Test(plan, hot_windows_by_coverage)
{
	static struct et_object o;
	struct et_window w[4];
	struct et_profile p;
	hot_setup(&o, w, &p);
	struct et_run r = run_of(&o, 1, w, 4);
	et_plan_hot(&r, &p);
	const bool keep[4] = { false, true, false, true };
	const uint64_t heat[4] = { 10, 60, 0, 30 };
	for (int i = 0; i < 4; i++) {
		cr_expect_eq(w[i].candidate, keep[i], "window %d kept %d", i, w[i].candidate);
		cr_expect_eq(w[i].reason, keep[i] ? ET_R_NONE : ET_R_COLD, "window %d reason %d", i, w[i].reason);
		cr_expect_eq(w[i].heat, heat[i], "window %d heat %llu", i, (unsigned long long)w[i].heat);
		cr_expect(w[i].heat_known);
	}
	et_profile_free(&p);
}

Test(plan, hot_windows_within_budget)
{
	static struct et_object o;
	struct et_window w[4];
	struct et_profile p;
	hot_setup(&o, w, &p);
	struct et_run r = run_of(&o, 1, w, 4);
	r.opt.hot_budget = H2M;
	et_plan_hot(&r, &p);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(w[i].candidate, i == 1, "window %d kept %d", i, w[i].candidate);
	et_profile_free(&p);
}

Test(plan, hot_strict_leaves_unprofiled_objects_alone)
{
	static struct et_object o;
	struct et_window w[4];
	struct et_profile p;
	hot_setup(&o, w, &p);
	strcpy(o.build_id, "ffffffffffffffffffffffffffffffffffffffff");
	struct et_run r = run_of(&o, 1, w, 4);
	et_plan_hot(&r, &p);
	for (int i = 0; i < 4; i++)
		cr_expect(w[i].candidate, "not strict: an object the profile lacks follows the normal rules");
	r.opt.profile_strict = true;
	et_plan_hot(&r, &p);
	for (int i = 0; i < 4; i++) {
		cr_expect(!w[i].candidate);
		cr_expect_eq(w[i].reason, ET_R_NOT_PROFILED);
	}
	et_profile_free(&p);
}
