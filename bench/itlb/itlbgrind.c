/*
 * itlbgrind — a Valgrind tool that counts instruction-translation (iTLB)
 * misses deterministically: every guest instruction fetch goes through a
 * model of the first- and second-level instruction TLBs of published cores
 * (itlb_model.h), and every load and store through their data TLBs
 * (--data=yes, the default: the second level shared with code where the
 * core shares it), with each page's size taken from what the kernel really
 * mapped for the process.  This machine has no hardware PMU and time is too
 * noisy to resolve what huge text pages buy; a count that is the same on
 * every run can.
 *
 * Owns: instrumentation (one helper call per instruction-page change, an
 * inline instruction count per run of instructions, an inline compare and
 * a helper call per data-page change), the per-thread TLB
 * state, the map of 2 MiB windows on huge pages (PAGEMAP_SCAN, or smaps +
 * kpageflags), the object names, the per-process result records and the
 * snapshots asked for from outside (--snapshot-file).
 * Must never: call libc (a Valgrind tool has none: only VG_() functions),
 * change what the guest does, or keep a file descriptor open across guest
 * code (the guest must not see one more fd).
 *
 * Equivalence of the page-change shortcut: a translation that was just used
 * is the most recently used entry of its set in every array it sits in, so
 * using it again changes no replacement state and is a hit in every model.
 * Consecutive instructions of one thread on one 4 KiB page (or one 2 MiB
 * page) therefore need no lookup: the helper runs when a thread's fetch
 * moves to another page, and again after anything that may have dropped
 * translations (a mapping change resets every thread's last page).
 */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "itlb_model.h"
#include "itlbgrind.h"

/* The core's raw system call (not in the tool headers; libcoregrind has it). */
extern SysRes VG_(do_syscall)(UWord sysno, RegWord, RegWord, RegWord, RegWord,
                              RegWord, RegWord, RegWord, RegWord);
extern SysRes VG_(pread)(Int fd, void *buf, Int count, OffT offset);

#define ET_PAGE 4096ul
#define ET_HUGE (2ul << 20)
#define ET_MAX_OBJS 4096

/* ------------------------------------------------------------ options */

static const HChar *clo_model = "goldencove,zen4";
static const HChar *clo_out = NULL;
static Bool clo_json = False;
static Long clo_rescan_mi = 50;          /* full rescan every N million instructions */
static const HChar *clo_huge_source = "auto";
static Long clo_objects = 12;
static Bool clo_debug = False;
static const HChar *clo_snapshot_file = NULL;
static Bool clo_data = True;

static Bool et_process_cmd_line_option(const HChar *arg)
{
	if VG_STR_CLO(arg, "--model", clo_model) {}
	else if VG_STR_CLO(arg, "--out", clo_out) {}
	else if VG_BOOL_CLO(arg, "--json", clo_json) {}
	else if VG_BINT_CLO(arg, "--rescan-interval", clo_rescan_mi, 0, 1000000) {}
	else if VG_STR_CLO(arg, "--huge-source", clo_huge_source) {}
	else if VG_XACT_CLO(arg, "--objects=all", clo_objects, ET_MAX_OBJS) {}
	else if VG_BINT_CLO(arg, "--objects", clo_objects, 0, ET_MAX_OBJS) {}
	else if VG_STR_CLO(arg, "--snapshot-file", clo_snapshot_file) {}
	else if VG_BOOL_CLO(arg, "--data", clo_data) {}
	else if VG_BOOL_CLO(arg, "--debug", clo_debug) {}
	else
		return False;
	return True;
}

static void et_print_usage(void)
{
	VG_(printf)(
"    --model=LIST              cores to model, comma-separated, first is primary\n"
"                              (goldencove zen4 zen3 skylake neoverse-n1\n"
"                              neoverse-v1 neoverse-v2, aliases accepted; all)\n"
"                              [goldencove,zen4]\n"
"    --data=no|yes             loads and stores through each core's data TLBs\n"
"                              (L1 dTLB; the second level, shared with code on\n"
"                              Intel and Arm, of its own on AMD) [yes]\n"
"    --out=FILE                append this process's record to FILE (%%p = pid,\n"
"                              %%q{VAR} = environment) instead of the log\n"
"    --json=no|yes             one JSON object per record [no]\n"
"    --rescan-interval=N       re-read the page sizes every N million guest\n"
"                              instructions, 0 = only after mapping changes [50]\n"
"    --huge-source=auto|pagemap-scan|smaps|none\n"
"                              where page sizes come from: PAGEMAP_SCAN on\n"
"                              /proc/self/pagemap (Linux 6.7+), smaps (+\n"
"                              kpageflags as root), or none (all 4 KiB) [auto]\n"
"    --objects=N|all           objects listed in the text report [12]\n"
"    --snapshot-file=FILE      watch FILE (%%p, %%q{VAR} as for --out): when it\n"
"                              changes (inode, size, mtime or ctime), write a\n"
"                              snapshot record labelled with its first line (64\n"
"                              bytes at most, any but printable ASCII as '?'),\n"
"                              as ITLBGRIND_SNAPSHOT does; nothing is reset.\n"
"                              Looked at when a thread resumes guest code and\n"
"                              20000 blocks ran since the last look (a busy\n"
"                              thread resumes every 100000), at once after a\n"
"                              call that waits (poll, select, epoll_wait,\n"
"                              nanosleep, accept, wait4, ...), before an exec\n"
"                              and at exit.  Its state at start-up is no\n"
"                              snapshot; a forked child goes on from its\n"
"                              parent's.  An empty file is taken as one being\n"
"                              written; rename a new file over FILE to be sure\n"
"                              that two quick writes are both seen\n"
"    --debug=no|yes            log mapping events and rescans [no]\n");
}

static void et_print_debug_usage(void)
{
	VG_(printf)("    (none)\n");
}

/* ------------------------------------------------------------ models */

static const struct et_core_model *models[ET_N_CORE_MODELS];
static UInt n_models;

static Bool et_name_in_list(const HChar *name, Int len, const HChar *list)
{
	const HChar *p = list;
	while (*p) {
		const HChar *e = p;
		while (*e && *e != ',')
			e++;
		if (e - p == len && VG_(strncmp)(p, name, len) == 0)
			return True;
		p = *e ? e + 1 : e;
	}
	return False;
}

static void et_parse_models(void)
{
	const HChar *p = clo_model;
	if (VG_(strcmp)(p, "all") == 0) {
		for (UInt i = 0; i < ET_N_CORE_MODELS; i++)
			models[n_models++] = &et_core_models[i];
		return;
	}
	while (*p) {
		const HChar *e = p;
		while (*e && *e != ',')
			e++;
		Int len = (Int)(e - p);
		const struct et_core_model *found = NULL;
		for (UInt i = 0; i < ET_N_CORE_MODELS && !found; i++) {
			const struct et_core_model *m = &et_core_models[i];
			if ((Int)VG_(strlen)(m->name) == len && VG_(strncmp)(m->name, p, len) == 0)
				found = m;
			else if (et_name_in_list(p, len, m->aliases))
				found = m;
		}
		if (!found) {
			VG_(fmsg_bad_option)("--model", "unknown model '%.*s' (known: goldencove, zen4, zen3, skylake, neoverse-n1, neoverse-v1, neoverse-v2, all)\n",
			                     len, p);
		}
		Bool dup = False;
		for (UInt i = 0; i < n_models; i++)
			dup |= models[i] == found;
		if (!dup && n_models < ET_N_CORE_MODELS)
			models[n_models++] = found;
		p = *e ? e + 1 : e;
	}
	if (n_models == 0)
		VG_(fmsg_bad_option)("--model", "no model named\n");
}

/* ------------------------------------------------------------ objects */

struct et_counts {
	ULong l1_miss[2];   /* by page size */
	ULong l2_hit[2];
	ULong walks[2];
};

struct et_obj {
	HChar *name;
	ULong instrs;                          /* incremented by inline IR */
	ULong fetch[2];                        /* page-change lookups, by size */
	struct et_counts c[ET_N_CORE_MODELS];
	ULong text_bytes, huge_bytes;          /* filled when a record is written */
};

/* Fixed addresses: instrumented code adds to objs[i].instrs directly. */
static struct et_obj objs[ET_MAX_OBJS];
static UInt n_objs;

static UInt et_obj_named(const HChar *name)
{
	for (UInt i = 0; i < n_objs; i++)
		if (VG_(strcmp)(objs[i].name, name) == 0)
			return i;
	if (n_objs == ET_MAX_OBJS)
		return 0;   /* the first object collects the rest */
	objs[n_objs].name = VG_(strdup)("itlb.obj", name);
	return n_objs++;
}

/* Address ranges -> object, sorted, disjoint. */
struct et_range {
	Addr lo, hi;
	UInt obj;
};
static struct et_range *ranges;
static UInt n_ranges, cap_ranges;

