/*
 * tools/enormoustext/check_report.c — what `enormoustext check` says of
 * one ELF file that check_elf.c read and analysed: the text (its segments,
 * the windows eligible wherever it is loaded, the tails and their
 * padding, the layout's cost) and what would make all of it huge (the
 * advice: link flags, linker-scripts/enormous.ld or one made for it), as
 * lines or one JSON value.
 *
 * Owns: check's report, text and JSON, and its advice (the link flags, the
 * script it prints, SCRIPT_FMT).
 * May call: core (json), common.c (sizes).
 * Never: reads the file (check_elf.c did); writes to the error stream;
 * depends on output.c or msg.c (the fuzz driver links this file with
 * check_elf.c, elffile.c and common.c alone).
 */
#include "check_info.h"

#include <string.h>

static const char *machine_name(unsigned m, char *buf, size_t cap)
{
	switch (m) {
	case EM_X86_64: return "x86-64";
	case EM_386: return "i386";
	case EM_AARCH64: return "aarch64";
	case EM_ARM: return "arm";
	case EM_RISCV: return "riscv";
	case EM_PPC64: return "ppc64";
	case EM_PPC: return "ppc";
	case EM_S390: return "s390";
	case EM_MIPS: return "mips";
	case 258: return "loongarch";
	default: snprintf(buf, cap, "machine %u", m); return buf;
	}
}

static const char *kind_name(const struct check_info *in)
{
	if (in->type == ET_EXEC)
		return "executable";
	return in->pie ? "PIE executable" : "shared library";
}

static void flags_str(uint32_t f, char out[4])
{
	out[0] = f & PF_R ? 'r' : '-';
	out[1] = f & PF_W ? 'w' : '-';
	out[2] = f & PF_X ? 'x' : '-';
	out[3] = '\0';
}

/* linker-scripts/enormous.ld (its rules, without the comments) in one
 * line, for the huge page size at hand: 0x200000 there. */
#define SCRIPT_FMT "SECTIONS { .init : ALIGN(0x%llx) { KEEP (*(SORT_NONE(.init))) } " \
	".enormous.hot : { *(.text.hot .text.hot.*) } } INSERT BEFORE .text; " \
	"SECTIONS { __libc_freeres_fn : { *(__libc_freeres_fn) } .plt.got : { *(.plt.got) } " \
	".plt.sec : { *(.plt.sec) } .plt : { *(.plt) *(.iplt) LONG(0) . = ALIGN(0x%llx); } " \
	". = . + CONSTANT (MAXPAGESIZE); } INSERT AFTER .fini;"

#define ADVICE_LINES 10
#define ADVICE_LEN 640

/* The advice, as lines; the link flags for GNU ld and lld (the script),
 * the flags for gold and mold (no script) and the script in *flags,
 * *noscript and *script ("" where none). */
