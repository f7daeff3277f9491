/*
 * itlb_model.h — the translation model of itlbgrind: the published cores it
 * describes, and set-associative TLB arrays with true LRU replacement (a
 * first level for instruction fetches, a second level behind it; a miss in
 * both is a page walk).
 *
 * Owns: the cores' parameters (each cited) and the lookup/fill/invalidate
 * arithmetic.  It must never call anything: it is compiled into a Valgrind
 * tool, which has no libc, so it is plain computation on memory the caller
 * provides (sizes from et_tlb_words()).
 *
 * What the model is and is not:
 *  - A lookup probes the first-level array for the page's size; on a miss
 *    the second level; on a miss there too it counts a walk.  A miss fills
 *    every level it missed in (no inclusion or exclusion is enforced: the
 *    vendors do not document one for instruction translations).
 *  - Replacement is true LRU within a set.  The real arrays use undisclosed
 *    pseudo-LRU variants; for the cyclic patterns that decide iTLB
 *    behaviour (a loop over more pages than a set holds) both miss on every
 *    access, and both hit when the pages fit.
 *  - Indexing: set = virtual page number modulo the number of sets, with the
 *    page number of the entry's own size (addr >> 12 or addr >> 21).
 *  - Only instruction fetches are modelled.  On Intel the second level
 *    (STLB) is shared with data translations, which compete for it in a
 *    real run: the model's STLB misses are a lower bound there.  AMD's L2
 *    iTLB holds instruction translations only.
 *  - 1 GiB pages are modelled as 2 MiB pages (Intel's iTLB fractures them;
 *    code on 1 GiB pages is rare).
 */
#ifndef ITLB_MODEL_H
#define ITLB_MODEL_H

#define ET_PS_4K 0u
#define ET_PS_2M 1u
#define ET_PS_MASK(ps) (1u << (ps))
#define ET_MAX_L1 2

typedef unsigned long long et_u64;

/* One array: sets x ways entries holding the page sizes in `sizes`
 * (ET_PS_MASK bits).  ways_2m, when not 0, is how many ways of each set a
 * 2 MiB entry may take (an array shared by both sizes with fewer entries
 * for the large one). */
struct et_tlb_geom {
	const char *name;
	unsigned sets, ways;
	unsigned sizes;
	unsigned ways_2m;
};

struct et_core_model {
	const char *name;      /* --model=NAME */
	const char *aliases;   /* other names accepted, comma-separated */
	const char *desc;
	const char *source;    /* where the numbers come from */
	unsigned n_l1;
	struct et_tlb_geom l1[ET_MAX_L1];
	struct et_tlb_geom l2;
	const char *l2_note;
	/* For the printed estimate only (labelled as such): cycles assumed per
	 * second-level hit and per walk.  Not from the sources above. */
	unsigned stlb_hit_cycles, walk_cycles;
};

/*
 * The cores.  Where a figure was read in the cited text it is marked [r];
 * figures taken from the vendor documents named but not re-read for this
 * table are marked [d]; modelling choices are marked [m].
 */