static Int et_range_find(Addr a)
{
	Int lo = 0, hi = (Int)n_ranges - 1;
	while (lo <= hi) {
		Int mid = (lo + hi) / 2;
		if (a < ranges[mid].lo)
			hi = mid - 1;
		else if (a >= ranges[mid].hi)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

static void et_range_insert_at(UInt i, Addr lo, Addr hi, UInt obj)
{
	if (n_ranges == cap_ranges) {
		cap_ranges = cap_ranges ? 2 * cap_ranges : 256;
		ranges = VG_(realloc)("itlb.ranges", ranges, cap_ranges * sizeof *ranges);
	}
	for (UInt j = n_ranges; j > i; j--)
		ranges[j] = ranges[j - 1];
	ranges[i].lo = lo;
	ranges[i].hi = hi;
	ranges[i].obj = obj;
	n_ranges++;
}

static void et_range_remove(Addr lo, Addr hi)
{
	UInt i = 0;
	while (i < n_ranges) {
		struct et_range *r = &ranges[i];
		if (r->hi <= lo || r->lo >= hi) {
			i++;
			continue;
		}
		if (r->lo < lo && r->hi > hi) {        /* split */
			Addr old_hi = r->hi;
			UInt obj = r->obj;
			r->hi = lo;
			et_range_insert_at(i + 1, hi, old_hi, obj);
			return;
		}
		if (r->lo < lo) {
			r->hi = lo;
			i++;
		} else if (r->hi > hi) {
			r->lo = hi;
			i++;
		} else {
			for (UInt j = i; j + 1 < n_ranges; j++)
				ranges[j] = ranges[j + 1];
			n_ranges--;
		}
	}
}

static void et_range_set(Addr lo, Addr hi, UInt obj)
{
	if (lo >= hi)
		return;
	et_range_remove(lo, hi);
	UInt i = 0;
	while (i < n_ranges && ranges[i].lo < lo)
		i++;
	et_range_insert_at(i, lo, hi, obj);
}

/* The object a client segment belongs to, by the name the address-space
 * manager knows for it. */
static UInt et_obj_for_segment(NSegment const *seg)
{
	const HChar *fn = seg ? VG_(am_get_filename)(seg) : NULL;
	if (fn)
		return et_obj_named(fn);
	return et_obj_named("[anon]");
}

static UInt et_obj_of(Addr a)
{
	Int i = et_range_find(a);
	if (i >= 0)
		return ranges[i].obj;
	/* Code in a mapping we were not told about as executable (made so
	 * with mprotect, or the vdso): name it now, and remember it. */
	NSegment const *seg = VG_(am_find_nsegment)(a);
	UInt obj = et_obj_for_segment(seg);
	if (seg)
		et_range_set(seg->start, seg->end + 1, obj);
	return obj;
}

/* ------------------------------------------------------------ huge windows */

/* One bit per 2 MiB window of the 47-bit user address space: a radix of
 * 1 GiB leaves of 512 bits. */
#define ET_TOP_BITS 17
static ULong *huge_top[1u << ET_TOP_BITS];

static inline Bool et_is_huge(Addr a)
{
	UWord top = a >> 30;
	if (top >= (1u << ET_TOP_BITS))
		return False;
	ULong *leaf = huge_top[top];
	if (!leaf)
		return False;
	UWord w = (a >> 21) & 511;
	return (leaf[w >> 6] >> (w & 63)) & 1;
}

static void et_set_huge(Addr a, Bool on)
{
	UWord top = a >> 30;
	if (top >= (1u << ET_TOP_BITS))
		return;
	ULong *leaf = huge_top[top];
	if (!leaf) {
		if (!on)
			return;
		leaf = huge_top[top] = VG_(calloc)("itlb.huge", 8, sizeof(ULong));
	}
	UWord w = (a >> 21) & 511;
	if (on)
		leaf[w >> 6] |= 1ull << (w & 63);
	else
		leaf[w >> 6] &= ~(1ull << (w & 63));
}

/* ------------------------------------------------------------ threads */

struct et_thread {
	Addr last_page;     /* 4 KiB page of the last lookup, or 1 (none) */
	Addr last_huge;     /* 2 MiB page of the last lookup if it was huge, or 1 */
	Addr last_dpage;    /* the same for data: read by the instrumented code */
	Addr last_dhuge;
	struct et_core core[ET_N_CORE_MODELS];
	et_u64 *mem;
};

static struct et_thread **threads;
static struct et_thread *cur;
static UInt threads_seen;

static void et_thread_reset(struct et_thread *t)
{
	t->last_page = 1;
	t->last_huge = 1;
	t->last_dpage = 1;
	t->last_dhuge = 1;
	for (UInt m = 0; m < n_models; m++)
		et_core_flush(&t->core[m]);
}

static struct et_thread *et_thread_get(ThreadId tid)
{
	if (threads[tid])
		return threads[tid];
	struct et_thread *t = VG_(calloc)("itlb.thread", 1, sizeof *t);
	unsigned long words = 0;
	for (UInt m = 0; m < n_models; m++)
		words += et_core_words(models[m]);
	t->mem = VG_(calloc)("itlb.tlb", words, sizeof(et_u64));
	et_u64 *p = t->mem;
	for (UInt m = 0; m < n_models; m++) {
		et_core_init(&t->core[m], models[m], p);
		p += et_core_words(models[m]);
	}
	t->last_page = 1;
	t->last_huge = 1;
	t->last_dpage = 1;
	t->last_dhuge = 1;
	threads[tid] = t;
	threads_seen++;
	return t;
}

/* A new thread starts on its own core: an empty TLB. */
static void et_thread_create(ThreadId parent, ThreadId child)
{
	(void)parent;
	if (threads[child]) {
		et_thread_reset(threads[child]);   /* a thread id used again */
		threads_seen++;
	} else {
		et_thread_get(child);
	}
}

/* Every thread's TLBs lose the translations of [lo, hi) (the kernel's
 * shootdown after munmap, mprotect, mremap, a collapse). */
static void et_invalidate(Addr lo, Addr hi)
{
	for (UInt tid = 0; tid < VG_N_THREADS; tid++) {
		struct et_thread *t = threads[tid];
		if (!t)
			continue;
		for (UInt m = 0; m < n_models; m++)
			et_core_invalidate(&t->core[m], lo, hi);
		t->last_page = 1;
		t->last_huge = 1;
		t->last_dpage = 1;
		t->last_dhuge = 1;
	}
}

/* ------------------------------------------------------------ the helper */

static VG_REGPARM(2) void et_fetch(Addr page, UWord obj)
{
	struct et_thread *t = cur;
	if (page == t->last_page)
		return;
	t->last_page = page;
	UInt ps = et_is_huge(page) ? ET_PS_2M : ET_PS_4K;
	struct et_obj *o = &objs[obj];
	o->fetch[ps]++;
	if (ps == ET_PS_2M) {
		Addr h = page >> 21;
		if (h == t->last_huge)
			return;
		t->last_huge = h;
	} else {
		t->last_huge = 1;
	}
	for (UInt m = 0; m < n_models; m++) {
		int r = et_core_fetch(&t->core[m], page, ps);
		if (r == ET_FETCH_L1_HIT)
			continue;
		o->c[m].l1_miss[ps]++;
		if (r == ET_FETCH_WALK)
			o->c[m].walks[ps]++;
		else
			o->c[m].l2_hit[ps]++;
	}
}

/* The data side: one count per model for the whole process (data misses
 * are not split by object). */
static struct et_counts dcnt[ET_N_CORE_MODELS];
static ULong dfetch[2];                  /* data page-change lookups, by size */

/* A load or store to a 4 KiB page other than the thread's last data page
 * (the instrumented code compares before calling).  The same shortcut as
 * for fetches: the page just used is the most recently used entry of its
 * L1 dTLB set, and instruction fetches never touch the L1 dTLB, so using
 * it again is a hit that changes nothing. */
static VG_REGPARM(1) void et_data(Addr page)
{
	struct et_thread *t = cur;
	t->last_dpage = page;
	UInt ps = et_is_huge(page) ? ET_PS_2M : ET_PS_4K;
	dfetch[ps]++;
	if (ps == ET_PS_2M) {
		Addr h = page >> 21;
		if (h == t->last_dhuge)
			return;
		t->last_dhuge = h;
	} else {
		t->last_dhuge = 1;
	}
	for (UInt m = 0; m < n_models; m++) {
		int r = et_core_data(&t->core[m], page, ps);
		if (r == ET_FETCH_L1_HIT)
			continue;
		dcnt[m].l1_miss[ps]++;
		if (r == ET_FETCH_WALK)
			dcnt[m].walks[ps]++;
		else
			dcnt[m].l2_hit[ps]++;
	}
}

/* ------------------------------------------------------------ page sizes */

enum { ET_SRC_PAGEMAP_SCAN, ET_SRC_SMAPS, ET_SRC_NONE };
static Int huge_source;
static ULong rescans, rescans_full;
static ULong undetermined_windows;

/* PAGEMAP_SCAN (Linux 6.7, fs/proc/task_mmu.c): the kernel's own list of
 * the PMD-mapped (huge) ranges.  Layouts from include/uapi/linux/fs.h. */
struct et_page_region {
	ULong start, end, categories;
};
struct et_pm_scan_arg {
	ULong size, flags, start, end, walk_end, vec, vec_len, max_pages;
	ULong category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define ET_PAGEMAP_SCAN 0xC0606610ul      /* _IOWR('f', 16, struct pm_scan_arg) */
#define ET_PAGE_IS_HUGE (1ull << 6)

static Int et_open_ro(const HChar *path)
{
	SysRes r = VG_(open)(path, VKI_O_RDONLY, 0);
	return sr_isError(r) ? -1 : (Int)sr_Res(r);
}

static Int et_scan_pagemap(Int fd, Addr lo, Addr hi)
{
	struct et_page_region vec[64];
	Addr at = lo;
	while (at < hi) {
		struct et_pm_scan_arg arg;
		VG_(memset)(&arg, 0, sizeof arg);
		arg.size = sizeof arg;
		arg.start = at;
		arg.end = hi;
		arg.vec = (ULong)(Addr)vec;
		arg.vec_len = 64;
		arg.category_mask = ET_PAGE_IS_HUGE;
		arg.return_mask = ET_PAGE_IS_HUGE;
		SysRes r = VG_(do_syscall)(__NR_ioctl, fd, ET_PAGEMAP_SCAN, (Addr)&arg, 0, 0, 0, 0, 0);
		if (sr_isError(r))
			return -(Int)sr_Err(r);
		ULong n = sr_Res(r);
		for (ULong i = 0; i < n; i++) {
			Addr s = VG_ROUNDUP(vec[i].start, ET_HUGE);
			for (; s + ET_HUGE <= vec[i].end; s += ET_HUGE)
				et_set_huge(s, True);
		}
		if (arg.walk_end <= at || arg.walk_end >= hi)
			break;
		at = arg.walk_end;
	}
	return 0;
}

/* The smaps route, for kernels without PAGEMAP_SCAN.  A VMA whose huge
 * kB cover all its whole windows has them all huge, one with none has
 * none; in between, each window is checked in pagemap + kpageflags (root
 * only: PFNs are hidden otherwise): 512 present, contiguous PFNs from a
 * 512-aligned THP head.  A THP mapped by PTEs passes that test too, which
 * is why PAGEMAP_SCAN is preferred.  Windows neither route can decide count
 * as 4 KiB and are reported (undetermined_windows). */
static Bool et_window_thp(Int pm, Int kpf, Addr w)
{
	static ULong ent[512];
	if (pm < 0 || kpf < 0)
		return False;
	SysRes r = VG_(pread)(pm, ent, sizeof ent, (OffT)((w >> 12) * 8));
	if (sr_isError(r) || sr_Res(r) != sizeof ent)
		return False;
	ULong pfn0 = ent[0] & ((1ull << 55) - 1);
	if (!(ent[0] >> 63) || pfn0 == 0 || (pfn0 & 511))
		return False;
	for (UInt i = 1; i < 512; i++)
		if (!(ent[i] >> 63) || (ent[i] & ((1ull << 55) - 1)) != pfn0 + i)
			return False;
	ULong flags = 0;
	r = VG_(pread)(kpf, &flags, sizeof flags, (OffT)(pfn0 * 8));
	if (sr_isError(r) || sr_Res(r) != sizeof flags)
		return False;
	return ((flags >> 22) & 1) && ((flags >> 15) & 1);   /* KPF_THP, KPF_COMPOUND_HEAD */
}

static Bool et_isxdigit(HChar c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* "start-end perms ...": hex digits, '-', hex digits, ' '.  Field lines
 * ("AnonHugePages:   0 kB") never match. */
static Bool et_vma_header(HChar *line, HChar **dash)
{
	HChar *p = line;
	while (et_isxdigit(*p))
		p++;
	if (p == line || *p != '-')
		return False;
	*dash = p++;
	HChar *q = p;
	while (et_isxdigit(*p))
		p++;
	return p > q && *p == ' ';
}

static HChar *smaps_buf;
static SizeT smaps_cap;

static ULong et_kb_field(const HChar *line, const HChar *name)
{
	SizeT n = VG_(strlen)(name);
	if (VG_(strncmp)(line, name, n) != 0)
		return ~0ull;
	const HChar *p = line + n;
	while (*p == ' ')
		p++;
	return (ULong)VG_(strtoull10)(p, NULL);
}

static void et_smaps_vma(Addr vs, Addr ve, Bool x, ULong kps, ULong huge_kb, Addr lo, Addr hi,
                         Int *pm, Int *kpf)
{
	if (!(x || clo_data) || ve <= lo || vs >= hi)
		return;
	Addr a = VG_ROUNDUP(vs > lo ? vs : lo, ET_HUGE);
	Addr e = VG_ROUNDDN(ve < hi ? ve : hi, ET_HUGE);
	ULong whole = 0;
	for (Addr w = VG_ROUNDUP(vs, ET_HUGE); w + ET_HUGE <= ve; w += ET_HUGE)
		whole++;
	if (a >= e)
		return;
	if (kps >= 2048 || (whole && huge_kb >= whole * 2048)) {
		for (Addr w = a; w < e; w += ET_HUGE)
			et_set_huge(w, True);
		return;
	}
	if (huge_kb == 0)
		return;
	if (*pm == -2) {
		*pm = et_open_ro("/proc/self/pagemap");
		*kpf = et_open_ro("/proc/kpageflags");
	}
	for (Addr w = a; w < e; w += ET_HUGE) {
		if (et_window_thp(*pm, *kpf, w))
			et_set_huge(w, True);
		else if (*kpf < 0)
			undetermined_windows++;
	}
}

static void et_scan_smaps(Addr lo, Addr hi)
{
	Int fd = et_open_ro("/proc/self/smaps");
	if (fd < 0)
		return;
	SizeT len = 0;
	for (;;) {
		if (smaps_cap - len < 65536) {
			smaps_cap = smaps_cap ? 2 * smaps_cap : 1 << 20;
			smaps_buf = VG_(realloc)("itlb.smaps", smaps_buf, smaps_cap);
		}
		Int n = VG_(read)(fd, smaps_buf + len, (Int)(smaps_cap - len - 1));
		if (n <= 0)
			break;
		len += (SizeT)n;
	}
	VG_(close)(fd);
	smaps_buf[len] = 0;

	Int pm = -2, kpf = -2;
	Bool have = False, x = False;
	Addr vs = 0, ve = 0;
	ULong kps = 4, huge_kb = 0;
	HChar *line = smaps_buf;
	while (*line) {
		HChar *nl = line;
		while (*nl && *nl != '\n')
			nl++;
		HChar save = *nl;
		*nl = 0;
		/* A VMA header starts with a hex digit; field lines with a name. */
		HChar *dash = NULL;
		if (et_vma_header(line, &dash)) {
			if (have)
				et_smaps_vma(vs, ve, x, kps, huge_kb, lo, hi, &pm, &kpf);
			HChar *sp = VG_(strchr)(dash, ' ');
			vs = (Addr)VG_(strtoull16)(line, NULL);
			ve = (Addr)VG_(strtoull16)(dash + 1, NULL);
			x = sp && sp[1] && sp[2] && sp[3] == 'x';
			kps = 4;
			huge_kb = 0;
			have = True;
		} else if (have) {
			ULong v;
			if ((v = et_kb_field(line, "KernelPageSize:")) != ~0ull)
				kps = v;
			else if ((v = et_kb_field(line, "AnonHugePages:")) != ~0ull)
				huge_kb += v;
			else if ((v = et_kb_field(line, "FilePmdMapped:")) != ~0ull)
				huge_kb += v;
			else if ((v = et_kb_field(line, "ShmemPmdMapped:")) != ~0ull)
				huge_kb += v;
		}
		*nl = save;
		line = *nl ? nl + 1 : nl;
	}
	if (have)
		et_smaps_vma(vs, ve, x, kps, huge_kb, lo, hi, &pm, &kpf);
	if (pm >= 0)
		VG_(close)(pm);
	if (kpf >= 0)
		VG_(close)(kpf);
}

/* The client's segments (file, anonymous, shared memory), ascending. */
static Addr *segstarts;
static Int segstarts_cap;

static Int et_client_segments(void)
{
	if (segstarts_cap == 0) {
		segstarts_cap = 1024;
		segstarts = VG_(malloc)("itlb.segs", (SizeT)segstarts_cap * sizeof(Addr));
	}
	for (;;) {
		Int n = VG_(am_get_segment_starts)(SkAnonC | SkFileC | SkShmC, segstarts, segstarts_cap);
		if (n >= 0)
			return n;
		segstarts_cap = -n + 64;
		segstarts = VG_(realloc)("itlb.segs", segstarts, (SizeT)segstarts_cap * sizeof(Addr));
	}
}

/* Re-read which 2 MiB windows of [lo, hi) are huge.  Windows that changed
 * size lose their translations (the kernel flushes them when it maps or
 * splits a PMD). */
static void et_rescan(Addr lo, Addr hi)
{
	if (huge_source == ET_SRC_NONE)
		return;
	lo = VG_ROUNDDN(lo, ET_HUGE);
	hi = VG_ROUNDUP(hi, ET_HUGE);
	if (hi <= lo)
		return;
	rescans++;

	/* Remember the old bits, clear them. */
	SizeT nwin = (hi - lo) / ET_HUGE;
	Bool small = nwin <= 4096;
	static UChar old_small[4096];
	UChar *old = small ? old_small : VG_(malloc)("itlb.old", nwin);
	for (SizeT i = 0; i < nwin; i++) {
		Addr w = lo + i * ET_HUGE;
		old[i] = et_is_huge(w);
		if (old[i])
			et_set_huge(w, False);
	}

	if (huge_source == ET_SRC_PAGEMAP_SCAN) {
		Int fd = -1;
		Int n = et_client_segments();
		for (Int i = 0; i < n; i++) {
			NSegment const *seg = VG_(am_find_nsegment)(segstarts[i]);
			if (!seg || !(seg->hasX || clo_data) || seg->end + 1 <= lo || seg->start >= hi)
				continue;
			Addr s = seg->start > lo ? seg->start : lo;
			Addr e = seg->end + 1 < hi ? seg->end + 1 : hi;
			if (fd < 0)
				fd = et_open_ro("/proc/self/pagemap");
			Int err = fd < 0 ? -VKI_ENOENT : et_scan_pagemap(fd, s, e);
			if (err) {
				/* No PAGEMAP_SCAN here (a kernel before 6.7): smaps from
				 * now on, said once. */
				VG_(umsg)("itlbgrind: PAGEMAP_SCAN unavailable (errno %d): page sizes from smaps\n",
				          -err);
				huge_source = ET_SRC_SMAPS;
				break;
			}
		}
		if (fd >= 0)
			VG_(close)(fd);
	}
	if (huge_source == ET_SRC_SMAPS)
		et_scan_smaps(lo, hi);

	for (SizeT i = 0; i < nwin; i++) {
		Addr w = lo + i * ET_HUGE;
		Bool now = et_is_huge(w);
		if (now != (Bool)old[i]) {
			if (clo_debug)
				VG_(umsg)("itlbgrind: window %#lx now %s\n", w, now ? "2M" : "4K");
			et_invalidate(w, w + ET_HUGE);
		}
	}
	if (!small)
		VG_(free)(old);
}


/* Every executable window again (khugepaged may collapse text at any time,
 * with nothing the tool would see). */
static void et_rescan_all(void)
{
	if (huge_source == ET_SRC_NONE)
		return;
	rescans_full++;
	/* Windows marked huge outside any executable client segment. */
	for (UWord top = 0; top < (1u << ET_TOP_BITS); top++) {
		ULong *leaf = huge_top[top];
		if (!leaf)
			continue;
		for (UWord w = 0; w < 512; w++) {
			if (!((leaf[w >> 6] >> (w & 63)) & 1))
				continue;
			Addr a = (top << 30) | (w << 21);
			NSegment const *seg = VG_(am_find_nsegment)(a);
			if (!seg || !(seg->hasX || clo_data) || seg->start > a || seg->end < a + ET_HUGE - 1) {
				et_set_huge(a, False);
				et_invalidate(a, a + ET_HUGE);
			}
		}
	}
	Int n = et_client_segments();
	Addr *starts = VG_(malloc)("itlb.starts", (SizeT)(n ? n : 1) * sizeof(Addr));
	for (Int i = 0; i < n; i++)
		starts[i] = segstarts[i];
	for (Int i = 0; i < n; i++) {
		NSegment const *seg = VG_(am_find_nsegment)(starts[i]);
		if (seg && (seg->hasX || clo_data))
			et_rescan(seg->start, seg->end + 1);
	}
	VG_(free)(starts);
}

/* ------------------------------------------------------------ instrumentation */

/* objs[obj].instrs += n, inline (no call). */
static void et_add_count(IRSB *sb, UInt obj, UInt n)
{
	if (n == 0)
		return;
	IRTemp t1 = newIRTemp(sb->tyenv, Ity_I64);
	IRTemp t2 = newIRTemp(sb->tyenv, Ity_I64);
	addStmtToIRSB(sb, IRStmt_WrTmp(t1, IRExpr_Load(Iend_LE, Ity_I64,
	                                               mkIRExpr_HWord((HWord)&objs[obj].instrs))));
	addStmtToIRSB(sb, IRStmt_WrTmp(t2, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(t1),
	                                                IRExpr_Const(IRConst_U64(n)))));
	addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&objs[obj].instrs),
	                               IRExpr_RdTmp(t2)));
}

