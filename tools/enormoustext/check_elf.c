/*
 * tools/enormoustext/check_elf.c — the analysis behind `enormoustext check`:
 * can the text of this program or library go onto huge pages, how much of
 * it, and what would make all of it.  Reads the file with libelf (the
 * runtime library must not depend on it; the command may).
 *
 * Hostile input: every offset and size is checked against the file before
 * it is used, libelf reads only the in-memory image (elf_memory: no reads
 * past it), and a bad or truncated file ends in exactly one line naming it.
 * The tests run this on every prefix of a small ELF and on random byte
 * flips under ASan/UBSan.
 *
 * What "eligible" means is the library's own rule (plan.c, reused here): a
 * whole PMD-size window [w, w+H), H-aligned at run time, inside the file
 * bytes of an executable PT_LOAD.  How many there are depends on where the
 * object is loaded, modulo H:
 *   - ET_EXEC: at its link-time address;
 *   - a PIE executable: where the kernel puts it, aligned to its largest
 *     p_align (Linux >= 5.10), for glibc and musl alike;
 *   - a shared library: glibc (>= 2.35) aligns it to its largest p_align;
 *     musl ignores p_align, so it lands wherever the kernel places a file
 *     mapping (page-aligned at least).
 * Where the alignment is smaller than H, the count is a range over every
 * possible load address.
 *
 * Owns: the analysis of one ELF file for `check` (et_check_image,
 * et_check_path): its text, windows, padding and layout cost (said, with
 * the advice, by check_report.c); its summary for `status --explain`
 * (et_check_summary); and
 * the reasons a file cannot be checked, as data (a code and its words, one
 * table: et_check_reason), so that no caller reads meaning out of text.
 * May call: core (plan: the library's own rule for windows; json), libelf
 * (on the image elffile.c opened), elffile.c (the image opened, the
 * build-id), check_report.c (the report), common.c (sizes).
 * Never: reads past the image it was given; writes more than one line to
 * the error stream for a bad file; depends on output.c or msg.c (the fuzz
 * driver links this file with elffile.c and common.c alone).
 */
#include "check_info.h"
#include "elffile.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef DF_1_PIE
#define DF_1_PIE 0x08000000
#endif
#ifndef DF_TEXTREL
#define DF_TEXTREL 0x4
#endif


/* -------------------------------------------------------------- errors */

/* Why a file cannot be checked, in one table: the code, its short name,
 * and the sentence for it.  Each failure below gives its code with its
 * words; the words (the detail) are what check's line says. */
static const struct et_check_reason reasons[ET_CHECK_NWHY] = {
	{ ET_CHECK_OK, "ok", "it can be checked" },
	{ ET_CHECK_UNREADABLE, "unreadable", "cannot be read" },
	{ ET_CHECK_NOT_FILE, "not-a-file", "not a regular file" },
	{ ET_CHECK_EMPTY, "empty", "empty file, not an ELF file" },
	{ ET_CHECK_NOT_ELF, "not-elf", "not an ELF file" },
	{ ET_CHECK_TRUNCATED, "truncated", "truncated: a header or table extends past the end of the file" },
	{ ET_CHECK_CORRUPT, "corrupt", "corrupt: a header or table no loader accepts" },
	{ ET_CHECK_OBJECT, "object", "a relocatable object file (.o): nothing in it is loaded as it is" },
	{ ET_CHECK_CORE, "core", "a core dump, not a program or library" },
	{ ET_CHECK_NOTHING_LOADED, "nothing-loaded", "no program headers: nothing in it can be loaded" },
	{ ET_CHECK_CHANGED, "changed", "changed while it was read: check it again" },
	{ ET_CHECK_NO_MEMORY, "no-memory", "out of memory" },
};

const struct et_check_reason *et_check_reason(enum et_check_why code)
{
	if ((unsigned)code >= ET_CHECK_NWHY)
		code = ET_CHECK_UNREADABLE;
	return &reasons[code];
}

/* Where a failure goes: check's one line on err, and/or the code and words
 * into *fail (status --explain says it as its own). */
struct sink {
	FILE *err;
	struct et_check_failure *fail;
};