static const struct et_core_model et_core_models[] = {
	{
		"goldencove", "sapphirerapids,alderlake,raptorcove,glc",
		"Intel Golden Cove P-core (Alder Lake P-core, Sapphire Rapids)",
		"L1 iTLB 4K: 256 entries [r], 8-way [d]; L1 iTLB 2M: 32 entries [r], "
		"associativity not given there, fully associative [m]; STLB shared by "
		"instructions and data, 2048 entries [r], 16-way [d], 2M entries use at "
		"most 1024 of them (8 of 16 ways [m]) [r]. [r]: D. Bakhvalov, "
		"Performance Analysis and Tuning on Modern CPUs, ch. 3 'Modern CPU "
		"design', TLB hierarchy of Golden Cove (github.com/dendibakh/perf-book); "
		"[d]: Intel 64 and IA-32 Architectures Optimization Reference Manual "
		"(248966), Golden Cove TLB parameters",
		2,
		{ { "L1 iTLB 4K", 32, 8, ET_PS_MASK(ET_PS_4K), 0 },
		  { "L1 iTLB 2M", 1, 32, ET_PS_MASK(ET_PS_2M), 0 } },
		{ "STLB", 128, 16, ET_PS_MASK(ET_PS_4K) | ET_PS_MASK(ET_PS_2M), 8 },
		"shared with data translations (not modelled)",
		8, 30,
	},
	{
		"zen4", "zen3,zen2,zen",
		"AMD Zen 2/3/4",
		"L1 iTLB: 64 entries, fully associative, all page sizes [r]; L2 iTLB: "
		"512 entries, 8-way, 4K and 2M pages [r], instructions only. [r]: "
		"7-cpu.com/cpu/Zen2.html (AMD 3800X); [d]: AMD Software Optimization "
		"Guides for Family 17h (56305) and 19h (56665 Zen 3, 57647 Zen 4) give "
		"the same iTLB sizes",
		1,
		{ { "L1 iTLB", 1, 64, ET_PS_MASK(ET_PS_4K) | ET_PS_MASK(ET_PS_2M), 0 },
		  { 0, 0, 0, 0, 0 } },
		{ "L2 iTLB", 64, 8, ET_PS_MASK(ET_PS_4K) | ET_PS_MASK(ET_PS_2M), 0 },
		"instruction translations only",
		7, 30,
	},
	{
		"skylake", "skylake-sp,cascadelake,skx",
		"Intel Skylake (client and server)",
		"L1 iTLB 4K: 128 entries, 8-way [r]; L1 iTLB 2M: 8 entries per thread, "
		"associativity not described, fully associative [m] [r]; STLB shared by "
		"4K and 2M pages and by data: 1536 entries [r], 12-way [d] (CPUID leaf 2 "
		"descriptor 0xC3 reports 6-way). [r]: Intel Optimization Reference "
		"Manual 248966-045 Table 2-15 as quoted in community.intel.com thread "
		"'TLB information provided by cpuid doesn't make sense to me' (1371605)",
		2,
		{ { "L1 iTLB 4K", 16, 8, ET_PS_MASK(ET_PS_4K), 0 },
		  { "L1 iTLB 2M", 1, 8, ET_PS_MASK(ET_PS_2M), 0 } },
		{ "STLB", 128, 12, ET_PS_MASK(ET_PS_4K) | ET_PS_MASK(ET_PS_2M), 0 },
		"shared with data translations (not modelled)",
		9, 30,
	},
};
#define ET_N_CORE_MODELS (sizeof et_core_models / sizeof et_core_models[0])

/* Runtime state of one array.  key 0 = invalid; otherwise
 * ((page number << 1) | size) + 1. */
struct et_tlb {
	unsigned sets, ways, sizes, ways_2m;
	et_u64 *key;
	et_u64 *stamp;
	et_u64 clock;
};

/* Words of memory one array needs (key + stamp per entry). */
static inline unsigned long et_tlb_words(const struct et_tlb_geom *g)
{
	return 2ul * g->sets * g->ways;
}

static inline void et_tlb_init(struct et_tlb *t, const struct et_tlb_geom *g, et_u64 *mem)
{
	unsigned long n = (unsigned long)g->sets * g->ways;
	t->sets = g->sets;
	t->ways = g->ways;
	t->sizes = g->sizes;
	t->ways_2m = g->ways_2m;
	t->key = mem;
	t->stamp = mem + n;
	t->clock = 0;
	for (unsigned long i = 0; i < 2 * n; i++)
		mem[i] = 0;
}

static inline unsigned et_ps_shift(unsigned ps)
{
	return ps == ET_PS_2M ? 21u : 12u;
}

static inline et_u64 et_tlb_key(et_u64 addr, unsigned ps)
{
	return (((addr >> et_ps_shift(ps)) << 1) | ps) + 1;
}