static void et_add_fetch(IRSB *sb, Addr page, UInt obj)
{
	IRExpr **args = mkIRExprVec_2(mkIRExpr_HWord(page), mkIRExpr_HWord(obj));
	IRDirty *di = unsafeIRDirty_0_N(2, "et_fetch", VG_(fnptr_to_fnentry)(&et_fetch), args);
	addStmtToIRSB(sb, IRStmt_Dirty(di));
}

/* A load or store at addr (an atom), done when guard (an Ity_I1 atom, or
 * NULL for always) holds: inline, the 4 KiB page is compared with the
 * thread's last data page (cur->last_dpage); only a different page calls
 * et_data. */
static void et_add_data(IRSB *sb, IRExpr *addr, IRExpr *guard)
{
	IRTemp tcur = newIRTemp(sb->tyenv, Ity_I64);
	IRTemp tfield = newIRTemp(sb->tyenv, Ity_I64);
	IRTemp tlast = newIRTemp(sb->tyenv, Ity_I64);
	IRTemp tpage = newIRTemp(sb->tyenv, Ity_I64);
	IRTemp tne = newIRTemp(sb->tyenv, Ity_I1);
	addStmtToIRSB(sb, IRStmt_WrTmp(tcur, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&cur))));
	addStmtToIRSB(sb, IRStmt_WrTmp(tfield, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(tcur),
	                                                    IRExpr_Const(IRConst_U64(offsetof(struct et_thread, last_dpage))))));
	addStmtToIRSB(sb, IRStmt_WrTmp(tlast, IRExpr_Load(Iend_LE, Ity_I64, IRExpr_RdTmp(tfield))));
	addStmtToIRSB(sb, IRStmt_WrTmp(tpage, IRExpr_Binop(Iop_And64, addr,
	                                                   IRExpr_Const(IRConst_U64(~(ULong)(ET_PAGE - 1))))));
	addStmtToIRSB(sb, IRStmt_WrTmp(tne, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(tpage), IRExpr_RdTmp(tlast))));
	IRExpr *g = IRExpr_RdTmp(tne);
	if (guard) {
		IRTemp tg = newIRTemp(sb->tyenv, Ity_I1);
		addStmtToIRSB(sb, IRStmt_WrTmp(tg, IRExpr_Binop(Iop_And1, g, guard)));
		g = IRExpr_RdTmp(tg);
	}
	IRExpr **args = mkIRExprVec_1(IRExpr_RdTmp(tpage));
	IRDirty *di = unsafeIRDirty_0_N(1, "et_data", VG_(fnptr_to_fnentry)(&et_data), args);
	di->guard = g;
	addStmtToIRSB(sb, IRStmt_Dirty(di));
}