static int bad(struct sink *s, enum et_check_why why, const char *name, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int bad(struct sink *s, enum et_check_why why, const char *name, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (s->fail) {
		s->fail->why = why;
		snprintf(s->fail->words, sizeof s->fail->words, "%s", msg);
	}
	if (s->err) {
		fprintf(s->err, "enormoustext check: %s: %s\n", name, msg);
		fflush(s->err);
	}
	return ET_EXIT_BAD;
}

static const char *elf_msg(void)
{
	const char *m = elf_errmsg(-1);
	return m ? m : "unknown libelf error";
}

/* -------------------------------------------------------- raw header */

static uint64_t rd(const unsigned char *p, size_t n, bool little)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[little ? i : n - 1 - i] << (8 * i);
	return v;
}

/* A table of `num` entries of `ent` bytes at `off` fits in `len`? */
static bool fits(uint64_t off, uint64_t num, uint64_t ent, uint64_t len)
{
	if (off > len)
		return false;
	if (ent && num > (len - off) / ent)
		return false;
	return true;
}

/* Before libelf sees it: the identification, the header, and that the
 * program and section header tables lie inside the file, with messages
 * that say what is wrong. */
static int precheck(const unsigned char *b, size_t len, const char *name, struct sink *err,
                    struct check_info *in)
{
	if (len == 0)
		return bad(err, ET_CHECK_EMPTY, name, "empty file, not an ELF file");
	if (len < SELFMAG || memcmp(b, ELFMAG, SELFMAG) != 0)
		return bad(err, ET_CHECK_NOT_ELF, name, "not an ELF file");
	if (len < EI_NIDENT)
		return bad(err, ET_CHECK_TRUNCATED, name, "truncated ELF header (%zu bytes)", len);
	if (b[EI_CLASS] != ELFCLASS32 && b[EI_CLASS] != ELFCLASS64)
		return bad(err, ET_CHECK_CORRUPT, name, "corrupt ELF header: unknown class %u", b[EI_CLASS]);
	if (b[EI_DATA] != ELFDATA2LSB && b[EI_DATA] != ELFDATA2MSB)
		return bad(err, ET_CHECK_CORRUPT, name, "corrupt ELF header: unknown byte order %u", b[EI_DATA]);
	bool l = b[EI_DATA] == ELFDATA2LSB, is64 = b[EI_CLASS] == ELFCLASS64;
	size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (len < ehsize)
		return bad(err, ET_CHECK_TRUNCATED, name, "truncated ELF header (%zu of %zu bytes)", len, ehsize);
	in->cls = is64 ? 64 : 32;
	in->little = l;
	uint64_t phoff = is64 ? rd(b + 32, 8, l) : rd(b + 28, 4, l);
	uint64_t shoff = is64 ? rd(b + 40, 8, l) : rd(b + 32, 4, l);
	size_t o = is64 ? 54 : 42;   /* e_phentsize */
	uint64_t phent = rd(b + o, 2, l), phnum = rd(b + o + 2, 2, l);
	uint64_t shent = rd(b + o + 4, 2, l), shnum = rd(b + o + 6, 2, l);
	uint64_t want_ph = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	uint64_t want_sh = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	if (phnum && phent != want_ph)
		return bad(err, ET_CHECK_CORRUPT, name, "corrupt ELF header: program header entry size %llu (expected %llu)",
		           (unsigned long long)phent, (unsigned long long)want_ph);
	if (shoff && shent != want_sh)
		return bad(err, ET_CHECK_CORRUPT, name, "corrupt ELF header: section header entry size %llu (expected %llu)",
		           (unsigned long long)shent, (unsigned long long)want_sh);
	/* Extended numbering keeps the real counts in section header 0. */
	if (shoff && !fits(shoff, 1, want_sh, len))
		return bad(err, ET_CHECK_TRUNCATED, name, "truncated: the section header table at offset 0x%llx is past the "
		           "end of the file (%zu bytes)", (unsigned long long)shoff, len);
	if (shoff && shnum == 0)
		shnum = is64 ? rd(b + shoff + 32, 8, l) : rd(b + shoff + 20, 4, l);
	if (phnum == PN_XNUM && shoff)
		phnum = is64 ? rd(b + shoff + 44, 4, l) : rd(b + shoff + 28, 4, l);
	if (phnum && !fits(phoff, phnum, want_ph, len))
		return bad(err, ET_CHECK_TRUNCATED, name, "truncated: the program headers (%llu at offset 0x%llx) extend past "
		           "the end of the file (%zu bytes)", (unsigned long long)phnum,
		           (unsigned long long)phoff, len);
	if (shoff && !fits(shoff, shnum, want_sh, len))
		return bad(err, ET_CHECK_TRUNCATED, name, "truncated: the section headers (%llu at offset 0x%llx) extend past "
		           "the end of the file (%zu bytes)", (unsigned long long)shnum,
		           (unsigned long long)shoff, len);
	return 0;
}