static size_t advise(const struct check_info *in, const struct et_check_opts *o,
                     char lines[][ADVICE_LEN], size_t cap, char *flags, size_t fcap,
                     char *noscript, size_t ncap, char *script, size_t scap)
{
	size_t n = 0;
	const uint64_t H = o->pmd_size, small = small_text(H);
	char hs[16], sz[16], th[16], fs[16], ms[16], ps[16];
	et_tool_size(hs, sizeof hs, H);
	et_tool_size(th, sizeof th, small);
	et_tool_size(sz, sizeof sz, in->code_bytes);
	et_tool_size(fs, sizeof fs, in->layout_file_bytes);
	et_tool_size(ms, sizeof ms, in->layout_mem_bytes);
	et_tool_size(ps, sizeof ps, in->layout_pad_bytes);
	flags[0] = noscript[0] = script[0] = '\0';
#define ADD(...) do { if (n < cap) snprintf(lines[n++], ADVICE_LEN, __VA_ARGS__); } while (0)
	if (in->textrel)
		ADD("rebuild without text relocations (compile every object with -fPIC for a library, "
		    "-fPIE for a program): libenormoustext leaves objects with text relocations alone");
	if (!in->ntext || !in->file_text_bytes) {
		ADD("nothing to do: no executable segment");
		return n;
	}
	if (in->padded && in->code_bytes < small) {
		char seg[16];
		ADD("not worth it: laid out for %s pages (linked with enormous.ld), %s of code fills a %s "
		    "executable segment: %s of padding, which takes about %s of the file and, when "
		    "the text is mapped huge, %s of memory", hs, sz,
		    et_tool_size(seg, sizeof seg, in->text_bytes), ps, fs, ms);
		ADD("relink without -Wl,-T,enormous.ld%s: under %s of code (half a %s page) its base "
		    "pages are few enough for the TLBs and there is little to gain; keep the layout only "
		    "if this code is hot and its TLB misses are measured", in->other_align ?
		    " and -z max-page-size" : "", th, hs);
		return n;
	}
	if (in->glibc.min == in->file_text_bytes) {
		if (!in->textrel)
			ADD("nothing to do: all of the text is in whole %s windows wherever it is loaded", hs);
		if (in->padded)
			ADD("laid out for %s pages (linked with enormous.ld): %s of padding after %s of "
			    "code, about %s of the file and, mapped huge, %s of memory", hs, ps, sz, fs, ms);
		if (in->dso && in->musl.min < in->file_text_bytes)
			ADD("under musl (which ignores p_align for libraries) that holds only where the "
			    "kernel maps the library %s-aligned", hs);
		return n;
	}
	if (in->code_bytes < small) {
		ADD("nothing worth doing: %s of text, under %s (half a %s page): -Wl,-T,enormous.ld would "
		    "add about %s to the file and, when mapped huge, %s of memory (a whole page) for it",
		    sz, th, hs, fs, ms);
		ADD("instead: leave it linked as it is (%llu base pages of text are few enough for the "
		    "TLBs); a whole %s page is worth it only for code that is hot and whose TLB misses "
		    "are measured", (unsigned long long)(round_up(in->code_bytes, o->page_size) /
		                                         o->page_size), hs);
		return n;
	}
	if (!in->need_align && !in->pad_add_bytes && in->glibc.min + in->tail_bytes >= in->file_text_bytes) {
		ADD("nothing worth doing: all of the text but a tail of %s (not more than the pad "
		    "threshold, %s) is in whole %s windows", et_tool_size(sz, sizeof sz, in->tail_bytes),
		    et_tool_size(th, sizeof th, o->pad_threshold), hs);
		return n;
	}
	snprintf(flags, fcap, "-Wl,-T,enormous.ld");
	snprintf(script, scap, SCRIPT_FMT, (unsigned long long)H, (unsigned long long)H);
	if (in->need_align)
		snprintf(noscript, ncap, "-Wl,-z,max-page-size=0x%llx -Wl,-z,separate-code",
		         (unsigned long long)H);
	ADD("to put all %s of the text on huge pages, link with GNU ld or lld: %s", sz, flags);
	if (H == 0x200000 && o->script_2m)
		ADD("where enormous.ld is %s (pkg-config --variable=huge_text_ldflags enormoustext)",
		    o->script_2m);
	else if (H == 0x2000000 && o->script_32m)
		ADD("where enormous.ld is %s (the same layout for 32M pages)", o->script_32m);
	else if (H == 0x200000)
		ADD("where enormous.ld is the linker script of libenormoustext's package (share/enormoustext/"
		    "enormous.ld; pkg-config --variable=huge_text_ldflags enormoustext)");
	else
		ADD("where enormous.ld is libenormoustext's linker script (share/enormoustext/enormous.ld) "
		    "with 0x200000 changed to 0x%llx: --json gives it as linker_script", (unsigned long long)H);
	ADD("the script starts the text on a %s boundary (p_align %s: the kernel and glibc >= 2.35 "
	    "load it %s-aligned), puts .text.hot first and pads the end to the next "
	    "boundary, so every byte is in a whole window; it costs about %s of file and, mapped "
	    "huge, %s of memory", hs, hs, hs, fs, ms);
	if (in->need_align)
		ADD("with gold or mold (which cannot take the script) or a linker that ignores its "
		    "alignment: %s instead (gold has no -z separate-code); the text then starts "
		    "%s-aligned and libenormoustext pads its tail at run time, where the rest of the "
		    "last window is free", noscript, hs);
	else if (in->pad_add_bytes)
		ADD("without the script (gold, mold): libenormoustext pads the tail at run time %s",
		    in->pad_runtime ? "(here the rest of its window is free)"
		                    : "where the rest of its window is free, which here it is not");
	if (in->code_bytes < H)
		ADD("its %s of text is less than one %s page: the padding costs more memory than the "
		    "text; worth it only for code that is hot", et_tool_size(sz, sizeof sz, in->code_bytes), hs);
	if (in->dso)
		ADD("musl ignores p_align for libraries: there, where the kernel maps the library decides");
	return n;
}