/* The data access a statement makes, if any (flat IR: addresses and
 * guards are atoms). */
static void et_instrument_data(IRSB *sb, IRStmt *st)
{
	switch (st->tag) {
	case Ist_WrTmp:
		if (st->Ist.WrTmp.data->tag == Iex_Load)
			et_add_data(sb, st->Ist.WrTmp.data->Iex.Load.addr, NULL);
		break;
	case Ist_Store:
		et_add_data(sb, st->Ist.Store.addr, NULL);
		break;
	case Ist_LoadG:
		et_add_data(sb, st->Ist.LoadG.details->addr, st->Ist.LoadG.details->guard);
		break;
	case Ist_StoreG:
		et_add_data(sb, st->Ist.StoreG.details->addr, st->Ist.StoreG.details->guard);
		break;
	case Ist_CAS:
		et_add_data(sb, st->Ist.CAS.details->addr, NULL);
		break;
	case Ist_LLSC:
		et_add_data(sb, st->Ist.LLSC.addr, NULL);
		break;
	case Ist_Dirty: {
		IRDirty *d = st->Ist.Dirty.details;
		if (d->mFx != Ifx_None && d->mAddr)
			et_add_data(sb, d->mAddr, isIRAtom(d->guard) && !(d->guard->tag == Iex_Const) ? d->guard : NULL);
		break;
	}
	default:
		break;
	}
}

/*
 * A run is a sequence of guest instructions of one superblock on one 4 KiB
 * page with no side exit between them.  Its first instruction gets a fetch
 * call (only when the page differs from the previous run's: a run that
 * follows a side exit not taken is on a page just looked up), and its
 * length is added to its object's count where it ends (before the side
 * exit, or at the end of the superblock), so instructions after a taken
 * exit are never counted.  An instruction whose bytes cross into the next
 * page fetches that page too.  Superblocks that chase jumps across pages
 * simply hold several runs.
 */