/* ---------------------------------------------------------- reading */

static void hexid(const unsigned char *d, size_t n, char *out, size_t cap)
{
	static const char hx[] = "0123456789abcdef";
	size_t k = 0;
	for (size_t i = 0; i < n && k + 2 < cap; i++) {
		out[k++] = hx[d[i] >> 4];
		out[k++] = hx[d[i] & 15];
	}
	out[k] = '\0';
}

static const char *type_name(unsigned t)
{
	switch (t) {
	case PT_NULL: return "NULL";
	case PT_LOAD: return "LOAD";
	case PT_DYNAMIC: return "DYNAMIC";
	case PT_INTERP: return "INTERP";
	case PT_NOTE: return "NOTE";
	case PT_PHDR: return "PHDR";
	case PT_TLS: return "TLS";
	case PT_GNU_EH_FRAME: return "GNU_EH_FRAME";
	case PT_GNU_STACK: return "GNU_STACK";
	case PT_GNU_RELRO: return "GNU_RELRO";
	default: return "segment";
	}
}

static int read_elf(Elf *e, const unsigned char *b, size_t len, const char *name, struct sink *err,
                    struct check_info *in)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh))
		return bad(err, ET_CHECK_CORRUPT, name, "corrupt ELF header: %s", elf_msg());
	in->type = eh.e_type;
	in->machine = eh.e_machine;
	if (eh.e_type == ET_REL)
		return bad(err, ET_CHECK_OBJECT, name, "a relocatable object file (.o): nothing in it is loaded as it "
		           "is; check the program or library linked from it");
	if (eh.e_type == ET_CORE)
		return bad(err, ET_CHECK_CORE, name, "a core dump, not a program or library");
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return bad(err, ET_CHECK_CORRUPT, name, "corrupt ELF header: unknown file type %u", eh.e_type);

	size_t phnum;
	if (elf_getphdrnum(e, &phnum) != 0)
		return bad(err, ET_CHECK_CORRUPT, name, "corrupt program header count: %s", elf_msg());
	if (phnum == 0)
		return bad(err, ET_CHECK_NOTHING_LOADED, name, "no program headers: nothing in it can be loaded");
	in->loads = calloc(phnum, sizeof *in->loads);
	if (!in->loads)
		return bad(err, ET_CHECK_NO_MEMORY, name, "out of memory");
	bool has_interp = false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph))
			return bad(err, ET_CHECK_CORRUPT, name, "corrupt program header %zu: %s", i, elf_msg());
		if (ph.p_type == PT_NULL)
			continue;
		if (ph.p_filesz && (ph.p_offset > len || ph.p_filesz > len - ph.p_offset))
			return bad(err, ET_CHECK_TRUNCATED, name, "truncated: segment %zu (%s, 0x%llx bytes at offset 0x%llx) "
			           "extends past the end of the file (%zu bytes)", i, type_name(ph.p_type),
			           (unsigned long long)ph.p_filesz, (unsigned long long)ph.p_offset, len);
		if (ph.p_type == PT_LOAD) {
			if (ph.p_filesz > ph.p_memsz)
				return bad(err, ET_CHECK_CORRUPT, name, "corrupt: LOAD segment %zu has more bytes in the file "
				           "(0x%llx) than in memory (0x%llx)", i,
				           (unsigned long long)ph.p_filesz, (unsigned long long)ph.p_memsz);
			if (ph.p_align > 1 && (ph.p_align & (ph.p_align - 1)))
				return bad(err, ET_CHECK_CORRUPT, name, "corrupt: LOAD segment %zu: alignment 0x%llx is not a "
				           "power of two", i, (unsigned long long)ph.p_align);
			if (ph.p_align > 1 && (ph.p_vaddr - ph.p_offset) % ph.p_align)
				return bad(err, ET_CHECK_CORRUPT, name, "corrupt: LOAD segment %zu: address 0x%llx and offset "
				           "0x%llx differ modulo its alignment 0x%llx (no loader maps that)",
				           i, (unsigned long long)ph.p_vaddr, (unsigned long long)ph.p_offset,
				           (unsigned long long)ph.p_align);
			if (ph.p_memsz > UINT64_MAX - ph.p_vaddr)
				return bad(err, ET_CHECK_CORRUPT, name, "corrupt: LOAD segment %zu wraps around the address "
				           "space", i);
			struct check_seg *s = &in->loads[in->nloads++];
			s->vaddr = ph.p_vaddr;
			s->off = ph.p_offset;
			s->filesz = ph.p_filesz;
			s->memsz = ph.p_memsz;
			s->align = ph.p_align;
			s->flags = ph.p_flags;
			if (ph.p_align > in->max_align)
				in->max_align = ph.p_align;
		} else if (ph.p_type == PT_INTERP && ph.p_filesz) {
			const char *s = (const char *)b + ph.p_offset;
			size_t n = strnlen(s, ph.p_filesz);
			if (n == ph.p_filesz)
				return bad(err, ET_CHECK_CORRUPT, name, "corrupt: the interpreter name (segment %zu) is not "
				           "terminated", i);
			snprintf(in->interp, sizeof in->interp, "%.*s", (int)n, s);
			has_interp = true;
			in->is_musl = strstr(in->interp, "ld-musl") != NULL;
		} else if (ph.p_type == PT_DYNAMIC && ph.p_filesz) {
			Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_DYN);
			if (!d)
				return bad(err, ET_CHECK_CORRUPT, name, "corrupt dynamic segment (%zu): %s", i, elf_msg());
			size_t ent = gelf_fsize(e, ELF_T_DYN, 1, EV_CURRENT);
			for (size_t k = 0; ent && k < d->d_size / ent; k++) {
				GElf_Dyn dyn;
				if (!gelf_getdyn(d, (int)k, &dyn) || dyn.d_tag == DT_NULL)
					break;
				if (dyn.d_tag == DT_TEXTREL ||
				    (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_TEXTREL)))
					in->textrel = true;
				if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
					in->pie = true;
			}
		}
	}
	if (eh.e_type == ET_DYN) {
		if (has_interp)
			in->pie = true;
		in->dso = !in->pie;
	}

	size_t shnum = 0, shstrndx = 0;
	if (elf_getshdrnum(e, &shnum) != 0)
		return bad(err, ET_CHECK_CORRUPT, name, "corrupt section header count: %s", elf_msg());
	if (shnum > 0 && elf_getshdrstrndx(e, &shstrndx) != 0)
		return bad(err, ET_CHECK_CORRUPT, name, "corrupt section name table index: %s", elf_msg());
	size_t idx = 0;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		idx++;
		if (!gelf_getshdr(scn, &sh))
			return bad(err, ET_CHECK_CORRUPT, name, "corrupt section header %zu: %s", idx, elf_msg());
		const char *sn = elf_strptr(e, shstrndx, sh.sh_name);
		if (sh.sh_type != SHT_NOBITS && sh.sh_size &&
		    (sh.sh_offset > len || sh.sh_size > len - sh.sh_offset))
			return bad(err, ET_CHECK_TRUNCATED, name, "truncated: section %zu (%s, 0x%llx bytes at offset 0x%llx) "
			           "extends past the end of the file (%zu bytes)", idx, sn ? sn : "?",
			           (unsigned long long)sh.sh_size, (unsigned long long)sh.sh_offset, len);
		if (sn && (!strcmp(sn, ".text.hot") || !strncmp(sn, ".text.hot.", 10))) {
			in->has_hot = true;
			in->hot_bytes += sh.sh_size;
		}
	}
	return 0;
}

