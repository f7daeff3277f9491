/*
 * check_info.h — what check_elf.c found in one ELF file, for
 * check_report.c, which says it (check's text and JSON, the advice).
 * Inside `check` only: other callers use check_elf.h.
 */
#ifndef ET_TOOL_CHECK_INFO_H
#define ET_TOOL_CHECK_INFO_H

#include "check_elf.h"

#include <elf.h>

struct check_seg {
	uint64_t vaddr, off, filesz, memsz, align;
	uint32_t flags;
};

struct check_range {
	uint64_t min, max;   /* eligible bytes over the possible load addresses */
};

struct check_info {
	const char *name;
	unsigned cls, machine, type;
	bool little, pie, dso, textrel, is_musl;
	char interp[256];
	char build_id[2 * 64 + 1];
	uint64_t hot_bytes;
	bool has_hot;
	struct check_seg *loads;
	size_t nloads;
	uint64_t max_align;
	/* analysis */
	uint64_t text_bytes, file_text_bytes;
	size_t ntext;
	size_t ncongruent;
	struct check_range glibc, musl;
	uint64_t aligned_bytes;          /* eligible when loaded H-aligned */
	uint64_t head_bytes, tail_bytes; /* when loaded H-aligned */
	uint64_t pad_add_bytes;          /* text a padded tail would add (tails > threshold) */
	uint64_t pad_cost_bytes;         /* padding memory that costs */
	uint64_t pad_windows;            /* tails that padding would put in a window of their own */
	bool pad_runtime;                /* every such tail has room after it (a hole) */
	bool need_align, need_pad;
	/* what linker-scripts/enormous.ld costs (see layout_cost()) */
	const unsigned char *buf;        /* the file */
	bool padded;                     /* it already has the script's layout */
	bool other_align;                /* a segment without text is H-aligned too (-z max-page-size) */
	uint64_t code_bytes;             /* the text without the layout's padding */
	uint64_t layout_pad_bytes;       /* filler after the code, to the end of its last window */
	uint64_t layout_file_bytes;      /* file bytes the layout takes: before the text and after it */
	uint64_t layout_mem_bytes;       /* memory the padding takes when the text is mapped huge */
};

/* Below this much code (half a huge page), the script's layout is not worth
 * it: the text's base pages are few enough for the second-level TLB (256
 * entries of 4 KiB at 2 MiB; Golden Cove's STLB has 2048, Zen 4's L2 iTLB
 * 512), so there are few misses to save, and a whole page plus some 4 MiB
 * of file are spent on less than half a page of code (bench/layout-cost,
 * bench/results/layout-cost.md). */
static inline uint64_t small_text(uint64_t H)
{
	return H / 2;
}

static inline uint64_t round_up(uint64_t x, uint64_t a)
{
	return x % a ? x + (a - x % a) : x;
}

/* Does glibc (and the kernel, for a program) load it at an address that
 * is a multiple of H plus its link-time address? */
static inline bool aligned_load(const struct check_info *in, const struct et_check_opts *o)
{
	return in->type == ET_EXEC || in->max_align >= o->pmd_size;
}

/* The analysis of in, as check prints it: lines on f, or one JSON value. */
void et_check_print_text(const struct check_info *in, const struct et_check_opts *o, FILE *f);
void et_check_print_json(const struct check_info *in, const struct et_check_opts *o, struct et_json *j);

#endif