static IRSB *et_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
                           const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
	(void)closure;
	(void)layout;
	(void)vge;
	(void)archinfo_host;
	if (gWordTy != hWordTy)
		VG_(tool_panic)("host/guest word size mismatch");

	IRSB *out = deepCopyIRSBExceptStmts(in);
	Int i = 0;
	while (i < in->stmts_used && in->stmts[i]->tag != Ist_IMark) {
		addStmtToIRSB(out, in->stmts[i]);
		i++;
	}
	Bool in_run = False;
	Addr run_page = 0;
	UInt run_obj = 0, run_n = 0;
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];
		if (!st || st->tag == Ist_NoOp)
			continue;
		if (st->tag == Ist_IMark) {
			Addr a = (Addr)st->Ist.IMark.addr;
			UInt len = st->Ist.IMark.len ? st->Ist.IMark.len : 1;
			Addr p0 = a & ~(ET_PAGE - 1);
			Addr p1 = (a + len - 1) & ~(ET_PAGE - 1);
			if (!in_run || p0 != run_page) {
				et_add_count(out, run_obj, run_n);
				run_page = p0;
				run_obj = et_obj_of(p0);
				run_n = 0;
				in_run = True;
				et_add_fetch(out, p0, run_obj);
			}
			run_n++;
			if (p1 != p0) {
				et_add_count(out, run_obj, run_n);
				run_page = p1;
				run_obj = et_obj_of(p1);
				run_n = 0;
				et_add_fetch(out, p1, run_obj);
			}
		} else if (st->tag == Ist_Exit) {
			et_add_count(out, run_obj, run_n);
			run_n = 0;
		} else if (clo_data) {
			et_instrument_data(out, st);
		}
		addStmtToIRSB(out, st);
	}
	et_add_count(out, run_obj, run_n);
	return out;
}

/* ------------------------------------------------------------ counters */

static Bool forked;
static Int records_written;
static const HChar *record_label;   /* a snapshot's label, or NULL */

static void et_reset_counts(void)
{
	for (UInt i = 0; i < n_objs; i++) {
		objs[i].instrs = 0;
		objs[i].fetch[0] = objs[i].fetch[1] = 0;
		VG_(memset)(objs[i].c, 0, sizeof objs[i].c);
	}
	VG_(memset)(dcnt, 0, sizeof dcnt);
	dfetch[0] = dfetch[1] = 0;
}

static void et_flush_all_threads(void)
{
	for (UInt tid = 0; tid < VG_N_THREADS; tid++)
		if (threads[tid])
			et_thread_reset(threads[tid]);
}

static ULong et_total_instrs(void)
{
	ULong n = 0;
	for (UInt i = 0; i < n_objs; i++)
		n += objs[i].instrs;
	return n;
}

/* ------------------------------------------------------------ the snapshot file */

/* --snapshot-file: a harness asks for a snapshot of a process it cannot
 * change by writing a label to a file.  The file's state (inode, size,
 * mtime, ctime) is compared with the last one seen; a new state is a
 * snapshot labelled with the file's first line.  The state when the tool
 * starts is the baseline (a file left from before, or one an exec'd
 * image's parent has already reported, is no snapshot); a forked child
 * inherits its parent's.  An empty file is not taken as seen: `echo L >
 * FILE` truncates before it writes, and the label comes with the write.
 * The file is opened, read and closed within one check: no descriptor
 * outlives it. */
#define ET_SNAP_EVERY_BLOCKS 20000
#define ET_SNAP_LABEL_MAX 64

struct et_file_state {
	Bool exists;
	ULong dev, ino, mtime, mtime_nsec, ctime, ctime_nsec;
	Long size;
};

static HChar *snap_path;                 /* clo_snapshot_file expanded, or NULL */
static struct et_file_state snap_seen;
static ULong next_snap_blocks;

static void et_write_record(const HChar *ended, Int status);

static void et_snap_stat(struct et_file_state *st)
{
	struct vg_stat sb;
	VG_(memset)(st, 0, sizeof *st);
	SysRes r = VG_(stat)(snap_path, &sb);
	if (sr_isError(r))
		return;
	st->exists = True;
	st->dev = sb.dev;
	st->ino = sb.ino;
	st->size = sb.size;
	st->mtime = sb.mtime;
	st->mtime_nsec = sb.mtime_nsec;
	st->ctime = sb.ctime;
	st->ctime_nsec = sb.ctime_nsec;
}

static Bool et_snap_same(const struct et_file_state *a, const struct et_file_state *b)
{
	if (a->exists != b->exists)
		return False;
	if (!a->exists)
		return True;
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime == b->mtime &&
	       a->mtime_nsec == b->mtime_nsec && a->ctime == b->ctime && a->ctime_nsec == b->ctime_nsec;
}

/* The path for this process: %p and %q{VAR} expanded, made absolute
 * against the start-up directory (as --out is). */
static void et_snap_path(void)
{
	if (!clo_snapshot_file)
		return;
	if (snap_path)
		VG_(free)(snap_path);
	snap_path = VG_(expand_file_name)("--snapshot-file", clo_snapshot_file);
}

/* The file's first line as a label: at most ET_SNAP_LABEL_MAX bytes, a
 * byte outside printable ASCII written as '?'. */
static void et_snap_label(HChar *label)
{
	label[0] = 0;
	Int fd = et_open_ro(snap_path);
	if (fd < 0)
		return;
	HChar buf[ET_SNAP_LABEL_MAX];
	Int n = VG_(read)(fd, buf, (Int)sizeof buf);
	VG_(close)(fd);
	Int k = 0;
	for (Int i = 0; i < n; i++) {
		UChar c = (UChar)buf[i];
		if (c == '\n')
			break;
		label[k++] = c >= 0x20 && c < 0x7f ? (HChar)c : '?';
	}
	if (k < n && k > 0 && buf[k - 1] == '\r')
		k--;   /* the line ended (buf[k] is '\n') in CRLF */
	label[k] = 0;
}

/* One check: a snapshot if the file is in a state not seen before. */
static void et_snap_check(void)
{
	if (!snap_path)
		return;
	struct et_file_state st;
	et_snap_stat(&st);
	if (et_snap_same(&st, &snap_seen))
		return;
	if (st.exists && st.size == 0)
		return;   /* being written: wait for its label */
	snap_seen = st;
	if (!st.exists)
		return;
	static HChar label[ET_SNAP_LABEL_MAX + 1];
	et_snap_label(label);
	if (clo_debug)
		VG_(umsg)("itlbgrind: %s changed: snapshot '%s'\n", snap_path, label);
	record_label = label;
	et_write_record("snapshot", 0);
	record_label = NULL;
}

static void et_snap_init(void)
{
	et_snap_path();
	if (snap_path)
		et_snap_stat(&snap_seen);
}

/* fork: the child keeps its parent's last-seen state, so a change the
 * parent has reported is not reported again; a path with %p names
 * another file in the child, whose state now is its baseline. */
static void et_snap_atfork_child(void)
{
	if (!clo_snapshot_file)
		return;
	HChar *old = VG_(strdup)("itlb.snap", snap_path);
	et_snap_path();
	if (VG_(strcmp)(old, snap_path) != 0)
		et_snap_stat(&snap_seen);
	VG_(free)(old);
	next_snap_blocks = 0;
}

/* System calls that wait for something (an idle server's): the first
 * check after one returns comes at once, not after 20000 more blocks. */
static Bool et_sys_waits(UInt sysno)
{
	switch (sysno) {
	case __NR_poll:
	case __NR_ppoll:
	case __NR_select:
	case __NR_pselect6:
	case __NR_epoll_wait:
	case __NR_epoll_pwait:
#if defined(__NR_epoll_pwait2)
	case __NR_epoll_pwait2:
#endif
	case __NR_nanosleep:
	case __NR_clock_nanosleep:
	case __NR_pause:
	case __NR_rt_sigsuspend:
	case __NR_rt_sigtimedwait:
	case __NR_accept:
	case __NR_accept4:
	case __NR_wait4:
	case __NR_waitid:
		return True;
	default:
		return False;
	}
}

/* ------------------------------------------------------------ scheduling */

static Bool scanned_once;
static ULong next_check_blocks, next_rescan_instrs;

static void et_start_client_code(ThreadId tid, ULong blocks)
{
	cur = et_thread_get(tid);
	if (!scanned_once) {
		scanned_once = True;
		et_rescan_all();
		next_rescan_instrs = (ULong)clo_rescan_mi * 1000000ull;
	}
	if (snap_path && blocks >= next_snap_blocks) {
		next_snap_blocks = blocks + ET_SNAP_EVERY_BLOCKS;
		et_snap_check();
	}
	if (clo_rescan_mi && blocks >= next_check_blocks) {
		next_check_blocks = blocks + 100000;
		ULong n = et_total_instrs();
		if (n >= next_rescan_instrs) {
			et_rescan_all();
			next_rescan_instrs = n + (ULong)clo_rescan_mi * 1000000ull;
		}
	}
}

/* ------------------------------------------------------------ mappings */

static void et_debug_event(const HChar *what, Addr a, SizeT len)
{
	if (clo_debug)
		VG_(umsg)("itlbgrind: %s %#lx-%#lx\n", what, a, a + len);
}

static void et_track_new(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di)
{
	(void)rr;
	(void)ww;
	(void)di;
	et_debug_event(xx ? "map x" : "map", a, len);
	et_range_set(a, a + len, et_obj_for_segment(VG_(am_find_nsegment)(a)));
}

static void et_track_munmap(Addr a, SizeT len)
{
	et_debug_event("unmap", a, len);
	et_range_remove(a, a + len);
}

/* mremap: a named mapping keeps its name where it lands; an anonymous one
 * moved over named text (what libenormoustext's swap does) leaves the text
 * its name, so a moved window is still counted under its file. */