/* ---------------------------------------------------------- analysis */

/* Eligible bytes when the object's base is `base` (mod H). */
static uint64_t eligible_at(const struct check_info *in, uint64_t base, uint64_t H)
{
	uint64_t total = 0;
	for (size_t i = 0; i < in->nloads; i++) {
		const struct check_seg *s = &in->loads[i];
		if (!(s->flags & PF_X) || !s->filesz)
			continue;
		if (s->vaddr > UINT64_MAX - base - s->filesz)
			continue;
		struct et_segment es = { .start = s->vaddr + base, .end = s->vaddr + base + s->filesz };
		total += (uint64_t)et_plan_windows(&es, 1, H, 0, NULL, 0) * H;
	}
	return total;
}

/* Over every base that is a multiple of `step` modulo H. */
static struct check_range eligible_range(const struct check_info *in, uint64_t step, uint64_t H)
{
	struct check_range r = { UINT64_MAX, 0 };
	if (step >= H || step == 0)
		step = H;
	for (uint64_t b = 0; b < H; b += step) {
		uint64_t e = eligible_at(in, b, H);
		if (e < r.min)
			r.min = e;
		if (e > r.max)
			r.max = e;
	}
	return r;
}


/* Is p[end-64 .. end) periodic with period q (and long enough to tell)? */
static bool periodic_tail(const unsigned char *p, uint64_t end, unsigned q)
{
	if (end < 64 + q)
		return false;
	for (uint64_t k = end - 64; k < end; k++)
		if (p[k] != p[k - q])
			return false;
	return true;
}