void et_check_print_text(const struct check_info *in, const struct et_check_opts *o, FILE *f)
{
	char a[16], b[16], c[16], m[32], hs[16];
	const uint64_t H = o->pmd_size;
	et_tool_size(hs, sizeof hs, H);
	fprintf(f, "%s: %s, %s, ELF%u %s-endian\n", in->name, kind_name(in),
	        machine_name(in->machine, m, sizeof m), in->cls, in->little ? "little" : "big");
	if (in->interp[0])
		fprintf(f, "  interpreter      %s%s\n", in->interp, in->is_musl ? " (musl)" : "");
	fprintf(f, "  build-id         %s\n", in->build_id[0] ? in->build_id : "none");
	fprintf(f, "  segments         (huge page size %s)\n", hs);
	for (size_t i = 0; i < in->nloads; i++) {
		const struct check_seg *s = &in->loads[i];
		char fl[4];
		flags_str(s->flags, fl);
		fprintf(f, "    LOAD %s vaddr 0x%-10llx offset 0x%-9llx filesz 0x%-9llx memsz 0x%-9llx "
		           "align 0x%llx%s\n", fl, (unsigned long long)s->vaddr, (unsigned long long)s->off,
		        (unsigned long long)s->filesz, (unsigned long long)s->memsz,
		        (unsigned long long)s->align,
		        !(s->flags & PF_X) ? "" :
		        (s->vaddr - s->off) % H == 0 ? "  text, offset congruent" : "  text, offset not congruent");
	}
	fprintf(f, "  text             %s in %zu executable segment%s, load alignment %s\n",
	        et_tool_size(a, sizeof a, in->text_bytes), in->ntext, in->ntext == 1 ? "" : "s",
	        et_tool_size(b, sizeof b, in->max_align > o->page_size ? in->max_align : o->page_size));
	const char *loaders[2] = { "glibc", "musl" };
	const struct check_range *rs[2] = { &in->glibc, &in->musl };
	for (int k = 0; k < 2; k++) {
		const struct check_range *r = rs[k];
		if (r->min == r->max)
			fprintf(f, "  eligible (%-5s) %s of %s in whole %s windows\n", loaders[k],
			        et_tool_size(a, sizeof a, r->min), et_tool_size(b, sizeof b, in->file_text_bytes), hs);
		else
			fprintf(f, "  eligible (%-5s) %s to %s of %s, depending on the load address (not "
			           "%s-aligned)\n", loaders[k], et_tool_size(a, sizeof a, r->min),
			        et_tool_size(b, sizeof b, r->max), et_tool_size(c, sizeof c, in->file_text_bytes), hs);
	}
	fprintf(f, "  if %s-aligned    %s eligible; %s of head before the first window, %s of tail after "
	           "the last\n", hs, et_tool_size(a, sizeof a, in->aligned_bytes),
	        et_tool_size(b, sizeof b, in->head_bytes), et_tool_size(c, sizeof c, in->tail_bytes));
	if (in->pad_add_bytes)
		fprintf(f, "  padding          padding the tail would add %s of text (%s of padding)%s\n",
		        et_tool_size(a, sizeof a, in->pad_add_bytes), et_tool_size(b, sizeof b, in->pad_cost_bytes),
		        in->pad_runtime ? "; there is room after it, so it can be done at run time"
		                        : "; the next segment starts inside that window: only a relink can");
	else if (in->tail_bytes)
		fprintf(f, "  padding          the tail (%s) is not more than the pad threshold (%s): not worth it\n",
		        et_tool_size(a, sizeof a, in->tail_bytes), et_tool_size(b, sizeof b, o->pad_threshold));
	else
		fprintf(f, "  padding          nothing to pad\n");
	if (in->padded)
		fprintf(f, "  layout           enormous.ld's: %s of code, %s of padding to the end of its "
		           "last window; the layout takes about %s of the file and, mapped huge, %s of "
		           "memory%s\n", et_tool_size(a, sizeof a, in->code_bytes),
		        et_tool_size(b, sizeof b, in->layout_pad_bytes),
		        et_tool_size(c, sizeof c, in->layout_file_bytes), et_tool_size(m, sizeof m, in->layout_mem_bytes),
		        in->code_bytes < small_text(H) ? ": not worth it for so little code" : "");
	else if (in->file_text_bytes)
		fprintf(f, "  script cost      -T enormous.ld would add about %s of file and, mapped huge, %s "
		           "of memory, for %s of text%s\n", et_tool_size(a, sizeof a, in->layout_file_bytes),
		        et_tool_size(b, sizeof b, in->layout_mem_bytes), et_tool_size(c, sizeof c, in->code_bytes),
		        in->code_bytes < small_text(H) ? ": not worth it for so little" : "");
	if (!in->ntext || in->ncongruent != in->ntext)
		fprintf(f, "  file-backed huge no: a text segment's address and offset differ modulo %s; "
		           "anonymous copies only\n", hs);
	else if (aligned_load(in, o))
		fprintf(f, "  file-backed huge possible: address and offset congruent modulo %s, and %s\n",
		        hs, in->type == ET_EXEC ? "its addresses are fixed" : "it is loaded aligned");
	else
		fprintf(f, "  file-backed huge only where it happens to be loaded %s-aligned (address and "
		           "offset are congruent, but p_align is %s)\n", hs,
		        et_tool_size(a, sizeof a, in->max_align));
	if (in->has_hot)
		fprintf(f, "  .text.hot        yes, %s\n", et_tool_size(a, sizeof a, in->hot_bytes));
	else
		fprintf(f, "  .text.hot        no (GNU ld merges .text.hot into .text unless told otherwise)\n");
	fprintf(f, "  text relocations %s\n", in->textrel ? "yes: libenormoustext leaves this object alone" : "no");
	char lines[ADVICE_LINES][ADVICE_LEN], flags[64], noscript[128], script[512];
	size_t n = advise(in, o, lines, ADVICE_LINES, flags, sizeof flags, noscript, sizeof noscript,
	                  script, sizeof script);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %-16s %s\n", i == 0 ? "advice" : "", lines[i]);
}