static void et_track_remap(Addr from, Addr to, SizeT len)
{
	et_debug_event("remap from", from, len);
	et_debug_event("remap to", to, len);
	Int fi = et_range_find(from);
	Int ti = et_range_find(to);
	Bool from_anon = fi < 0 || VG_(strcmp)(objs[ranges[fi].obj].name, "[anon]") == 0;
	if (from_anon && ti >= 0 && VG_(strcmp)(objs[ranges[ti].obj].name, "[anon]") != 0)
		return;
	UInt obj = fi >= 0 ? ranges[fi].obj : et_obj_named("[anon]");
	et_range_set(to, to + len, obj);
}

/* System calls that change mappings: which ranges they touch.  Returns the
 * number of ranges (0-2), or -1 for "anywhere". */
static Int et_sys_ranges(UInt sysno, UWord *args, Bool post, UWord res, Addr r[2][2])
{
	switch (sysno) {
	case __NR_mmap:
		if (post) {
			r[0][0] = res;
			r[0][1] = res + args[1];
			return 1;
		}
		if (args[3] & VKI_MAP_FIXED) {
			r[0][0] = args[0];
			r[0][1] = args[0] + args[1];
			return 1;
		}
		return 0;
	case __NR_munmap:
	case __NR_mprotect:
	case __NR_madvise:
	case __NR_remap_file_pages:
		r[0][0] = args[0];
		r[0][1] = args[0] + args[1];
		return 1;
	case __NR_mremap:
		r[0][0] = args[0];
		r[0][1] = args[0] + args[1];
		if (post) {
			r[1][0] = res;
			r[1][1] = res + args[2];
			return 2;
		}
		if (args[3] & VKI_MREMAP_FIXED) {
			r[1][0] = args[4];
			r[1][1] = args[4] + args[2];
			return 2;
		}
		return 1;
	case __NR_shmat:
	case __NR_shmdt:
#if defined(__NR_process_madvise)
	case __NR_process_madvise:
#endif
		return -1;
	default:
		return 0;
	}
}

/* madvise advice that changes or drops page-table entries (and so flushes
 * their translations): DONTNEED 4, FREE 8, REMOVE 9, PAGEOUT 21,
 * DONTNEED_LOCKED 24, COLLAPSE 25.  MADV_HUGEPAGE changes nothing by itself. */
static Bool et_sys_flushes(UInt sysno, UWord *args)
{
	if (sysno != __NR_madvise)
		return True;
	switch (args[2]) {
	case 4: case 8: case 9: case 21: case 24: case 25:
		return True;
	default:
		return False;
	}
}

static Bool et_range_has_code(Addr lo, Addr hi)
{
	Int n = et_client_segments();
	for (Int i = 0; i < n; i++) {
		NSegment const *seg = VG_(am_find_nsegment)(segstarts[i]);
		if (seg && (seg->hasX || seg->hasT || clo_data) && seg->start < hi && seg->end + 1 > lo)
			return True;
	}
	return False;
}

static Bool *pending_code;   /* per thread: the call's ranges held code before it */

static void et_pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nArgs)
{
	(void)nArgs;
	if (sysno == __NR_execve
#if defined(__NR_execveat)
	    || sysno == __NR_execveat
#endif
	) {
		/* The image ends here if the exec works: its record now, and the
		 * counters start again (a failed exec goes on counting into a
		 * second record; records of one process add up).  A change of
		 * the snapshot file not yet seen is this image's, before. */
		et_snap_check();
		et_write_record("exec", 0);
		et_reset_counts();
		return;
	}
	Addr r[2][2];
	Int n = et_sys_ranges(sysno, args, False, 0, r);
	Bool code = n < 0;
	for (Int i = 0; i < n && !code; i++)
		code = et_range_has_code(VG_PGROUNDDN(r[i][0]), VG_PGROUNDUP(r[i][1]));
	pending_code[tid] = code;
}

static void et_post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nArgs, SysRes res)
{
	(void)nArgs;
	Bool was_code = pending_code[tid];
	pending_code[tid] = False;
	if (snap_path && et_sys_waits(sysno))
		next_snap_blocks = 0;
	if (sr_isError(res))
		return;
	Addr r[2][2];
	Int n = et_sys_ranges(sysno, args, True, sr_Res(res), r);
	if (n == 0)
		return;
	if (n < 0) {
		et_flush_all_threads();
		et_rescan_all();
		return;
	}
	Bool code = was_code;
	for (Int i = 0; i < n && !code; i++)
		code = et_range_has_code(VG_PGROUNDDN(r[i][0]), VG_PGROUNDUP(r[i][1]));
	if (!code)
		return;
	if (clo_debug)
		VG_(umsg)("itlbgrind: syscall %u touches code: %#lx-%#lx%s\n", sysno, r[0][0], r[0][1],
		          n > 1 ? " (and a second range)" : "");
	Bool flush = et_sys_flushes(sysno, args);
	for (Int i = 0; i < n; i++) {
		Addr lo = VG_PGROUNDDN(r[i][0]), hi = VG_PGROUNDUP(r[i][1]);
		if (flush)
			et_invalidate(lo, hi);
		et_rescan(lo, hi);
	}
}

/* fork: the child is a new address space with an empty TLB and its own
 * counters; the parent's TLB is flushed (Linux write-protects the parent's
 * private pages and flushes its TLB in dup_mmap). */
static void et_atfork_parent(ThreadId tid)
{
	(void)tid;
	et_flush_all_threads();
}

static void et_atfork_child(ThreadId tid)
{
	(void)tid;
	forked = True;
	records_written = 0;
	et_reset_counts();
	et_flush_all_threads();
	et_snap_atfork_child();
}

/* ------------------------------------------------------------ the record */

static HChar *obuf;
static SizeT olen, ocap;

static void et_p(const HChar *fmt, ...) PRINTF_CHECK(1, 2);
static void et_p(const HChar *fmt, ...)
{
	HChar tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	UInt n = VG_(vsnprintf)(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n >= sizeof tmp)
		n = sizeof tmp - 1;
	if (olen + n + 1 > ocap) {
		ocap = (olen + n + 1) * 2;
		obuf = VG_(realloc)("itlb.out", obuf, ocap);
	}
	VG_(memcpy)(obuf + olen, tmp, n);
	olen += n;
	obuf[olen] = 0;
}

/* A string as JSON. */
static void et_pj(const HChar *s)
{
	et_p("\"");
	for (; *s; s++) {
		UChar c = (UChar)*s;
		if (c == '"' || c == '\\')
			et_p("\\%c", c);
		else if (c < 0x20)
			et_p("\\u%04x", c);
		else
			et_p("%c", c);
	}
	et_p("\"");
}

/* misses per thousand instructions, as "I.FFF" (no floating point needed). */
static const HChar *et_mpki(ULong misses, ULong instrs, HChar *buf)
{
	ULong x = instrs ? misses * 1000000ull / instrs : 0;
	if (instrs && misses > ~0ull / 1000000ull)
		x = misses / (instrs / 1000000ull + 1);
	VG_(sprintf)(buf, "%llu.%03llu", x / 1000, x % 1000);
	return buf;
}

struct et_sum {
	ULong l1[2], l2hit[2], walks[2];
};

static void et_sum_model(UInt m, struct et_sum *s)
{
	VG_(memset)(s, 0, sizeof *s);
	for (UInt i = 0; i < n_objs; i++)
		for (UInt ps = 0; ps < 2; ps++) {
			s->l1[ps] += objs[i].c[m].l1_miss[ps];
			s->l2hit[ps] += objs[i].c[m].l2_hit[ps];
			s->walks[ps] += objs[i].c[m].walks[ps];
		}
}

/* Executable bytes per object, and how many of them sit on huge pages. */
static void et_text_bytes(void)
{
	for (UInt i = 0; i < n_objs; i++)
		objs[i].text_bytes = objs[i].huge_bytes = 0;
	Int n = et_client_segments();
	for (Int s = 0; s < n; s++) {
		NSegment const *seg = VG_(am_find_nsegment)(segstarts[s]);
		if (!seg || !seg->hasX)
			continue;
		Addr lo = seg->start, hi = seg->end + 1;
		for (UInt r = 0; r < n_ranges; r++) {
			Addr a = ranges[r].lo > lo ? ranges[r].lo : lo;
			Addr e = ranges[r].hi < hi ? ranges[r].hi : hi;
			if (a >= e)
				continue;
			struct et_obj *o = &objs[ranges[r].obj];
			o->text_bytes += e - a;
			for (Addr w = VG_ROUNDUP(a, ET_HUGE); w + ET_HUGE <= e; w += ET_HUGE)
				if (et_is_huge(w))
					o->huge_bytes += ET_HUGE;
		}
	}
}

static const HChar *et_source_name(void)
{
	switch (huge_source) {
	case ET_SRC_PAGEMAP_SCAN: return "pagemap-scan";
	case ET_SRC_SMAPS: return "smaps";
	default: return "none";
	}
}

static void et_geom_text(const struct et_tlb_geom *g)
{
	et_p("%s %u entries (%u sets x %u ways%s%s", g->name, g->sets * g->ways, g->sets, g->ways,
	     g->sets == 1 ? ", fully associative" : "",
	     (g->sizes & ET_PS_MASK(ET_PS_2M)) && (g->sizes & ET_PS_MASK(ET_PS_4K)) ? ", 4K+2M" : "");
	if (g->ways_2m)
		et_p("; 2M entries in at most %u ways", g->ways_2m);
	et_p(")");
}