/*
 * The filler at the end of a segment's file bytes (already checked to lie
 * inside the file): what a linker writes where `. = ALIGN(...)` leaves a
 * gap in code.  That is zeros (aarch64, and the script's LONG(0)), int3
 * (lld on x86), or the longest NOPs repeated with one shorter NOP to end
 * (GNU ld on x86: 10-byte `cs nopw`, then `66 90`).  So: after up to 15
 * odd bytes at the very end, the longest suffix with a period of 1 to 16
 * bytes; 0 when there is no such run of at least 64 bytes.
 */
static uint64_t fill_tail(const struct check_info *in, const struct check_seg *s)
{
	const unsigned char *p = in->buf + s->off;
	const uint64_t n = s->filesz;
	for (unsigned r = 0; r < 16 && r < n; r++) {
		const uint64_t end = n - r;
		for (unsigned q = 1; q <= 16; q++) {
			if (!periodic_tail(p, end, q))
				continue;
			/* p[i] == p[i - q] for every i in [k, end): p[k - q .. end)
			 * repeats one q-byte unit. */
			uint64_t k = end - 64;
			while (k > q && p[k - 1] == p[k - 1 - q])
				k--;
			return n - (k - q);
		}
	}
	return 0;
}

/* The file bytes between the end of what comes before the segment in the
 * file (page-rounded, as any layout has it) and the segment's start. */
static uint64_t gap_before(const struct check_info *in, const struct check_seg *s, uint64_t P)
{
	uint64_t prev = 0;
	for (size_t k = 0; k < in->nloads; k++) {
		const struct check_seg *t = &in->loads[k];
		if (t != s && t->filesz && t->off < s->off && t->off + t->filesz > prev)
			prev = t->off + t->filesz;
	}
	prev = round_up(prev, P);
	return s->off > prev ? s->off - prev : 0;
}

/*
 * What linker-scripts/enormous.ld costs this object.  Its layout: each
 * executable segment starts on an H boundary in memory and in the file
 * (p_align >= H), ends on one, is all in the file (p_filesz == p_memsz),
 * and ends in at least 64 bytes of filler (the padding: see fill_tail()).
 * A file so laid out: the code is the segment without its filler; the file pays
 * the gap before the segment and the tail; memory, when the text is mapped
 * huge, the whole last window instead of the code's last base pages.  A
 * file not so laid out: what the script would add, the text moved to the
 * next H boundary in the file and padded to the next one after it.
 */
static void layout_cost(struct check_info *in, const struct et_check_opts *o)
{
	const uint64_t H = o->pmd_size, P = o->page_size;
	size_t nx = 0;
	bool padded = true;
	for (size_t i = 0; i < in->nloads; i++) {
		const struct check_seg *s = &in->loads[i];
		if (!(s->flags & PF_X)) {
			if (s->align >= H)
				in->other_align = true;
			continue;
		}
		if (!s->filesz)
			continue;
		nx++;
		if (s->vaddr % H || s->off % H || s->align < H || (s->vaddr + s->filesz) % H ||
		    s->filesz != s->memsz || !fill_tail(in, s))
			padded = false;
	}
	in->padded = nx && padded;
	for (size_t i = 0; i < in->nloads; i++) {
		const struct check_seg *s = &in->loads[i];
		if (!(s->flags & PF_X) || !s->filesz)
			continue;
		if (in->padded) {
			uint64_t z = fill_tail(in, s), code = s->filesz - z;
			in->code_bytes += code;
			in->layout_pad_bytes += z;
			in->layout_file_bytes += gap_before(in, s, P) + z;
			in->layout_mem_bytes += s->memsz - round_up(code, P);
		} else {
			uint64_t end = round_up(s->filesz, H);
			in->code_bytes += s->filesz;
			in->layout_pad_bytes += end - s->filesz;
			in->layout_file_bytes += (H - s->off % H) % H + (end - s->filesz);
			in->layout_mem_bytes += end - round_up(s->filesz, P);
		}
	}
}