/* Look `addr` (a page of size ps) up; fill on a miss.  Returns 1 on a hit. */
static inline int et_tlb_access(struct et_tlb *t, et_u64 addr, unsigned ps)
{
	et_u64 vpn = addr >> et_ps_shift(ps);
	et_u64 key = ((vpn << 1) | ps) + 1;
	unsigned long base = (unsigned long)(vpn % t->sets) * t->ways;
	et_u64 *k = t->key + base, *s = t->stamp + base;
	et_u64 now = ++t->clock;
	for (unsigned w = 0; w < t->ways; w++) {
		if (k[w] == key) {
			s[w] = now;
			return 1;
		}
	}
	/* Miss: the first free way, else the least recently used one, among
	 * the ways this size may take. */
	unsigned nw = (ps == ET_PS_2M && t->ways_2m) ? t->ways_2m : t->ways;
	unsigned victim = 0;
	for (unsigned w = 0; w < nw; w++) {
		if (k[w] == 0) {
			victim = w;
			break;
		}
		if (s[w] < s[victim])
			victim = w;
	}
	k[victim] = key;
	s[victim] = now;
	return 0;
}

/* Drop every entry that translates any byte of [lo, hi). */
static inline void et_tlb_invalidate(struct et_tlb *t, et_u64 lo, et_u64 hi)
{
	unsigned long n = (unsigned long)t->sets * t->ways;
	for (unsigned long i = 0; i < n; i++) {
		et_u64 key = t->key[i];
		if (!key)
			continue;
		unsigned ps = (unsigned)((key - 1) & 1);
		et_u64 start = ((key - 1) >> 1) << et_ps_shift(ps);
		et_u64 end = start + (1ull << et_ps_shift(ps));
		if (start < hi && lo < end)
			t->key[i] = 0;
	}
}

static inline void et_tlb_flush(struct et_tlb *t)
{
	unsigned long n = (unsigned long)t->sets * t->ways;
	for (unsigned long i = 0; i < n; i++)
		t->key[i] = 0;
}

/* One core's instruction-side translation hierarchy. */
struct et_core {
	const struct et_core_model *m;
	struct et_tlb l1[ET_MAX_L1];
	struct et_tlb l2;
	unsigned l1_for[2];   /* index into l1[] for each page size */
};

#define ET_FETCH_L1_HIT 0
#define ET_FETCH_L2_HIT 1
#define ET_FETCH_WALK 2

static inline unsigned long et_core_words(const struct et_core_model *m)
{
	unsigned long n = et_tlb_words(&m->l2);
	for (unsigned i = 0; i < m->n_l1; i++)
		n += et_tlb_words(&m->l1[i]);
	return n;
}

static inline void et_core_init(struct et_core *c, const struct et_core_model *m, et_u64 *mem)
{
	c->m = m;
	for (unsigned i = 0; i < m->n_l1; i++) {
		et_tlb_init(&c->l1[i], &m->l1[i], mem);
		mem += et_tlb_words(&m->l1[i]);
		for (unsigned ps = 0; ps < 2; ps++)
			if (m->l1[i].sizes & ET_PS_MASK(ps))
				c->l1_for[ps] = i;
	}
	et_tlb_init(&c->l2, &m->l2, mem);
}

/* One instruction fetch from the page of size ps holding addr. */
static inline int et_core_fetch(struct et_core *c, et_u64 addr, unsigned ps)
{
	if (et_tlb_access(&c->l1[c->l1_for[ps]], addr, ps))
		return ET_FETCH_L1_HIT;
	if (et_tlb_access(&c->l2, addr, ps))
		return ET_FETCH_L2_HIT;
	return ET_FETCH_WALK;
}

static inline void et_core_invalidate(struct et_core *c, et_u64 lo, et_u64 hi)
{
	for (unsigned i = 0; i < c->m->n_l1; i++)
		et_tlb_invalidate(&c->l1[i], lo, hi);
	et_tlb_invalidate(&c->l2, lo, hi);
}

static inline void et_core_flush(struct et_core *c)
{
	for (unsigned i = 0; i < c->m->n_l1; i++)
		et_tlb_flush(&c->l1[i]);
	et_tlb_flush(&c->l2);
}

#endif