static void et_geom_json(const struct et_tlb_geom *g)
{
	et_p("{\"name\":");
	et_pj(g->name);
	et_p(",\"entries\":%u,\"sets\":%u,\"ways\":%u,\"page_sizes\":\"%s\",\"ways_2m\":%u}",
	     g->sets * g->ways, g->sets, g->ways,
	     (g->sizes & 3) == 3 ? "4K+2M" : (g->sizes & 1) ? "4K" : "2M",
	     g->ways_2m ? g->ways_2m : ((g->sizes & 2) ? g->ways : 0));
}

/* Objects in report order: most primary-model L1 misses first. */
static UInt *et_sorted_objs(UInt *count)
{
	UInt *idx = VG_(malloc)("itlb.sort", (n_objs ? n_objs : 1) * sizeof(UInt));
	UInt k = 0;
	for (UInt i = 0; i < n_objs; i++)
		if (objs[i].instrs || objs[i].fetch[0] || objs[i].fetch[1] || objs[i].text_bytes)
			idx[k++] = i;
	for (UInt i = 1; i < k; i++) {
		UInt v = idx[i], j = i;
		ULong mv = objs[v].c[0].l1_miss[0] + objs[v].c[0].l1_miss[1];
		while (j > 0) {
			struct et_obj *p = &objs[idx[j - 1]];
			ULong mp = p->c[0].l1_miss[0] + p->c[0].l1_miss[1];
			if (mp > mv || (mp == mv && p->instrs >= objs[v].instrs))
				break;
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = v;
	}
	*count = k;
	return idx;
}

static void et_record_json(const HChar *ended, Int status, ULong instrs)
{
	HChar b1[64], b2[64];
	struct et_sum s0;
	et_sum_model(0, &s0);
	ULong f4 = 0, f2 = 0;
	for (UInt i = 0; i < n_objs; i++) {
		f4 += objs[i].fetch[0];
		f2 += objs[i].fetch[1];
	}
	et_p("{\"tool\":\"itlbgrind\",\"format\":1,\"pid\":%d,\"ppid\":%d,\"forked\":%s,\"record\":%d,\"cmd\":",
	     VG_(getpid)(), VG_(getppid)(), forked ? "true" : "false", records_written);
	et_pj(VG_(args_the_exename) ? VG_(args_the_exename) : "?");
	et_p(",\"ended\":\"%s\",\"exit_status\":%d", ended, status);
	if (record_label) {
		et_p(",\"label\":");
		et_pj(record_label);
	}
	et_p(",\"instructions\":%llu,\"itlb_misses\":%llu,\"stlb_misses\":%llu", instrs,
	     s0.l1[0] + s0.l1[1], s0.walks[0] + s0.walks[1]);
	et_p(",\"itlb_mpki\":%s,\"stlb_mpki\":%s,\"model\":\"%s\"",
	     et_mpki(s0.l1[0] + s0.l1[1], instrs, b1), et_mpki(s0.walks[0] + s0.walks[1], instrs, b2),
	     models[0]->name);
	et_p(",\"page_sizes_from\":\"%s\",\"rescans\":%llu,\"full_rescans\":%llu,\"undetermined_windows\":%llu",
	     et_source_name(), rescans, rescans_full, undetermined_windows);
	et_p(",\"threads\":%u,\"page_changes_4k\":%llu,\"page_changes_2m\":%llu", threads_seen, f4, f2);
	{
		ULong dl1 = dcnt[0].l1_miss[0] + dcnt[0].l1_miss[1], dw = dcnt[0].walks[0] + dcnt[0].walks[1];
		et_p(",\"data_model\":%s,\"dtlb_misses\":%llu,\"data_walks\":%llu,\"dtlb_mpki\":%s,\"data_walks_mpki\":%s",
		     clo_data ? "true" : "false", dl1, dw, et_mpki(dl1, instrs, b1), et_mpki(dw, instrs, b2));
		et_p(",\"walks_total\":%llu,\"data_page_changes_4k\":%llu,\"data_page_changes_2m\":%llu",
		     s0.walks[0] + s0.walks[1] + dw, dfetch[0], dfetch[1]);
	}
	et_p(",\"models\":[");
	for (UInt m = 0; m < n_models; m++) {
		const struct et_core_model *md = models[m];
		struct et_sum s;
		et_sum_model(m, &s);
		ULong l1 = s.l1[0] + s.l1[1], w = s.walks[0] + s.walks[1], h = s.l2hit[0] + s.l2hit[1];
		et_p("%s{\"name\":\"%s\",\"desc\":", m ? "," : "", md->name);
		et_pj(md->desc);
		et_p(",\"source\":");
		et_pj(md->source);
		et_p(",\"l1\":[");
		for (UInt i = 0; i < md->n_l1; i++) {
			if (i)
				et_p(",");
			et_geom_json(&md->l1[i]);
		}
		et_p("],\"l2\":");
		et_geom_json(&md->l2);
		et_p(",\"l2_note\":");
		et_pj(md->l2_note);
		et_p(",\"itlb_misses\":%llu,\"itlb_misses_4k\":%llu,\"itlb_misses_2m\":%llu", l1, s.l1[0], s.l1[1]);
		et_p(",\"stlb_hits\":%llu,\"stlb_misses\":%llu,\"stlb_misses_4k\":%llu,\"stlb_misses_2m\":%llu", h, w,
		     s.walks[0], s.walks[1]);
		et_p(",\"itlb_mpki\":%s,\"stlb_mpki\":%s", et_mpki(l1, instrs, b1), et_mpki(w, instrs, b2));
		/* estimate_basis starts "estimate only: H cycles per second-level
		 * hit and W per walk, " (payback reads H and W there), then says
		 * what H and W rest on (itlb_model.h: plain ASCII, no quotes). */
		et_p(",\"estimated_cycles\":%llu,\"estimate_basis\":\"estimate only: %u cycles per second-level hit and %u per walk, %s\"",
		     h * md->stlb_hit_cycles + w * md->walk_cycles, md->stlb_hit_cycles, md->walk_cycles,
		     md->cycles_note);
		/* The data side (zero with --data=no). */
		const struct et_counts *d = &dcnt[m];
		ULong dl1 = d->l1_miss[0] + d->l1_miss[1], dw = d->walks[0] + d->walks[1], dh = d->l2_hit[0] + d->l2_hit[1];
		et_p(",\"arch\":");
		et_pj(md->arch);
		et_p(",\"data_l1\":[");
		for (UInt i = 0; i < md->n_dl1; i++) {
			if (i)
				et_p(",");
			et_geom_json(&md->dl1[i]);
		}
		et_p("],\"data_l2\":");
		et_geom_json(md->dl2.sets ? &md->dl2 : &md->l2);
		et_p(",\"data_l2_shared\":%s", md->dl2.sets ? "false" : "true");
		et_p(",\"dtlb_misses\":%llu,\"dtlb_misses_4k\":%llu,\"dtlb_misses_2m\":%llu", dl1, d->l1_miss[0],
		     d->l1_miss[1]);
		et_p(",\"data_l2_hits\":%llu,\"data_walks\":%llu,\"data_walks_4k\":%llu,\"data_walks_2m\":%llu", dh, dw,
		     d->walks[0], d->walks[1]);
		et_p(",\"dtlb_mpki\":%s,\"data_walks_mpki\":%s", et_mpki(dl1, instrs, b1), et_mpki(dw, instrs, b2));
		et_p(",\"walks_total\":%llu,\"data_estimated_cycles\":%llu}", w + dw,
		     dh * md->stlb_hit_cycles + dw * md->walk_cycles);
	}
	et_p("],\"objects\":[");
	UInt k;
	UInt *idx = et_sorted_objs(&k);
	for (UInt j = 0; j < k; j++) {
		struct et_obj *o = &objs[idx[j]];
		et_p("%s{\"name\":", j ? "," : "");
		et_pj(o->name);
		et_p(",\"instructions\":%llu,\"text_bytes\":%llu,\"huge_text_bytes\":%llu,\"page_changes_4k\":%llu,\"page_changes_2m\":%llu,\"models\":[",
		     o->instrs, o->text_bytes, o->huge_bytes, o->fetch[0], o->fetch[1]);
		for (UInt m = 0; m < n_models; m++)
			et_p("%s{\"name\":\"%s\",\"itlb_misses_4k\":%llu,\"itlb_misses_2m\":%llu,\"stlb_misses_4k\":%llu,\"stlb_misses_2m\":%llu}",
			     m ? "," : "", models[m]->name, o->c[m].l1_miss[0], o->c[m].l1_miss[1], o->c[m].walks[0],
			     o->c[m].walks[1]);
		et_p("]}");
	}
	VG_(free)(idx);
	et_p("]}\n");
}

static void et_record_text(const HChar *ended, Int status, ULong instrs)
{
	HChar b1[64], b2[64];
	ULong f4 = 0, f2 = 0;
	for (UInt i = 0; i < n_objs; i++) {
		f4 += objs[i].fetch[0];
		f2 += objs[i].fetch[1];
	}
	et_p("itlbgrind: pid %d (ppid %d%s) %s: ended by %s", VG_(getpid)(), VG_(getppid)(),
	     forked ? ", forked" : "", VG_(args_the_exename) ? VG_(args_the_exename) : "?", ended);
	if (VG_(strcmp)(ended, "exit") == 0)
		et_p(" (status %d)", status);
	if (record_label)
		et_p(" '%s'", record_label);
	et_p("\nitlbgrind: %'llu instructions; %u thread(s); lookups on a page change: %'llu on 4K pages, %'llu on 2M pages\n",
	     instrs, threads_seen, f4, f2);
	if (clo_data)
		et_p("itlbgrind: data lookups on a page change: %'llu on 4K pages, %'llu on 2M pages\n", dfetch[0],
		     dfetch[1]);
	else
		et_p("itlbgrind: data translations not modelled (--data=no)\n");
	et_p("itlbgrind: page sizes from %s, %llu rescans (%llu full)", et_source_name(), rescans, rescans_full);
	if (undetermined_windows)
		et_p(", %llu windows undetermined (counted as 4K)", undetermined_windows);
	et_p("\n");
	for (UInt m = 0; m < n_models; m++) {
		const struct et_core_model *md = models[m];
		struct et_sum s;
		et_sum_model(m, &s);
		ULong l1 = s.l1[0] + s.l1[1], w = s.walks[0] + s.walks[1], h = s.l2hit[0] + s.l2hit[1];
		et_p("itlbgrind: model %s%s: %s\nitlbgrind:   ", md->name, m == 0 ? " (primary)" : "", md->desc);
		for (UInt i = 0; i < md->n_l1; i++) {
			et_geom_text(&md->l1[i]);
			et_p("; ");
		}
		et_geom_text(&md->l2);
		et_p(", %s\n", md->l2_note);
		et_p("itlbgrind:   L1 iTLB misses %'llu (4K %'llu, 2M %'llu), MPKI %s\n", l1, s.l1[0], s.l1[1],
		     et_mpki(l1, instrs, b1));
		et_p("itlbgrind:   %s misses (page walks) %'llu (4K %'llu, 2M %'llu), MPKI %s\n", md->l2.name, w,
		     s.walks[0], s.walks[1], et_mpki(w, instrs, b2));
		et_p("itlbgrind:   estimate only (%u cycles per %s hit, %u per walk): %'llu cycles\n"
		     "itlbgrind:     costs: %s\n",
		     md->stlb_hit_cycles, md->l2.name, md->walk_cycles,
		     h * md->stlb_hit_cycles + w * md->walk_cycles, md->cycles_note);
		if (clo_data) {
			const struct et_counts *d = &dcnt[m];
			ULong dl1 = d->l1_miss[0] + d->l1_miss[1], dw = d->walks[0] + d->walks[1];
			const struct et_tlb_geom *g2 = md->dl2.sets ? &md->dl2 : &md->l2;
			et_p("itlbgrind:   data: ");
			for (UInt i = 0; i < md->n_dl1; i++) {
				et_geom_text(&md->dl1[i]);
				et_p("; ");
			}
			if (md->dl2.sets)
				et_geom_text(&md->dl2);
			else
				et_p("the %s above", md->l2.name);
			et_p("\nitlbgrind:   L1 dTLB misses %'llu (4K %'llu, 2M %'llu), MPKI %s; data walks (%s misses) %'llu (4K %'llu, 2M %'llu), MPKI %s\n",
			     dl1, d->l1_miss[0], d->l1_miss[1], et_mpki(dl1, instrs, b1), g2->name, dw, d->walks[0],
			     d->walks[1], et_mpki(dw, instrs, b2));
		}
	}
	UInt k;
	UInt *idx = et_sorted_objs(&k);
	et_p("itlbgrind: per object (%s): instructions, L1 misses 4K/2M, walks 4K/2M, text KiB on 2M pages/all\n",
	     models[0]->name);
	UInt shown = 0, quiet = 0;
	for (UInt j = 0; j < k; j++) {
		struct et_obj *o = &objs[idx[j]];
		if (!o->instrs || shown >= (UInt)clo_objects) {
			quiet++;
			continue;
		}
		shown++;
		et_p("itlbgrind:   %'14llu %'10llu %'10llu %'10llu %'10llu %'8llu/%-'8llu %s\n", o->instrs,
		     o->c[0].l1_miss[0], o->c[0].l1_miss[1], o->c[0].walks[0], o->c[0].walks[1],
		     o->huge_bytes >> 10, o->text_bytes >> 10, o->name);
	}
	if (quiet)
		et_p("itlbgrind:   (%u more objects, %s; --json=yes lists them all)\n", quiet,
		     shown >= (UInt)clo_objects ? "see --objects=N" : "none of them executed");
	VG_(free)(idx);
}

static void et_write_record(const HChar *ended, Int status)
{
	olen = 0;
	ULong instrs = et_total_instrs();
	et_text_bytes();
	if (clo_json)
		et_record_json(ended, status, instrs);
	else
		et_record_text(ended, status, instrs);
	records_written++;
	if (clo_out) {
		HChar *name = VG_(expand_file_name)("--out", clo_out);
		Int fd = VG_(fd_open)(name, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_APPEND, 0644);
		if (fd < 0) {
			VG_(umsg)("itlbgrind: cannot open %s: record written to the log instead\n", name);
		} else {
			SizeT done = 0;
			while (done < olen) {
				Int n = VG_(write)(fd, obuf + done, (Int)(olen - done));
				if (n <= 0)
					break;
				done += (SizeT)n;
			}
			VG_(close)(fd);
			VG_(free)(name);
			return;
		}
		VG_(free)(name);
	}
	if (clo_json) {
		VG_(printf)("%s", obuf);
		return;
	}
	HChar *line = obuf;
	while (*line) {
		HChar *nl = VG_(strchr)(line, '\n');
		if (nl)
			*nl = 0;
		VG_(umsg)("%s\n", line);
		if (!nl)
			break;
		line = nl + 1;
	}
}

/* ------------------------------------------------------------ set-up */

static void et_post_clo_init(void)
{
	et_parse_models();
	if (VG_(strcmp)(clo_huge_source, "auto") == 0 || VG_(strcmp)(clo_huge_source, "pagemap-scan") == 0)
		huge_source = ET_SRC_PAGEMAP_SCAN;
	else if (VG_(strcmp)(clo_huge_source, "smaps") == 0)
		huge_source = ET_SRC_SMAPS;
	else if (VG_(strcmp)(clo_huge_source, "none") == 0)
		huge_source = ET_SRC_NONE;
	else
		VG_(fmsg_bad_option)("--huge-source", "expected auto, pagemap-scan, smaps or none\n");
	threads = VG_(calloc)("itlb.threads", VG_N_THREADS, sizeof *threads);
	pending_code = VG_(calloc)("itlb.pending", VG_N_THREADS, sizeof *pending_code);
	et_snap_init();
}

/* ITLBGRIND_SNAPSHOT(label): a record of the counts so far, nothing reset. */
static Bool et_client_request(ThreadId tid, UWord *args, UWord *ret)
{
	(void)tid;
	if (!VG_IS_TOOL_USERREQ('I', 'T', args[0]))
		return False;
	if (args[0] != ITLBGRIND_USERREQ_SNAPSHOT)
		return False;
	HChar label[256];
	const HChar *l = (const HChar *)args[1];
	SizeT n = 0;
	if (l && VG_(am_is_valid_for_client)((Addr)l, 1, VKI_PROT_READ))
		for (; n + 1 < sizeof label && l[n]; n++)
			label[n] = l[n];
	label[n] = 0;
	record_label = label;
	et_write_record("snapshot", 0);
	record_label = NULL;
	*ret = 0;
	return True;
}

static void et_fini(Int exitcode)
{
	et_snap_check();
	et_write_record("exit", exitcode);
}

static void et_pre_clo_init(void)
{
	VG_(details_name)("itlbgrind");
	VG_(details_version)("1");
	VG_(details_description)("a deterministic instruction-TLB model");
	VG_(details_copyright_author)("The libenormoustext authors.");
	VG_(details_bug_reports_to)("the libenormoustext project");
	VG_(details_avg_translation_sizeB)(275);

	/* Object 0 collects what does not fit the table. */
	objs[0].name = VG_(strdup)("itlb.obj", "[other objects]");
	n_objs = 1;

	VG_(basic_tool_funcs)(et_post_clo_init, et_instrument, et_fini);
	VG_(needs_command_line_options)(et_process_cmd_line_option, et_print_usage, et_print_debug_usage);
	VG_(needs_syscall_wrapper)(et_pre_syscall, et_post_syscall);
	VG_(needs_client_requests)(et_client_request);
	VG_(track_new_mem_startup)(et_track_new);
	VG_(track_new_mem_mmap)(et_track_new);
	VG_(track_die_mem_munmap)(et_track_munmap);
	VG_(track_copy_mem_remap)(et_track_remap);
	VG_(track_pre_thread_ll_create)(et_thread_create);
	VG_(track_start_client_code)(et_start_client_code);
	VG_(atfork)(NULL, et_atfork_parent, et_atfork_child);
}

VG_DETERMINE_INTERFACE_VERSION(et_pre_clo_init)