static void range_json(struct et_json *j, const char *key, const struct check_range *r)
{
	et_json_obj(j, key);
	et_json_u64(j, "min", r->min);
	et_json_u64(j, "max", r->max);
	et_json_bool(j, "exact", r->min == r->max);
	et_json_obj_end(j);
}

void et_check_print_json(const struct check_info *in, const struct et_check_opts *o, struct et_json *j)
{
	char m[32];
	et_json_obj(j, NULL);
	et_json_str(j, "file", in->name);
	et_json_str(j, "type", in->type == ET_EXEC ? "executable" : in->pie ? "pie" : "shared-library");
	et_json_str(j, "machine", machine_name(in->machine, m, sizeof m));
	et_json_u64(j, "class", in->cls);
	et_json_str(j, "byte_order", in->little ? "little" : "big");
	et_json_str(j, "interpreter", in->interp[0] ? in->interp : NULL);
	et_json_str(j, "build_id", in->build_id[0] ? in->build_id : NULL);
	et_json_u64(j, "pmd_size", o->pmd_size);
	et_json_u64(j, "page_size", o->page_size);
	et_json_arr(j, "segments");
	for (size_t i = 0; i < in->nloads; i++) {
		const struct check_seg *s = &in->loads[i];
		char fl[4];
		flags_str(s->flags, fl);
		et_json_obj(j, NULL);
		et_json_str(j, "flags", fl);
		et_json_u64(j, "vaddr", s->vaddr);
		et_json_u64(j, "offset", s->off);
		et_json_u64(j, "filesz", s->filesz);
		et_json_u64(j, "memsz", s->memsz);
		et_json_u64(j, "align", s->align);
		et_json_bool(j, "text", (s->flags & PF_X) != 0);
		et_json_bool(j, "congruent", (s->vaddr - s->off) % o->pmd_size == 0);
		et_json_obj_end(j);
	}
	et_json_arr_end(j);
	et_json_u64(j, "text_bytes", in->text_bytes);
	et_json_u64(j, "text_file_bytes", in->file_text_bytes);
	et_json_u64(j, "text_segments", in->ntext);
	et_json_u64(j, "max_align", in->max_align);
	et_json_obj(j, "eligible_bytes");
	range_json(j, "glibc", &in->glibc);
	range_json(j, "musl", &in->musl);
	et_json_u64(j, "aligned", in->aligned_bytes);
	et_json_obj_end(j);
	et_json_u64(j, "head_bytes", in->head_bytes);
	et_json_u64(j, "tail_bytes", in->tail_bytes);
	et_json_obj(j, "padding");
	et_json_u64(j, "pad_threshold", o->pad_threshold);
	et_json_u64(j, "adds_text_bytes", in->pad_add_bytes);
	et_json_u64(j, "padding_bytes", in->pad_cost_bytes);
	et_json_bool(j, "possible_at_run_time", in->pad_add_bytes && in->pad_runtime);
	et_json_obj_end(j);
	et_json_bool(j, "congruent", in->ntext && in->ncongruent == in->ntext);
	et_json_bool(j, "aligned_load", aligned_load(in, o));
	et_json_bool(j, "text_hot", in->has_hot);
	et_json_u64(j, "text_hot_bytes", in->hot_bytes);
	et_json_bool(j, "textrel", in->textrel);
	et_json_bool(j, "all_text_eligible", in->file_text_bytes && in->glibc.min == in->file_text_bytes);
	et_json_obj(j, "layout_cost");
	et_json_bool(j, "padded", in->padded);
	et_json_u64(j, "code_bytes", in->code_bytes);
	et_json_u64(j, "padding_bytes", in->layout_pad_bytes);
	et_json_u64(j, "file_bytes", in->layout_file_bytes);
	et_json_u64(j, "memory_bytes", in->layout_mem_bytes);
	et_json_u64(j, "worth_it_from", small_text(o->pmd_size));
	et_json_bool(j, "worth_it", in->code_bytes >= small_text(o->pmd_size));
	et_json_obj_end(j);
	char lines[ADVICE_LINES][ADVICE_LEN], flags[64], noscript[128], script[512];
	size_t n = advise(in, o, lines, ADVICE_LINES, flags, sizeof flags, noscript, sizeof noscript,
	                  script, sizeof script);
	et_json_arr(j, "advice");
	for (size_t i = 0; i < n; i++)
		et_json_str(j, NULL, lines[i]);
	et_json_arr_end(j);
	et_json_str(j, "link_flags", flags[0] ? flags : NULL);
	et_json_str(j, "link_flags_noscript", noscript[0] ? noscript : NULL);
	et_json_str(j, "linker_script", script[0] ? script : NULL);
	et_json_obj_end(j);
}