static void analyse(struct check_info *in, const struct et_check_opts *o)
{
	const uint64_t H = o->pmd_size, P = o->page_size;
	for (size_t i = 0; i < in->nloads; i++) {
		const struct check_seg *s = &in->loads[i];
		if (!(s->flags & PF_X))
			continue;
		in->ntext++;
		in->text_bytes += s->memsz;
		in->file_text_bytes += s->filesz;
		if ((s->vaddr - s->off) % H == 0)
			in->ncongruent++;
	}
	/* Where each loader may put it, modulo H. */
	uint64_t align = in->max_align > P ? in->max_align : P;
	if (in->type == ET_EXEC) {
		in->glibc.min = in->glibc.max = eligible_at(in, 0, H);
		in->musl = in->glibc;
	} else if (in->pie) {
		in->glibc = eligible_range(in, align, H);
		in->musl = in->glibc;
	} else {
		in->glibc = eligible_range(in, align, H);
		in->musl = eligible_range(in, P, H);
	}
	in->aligned_bytes = eligible_at(in, 0, H);

	/* Head and tail of each text segment when loaded H-aligned, and what
	 * padding a tail would add. */
	in->pad_runtime = true;
	for (size_t i = 0; i < in->nloads; i++) {
		const struct check_seg *s = &in->loads[i];
		if (!(s->flags & PF_X) || !s->filesz)
			continue;
		uint64_t start = s->vaddr, end = s->vaddr + s->filesz;
		uint64_t first = start % H ? start + (H - start % H) : start;
		uint64_t last = end - end % H;
		uint64_t head, tail, tail_at;
		if (first < start || first >= end) {          /* no boundary inside */
			head = start % H ? s->filesz : 0;
			tail = start % H ? 0 : s->filesz;
			tail_at = start;
		} else if (last <= first) {
			head = first - start;
			tail = end - first;
			tail_at = first;
		} else {
			head = first - start;
			tail = end - last;
			tail_at = last;
		}
		in->head_bytes += head;
		in->tail_bytes += tail;
		if (head)
			in->need_align = true;
		if (tail) {
			in->need_pad = true;
			if (tail > o->pad_threshold) {
				in->pad_add_bytes += tail;
				in->pad_cost_bytes += H - tail;
				in->pad_windows++;
				/* Room after the tail up to the window's end? */
				for (size_t k = 0; k < in->nloads; k++) {
					const struct check_seg *t = &in->loads[k];
					if (k != i && t->memsz && t->vaddr < tail_at + H &&
					    t->vaddr + t->memsz > end)
						in->pad_runtime = false;
				}
			}
		}
	}
	if (in->type == ET_DYN && in->max_align < H && in->file_text_bytes)
		in->need_align = true;
	layout_cost(in, o);
}

/* ------------------------------------------------------------ entry */

/* Parse and analyse one image into *in (its loads to free by the caller,
 * also on failure); 0, or 1 after one line naming it. */
static int parse_image(const char *name, void *buf, size_t len, const struct et_check_opts *opts,
                       struct sink *err, struct check_info *in)
{
	memset(in, 0, sizeof *in);
	in->name = name;
	in->buf = buf;
	int rc = precheck(buf, len, name, err, in);
	if (rc)
		return rc;
	struct et_tool_elf x;
	if (et_tool_elf_memory(&x, buf, len) != 0)
		return bad(err, ET_CHECK_CORRUPT, name, "%s", x.why);   /* libelf refuses what precheck let by */
	rc = read_elf(x.e, buf, len, name, err, in);
	if (rc == 0) {
		/* every header and section checked: the build-id as everyone reads it */
		const unsigned char *id;
		size_t n = et_tool_elf_build_id(&x, &id);
		hexid(id, n, in->build_id, sizeof in->build_id);
	}
	et_tool_elf_close(&x);
	if (rc == 0)
		analyse(in, opts);
	return rc;
}

int et_check_image(const char *name, void *buf, size_t len, const struct et_check_opts *opts,
                   FILE *out, struct et_json *j, FILE *err)
{
	struct sink sk = { err, NULL };
	struct check_info in;
	int rc = parse_image(name, buf, len, opts, &sk, &in);
	if (rc == 0) {
		if (opts->json)
			et_check_print_json(&in, opts, j);
		else
			et_check_print_text(&in, opts, out);
	}
	free(in.loads);
	return rc;
}

/* The file read whole into memory of its own (libelf may convert data in
 * place; a copy, not a mapping, so that a file truncated or rewritten while
 * it is read is a short read said in one line, never a SIGBUS); NULL after
 * one line naming it.  Opened O_NONBLOCK: a FIFO (or a device) is refused
 * by its type, not waited on.  free() it. */
static void *map_file(const char *path, size_t *len, struct sink *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		bad(err, ET_CHECK_UNREADABLE, path, "%s", strerror(errno));
		return NULL;
	}
	struct stat st;
	const char *why = NULL;
	enum et_check_why code = ET_CHECK_OK;
	if (fstat(fd, &st) != 0)
		why = strerror(errno), code = ET_CHECK_UNREADABLE;
	else if (S_ISDIR(st.st_mode))
		why = "is a directory, not an ELF file", code = ET_CHECK_NOT_FILE;
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file", code = ET_CHECK_NOT_FILE;
	else if (st.st_size == 0)
		why = "empty file, not an ELF file", code = ET_CHECK_EMPTY;
	if (why) {
		close(fd);
		bad(err, code, path, "%s", why);
		return NULL;
	}
	*len = (size_t)st.st_size;
	char *m = malloc(*len);
	if (!m) {
		close(fd);
		bad(err, ET_CHECK_NO_MEMORY, path, "cannot read it: out of memory (%zu bytes)", *len);
		return NULL;
	}
	size_t got = 0;
	while (got < *len) {
		ssize_t n = pread(fd, m + got, *len - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = errno;
			close(fd);
			free(m);
			if (n == 0)
				bad(err, ET_CHECK_CHANGED, path, "changed while it was read (%zu of %zu bytes): check it again", got, *len);
			else
				bad(err, ET_CHECK_UNREADABLE, path, "cannot read it: %s", strerror(e));
			return NULL;
		}
		got += (size_t)n;
	}
	close(fd);
	return m;
}

int et_check_summary(const char *path, const struct et_check_opts *opts,
                     struct et_check_summary *out, struct et_check_failure *fail)
{
	struct et_check_failure ignored;
	struct sink sk = { NULL, fail ? fail : &ignored };
	sk.fail->why = ET_CHECK_OK;
	sk.fail->words[0] = '\0';
	memset(out, 0, sizeof *out);
	size_t len;
	void *m = map_file(path, &len, &sk);
	if (!m)
		return 1;
	struct check_info in;
	int rc = parse_image(path, m, len, opts, &sk, &in);
	if (rc == 0) {
		out->text_bytes = in.file_text_bytes;
		out->eligible_min = in.glibc.min;
		out->eligible_max = in.glibc.max;
		out->eligible_aligned = in.aligned_bytes;
		out->congruent = in.ntext && in.ncongruent == in.ntext;
		out->file_backed = out->congruent && aligned_load(&in, opts);
		out->textrel = in.textrel;
		out->dso = in.dso;
		out->pie = in.pie;
		out->pad_windows = in.pad_add_bytes && in.pad_runtime ? in.pad_windows : 0;
		out->pad_bytes = in.pad_add_bytes && in.pad_runtime ? in.pad_add_bytes : 0;
		out->machine = in.machine;
		out->cls = in.cls;
		snprintf(out->interp, sizeof out->interp, "%s", in.interp);
	}
	free(in.loads);
	free(m);
	return rc;
}

int et_check_path(const char *path, const struct et_check_opts *opts, FILE *out,
                  struct et_json *j, FILE *err)
{
	struct sink sk = { err, NULL };
	size_t len;
	void *m = map_file(path, &len, &sk);
	if (!m)
		return 1;
	int rc = et_check_image(path, m, len, opts, out, j, err);
	free(m);
	return rc;
}
