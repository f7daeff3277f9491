/*
 * faultrun_cfi.c — the return address of a function waiting in a system
 * call, from the DWARF call-frame information of its ELF file.
 *
 * faultrun must tell who called a libc system-call wrapper.  The wrapper's
 * return address is not simply the first code pointer on the stack: a
 * variadic wrapper (mremap, open, prctl) reserves a register save area it
 * only partly writes, so stale return addresses of earlier calls sit below
 * the real one.  .eh_frame says exactly where it is: at the code's address,
 * CFA = %rsp + N, and the return address is at CFA - 8 (x86-64).
 *
 * Only what that needs: PT_GNU_EH_FRAME's sorted table, one FDE and its
 * CIE, and the CFA rule (register + offset, with remember/restore state).
 * Files are mapped read-only and kept (a run sees one libc).  Never writes
 * to a file; anything it does not understand is "no rule".
 */
#define _GNU_SOURCE
#include "faultrun_cfi.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct image {
	char path[512];
	const unsigned char *p;
	size_t len;
	bool bad;
};

#define MAX_IMAGES 8
static struct image images[MAX_IMAGES];

static const struct image *image_of(const char *path)
{
	struct image *free_slot = NULL;

	for (int i = 0; i < MAX_IMAGES; i++) {
		if (images[i].path[0] && !strcmp(images[i].path, path))
			return images[i].bad ? NULL : &images[i];
		if (!images[i].path[0] && !free_slot)
			free_slot = &images[i];
	}
	if (!free_slot || strlen(path) >= sizeof free_slot->path)
		return NULL;
	struct image *im = free_slot;
	strcpy(im->path, path);
	im->bad = true;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(Elf64_Ehdr)) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			im->p = m;
			im->len = (size_t)st.st_size;
			const Elf64_Ehdr *eh = m;
			im->bad = memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
				  eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > im->len;
		}
	}
	close(fd);
	return im->bad ? NULL : im;
}

static const Elf64_Phdr *phdrs(const struct image *im, int *n)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->p;
	*n = eh->e_phnum;
	return (const Elf64_Phdr *)(im->p + eh->e_phoff);
}

/* file pointer of virtual address V, with at least NEED bytes after it */
static const unsigned char *at_vaddr(const struct image *im, uint64_t v, size_t need)
{
	int n;
	const Elf64_Phdr *ph = phdrs(im, &n);

	for (int i = 0; i < n; i++) {
		if (ph[i].p_type != PT_LOAD || v < ph[i].p_vaddr || v + need > ph[i].p_vaddr + ph[i].p_filesz)
			continue;
		uint64_t off = ph[i].p_offset + (v - ph[i].p_vaddr);
		if (off + need > im->len)
			return NULL;
		return im->p + off;
	}
	return NULL;
}

bool fr_cfi_vaddr_of_offset(const char *path, uint64_t off, uint64_t *vaddr)
{
	const struct image *im = image_of(path);
	int n;

	if (!im)
		return false;
	const Elf64_Phdr *ph = phdrs(im, &n);
	for (int i = 0; i < n; i++) {
		uint64_t lo = ph[i].p_offset & ~(uint64_t)4095;
		if (ph[i].p_type == PT_LOAD && off >= lo && off < ph[i].p_offset + ph[i].p_filesz) {
			*vaddr = (ph[i].p_vaddr & ~(uint64_t)4095) + (off - lo);
			return true;
		}
	}
	return false;
}

/* ---- DWARF readers (bounded by END; any overrun sets *ok = false) ------------- */

struct rd {
	const unsigned char *p, *end;
	uint64_t vaddr;         /* virtual address of p, for pc-relative values */
	bool ok;
};

static uint64_t rd_u(struct rd *r, int n)
{
	uint64_t v = 0;

	if (r->end - r->p < n) {
		r->ok = false;
		return 0;
	}
	for (int i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	r->vaddr += (uint64_t)n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	int shift = 0;

	while (r->p < r->end) {
		unsigned char b = *r->p++;
		r->vaddr++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->ok = false;
	return 0;
}

static int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	int shift = 0;
	unsigned char b = 0;

	while (r->p < r->end) {
		b = *r->p++;
		r->vaddr++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	r->ok = false;
	return 0;
}

/* An encoded pointer (DW_EH_PE_*); DATAREL is the base for datarel ones. */
static uint64_t rd_ptr(struct rd *r, unsigned char enc, uint64_t datarel)
{
	uint64_t field = r->vaddr, v;

	if (enc == 0xff)        /* omit */
		return 0;
	switch (enc & 0x0f) {
	case 0x00: v = rd_u(r, 8); break;                       /* absptr */
	case 0x01: v = rd_uleb(r); break;
	case 0x02: v = rd_u(r, 2); break;
	case 0x03: v = rd_u(r, 4); break;
	case 0x04: v = rd_u(r, 8); break;
	case 0x09: v = (uint64_t)rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_u(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_u(r, 4); break;
	case 0x0c: v = rd_u(r, 8); break;
	default: r->ok = false; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += field; break;                           /* pcrel */
	case 0x30: v += datarel; break;                         /* datarel */
	default: r->ok = false; return 0;
	}
	return v;
}

/* ---- the CFA at PC --------------------------------------------------------------- */

struct cfa {
	uint64_t reg;
	int64_t off;
	bool expr;
};

/* Run CFA instructions [p, end) from LOC until the row for PC. */
static bool run_cfa(struct rd *r, uint64_t *loc, uint64_t pc, uint64_t code_align, int64_t data_align,
		    unsigned char fde_enc, struct cfa *c, struct cfa *initial)
{
	struct cfa stack[16];
	int depth = 0;

	while (r->ok && r->p < r->end) {
		unsigned char op = (unsigned char)rd_u(r, 1), low = op & 0x3f;
		uint64_t delta = 0;
		bool advance = false;

		switch (op & 0xc0) {
		case 0x40: delta = low * code_align; advance = true; break;
		case 0x80: rd_uleb(r); continue;                        /* offset */
		case 0xc0: continue;                                    /* restore */
		default: break;
		}
		if (!advance) {
			switch (op) {
			case 0x00: break;
			case 0x01: {
				uint64_t nl = rd_ptr(r, fde_enc, 0);
				if (nl > pc)
					return r->ok;
				*loc = nl;
				break;
			}
			case 0x02: delta = rd_u(r, 1) * code_align; advance = true; break;
			case 0x03: delta = rd_u(r, 2) * code_align; advance = true; break;
			case 0x04: delta = rd_u(r, 4) * code_align; advance = true; break;
			case 0x05: rd_uleb(r); rd_uleb(r); break;
			case 0x06: case 0x07: case 0x08: rd_uleb(r); break;
			case 0x09: rd_uleb(r); rd_uleb(r); break;
			case 0x0a:
				if (depth == 16)
					return false;
				stack[depth++] = *c;
				break;
			case 0x0b:
				if (depth == 0)
					return false;
				*c = stack[--depth];
				break;
			case 0x0c: c->reg = rd_uleb(r); c->off = (int64_t)rd_uleb(r); c->expr = false; break;
			case 0x0d: c->reg = rd_uleb(r); c->expr = false; break;
			case 0x0e: c->off = (int64_t)rd_uleb(r); break;
			case 0x0f: {
				uint64_t n = rd_uleb(r);
				if ((uint64_t)(r->end - r->p) < n)
					return false;
				r->p += n;
				r->vaddr += n;
				c->expr = true;
				break;
			}
			case 0x10: case 0x16: {
				rd_uleb(r);
				uint64_t n = rd_uleb(r);
				if ((uint64_t)(r->end - r->p) < n)
					return false;
				r->p += n;
				r->vaddr += n;
				break;
			}
			case 0x11: case 0x15: rd_uleb(r); rd_sleb(r); break;
			case 0x12: c->reg = rd_uleb(r); c->off = rd_sleb(r) * data_align; c->expr = false; break;
			case 0x13: c->off = rd_sleb(r) * data_align; break;
			case 0x14: rd_uleb(r); rd_uleb(r); break;
			case 0x2e: rd_uleb(r); break;
			case 0x2f: rd_uleb(r); rd_uleb(r); break;
			default: return false;
			}
		}
		if (advance) {
			if (*loc + delta > pc)
				return r->ok;
			*loc += delta;
		}
	}
	(void)initial;
	return r->ok;
}

bool fr_cfi_ra_offset(const char *path, uint64_t pc, int64_t *ra_off)
{
#if defined(__x86_64__)
	const struct image *im = image_of(path);
	int n;

	if (!im)
		return false;
	const Elf64_Phdr *ph = phdrs(im, &n), *eh = NULL;
	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			eh = &ph[i];
	if (!eh || eh->p_offset + eh->p_filesz > im->len || eh->p_filesz < 12)
		return false;
	uint64_t hdr_v = eh->p_vaddr;
	struct rd r = { im->p + eh->p_offset, im->p + eh->p_offset + eh->p_filesz, hdr_v, true };
	unsigned char ver = (unsigned char)rd_u(&r, 1), ptr_enc = (unsigned char)rd_u(&r, 1),
		      cnt_enc = (unsigned char)rd_u(&r, 1), tab_enc = (unsigned char)rd_u(&r, 1);
	if (ver != 1 || tab_enc != 0x3b)        /* datarel sdata4: what every linker writes */
		return false;
	rd_ptr(&r, ptr_enc, hdr_v);
	uint64_t count = rd_ptr(&r, cnt_enc, hdr_v);
	if (!r.ok || count == 0 || (uint64_t)(r.end - r.p) < count * 8)
		return false;
	const unsigned char *tab = r.p;
	/* the last entry whose initial location <= pc */
	uint64_t lo = 0, hi = count;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		int32_t loc;
		memcpy(&loc, tab + mid * 8, 4);
		if (hdr_v + (uint64_t)(int64_t)loc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	int32_t floc, fde_rel;
	memcpy(&floc, tab + lo * 8, 4);
	memcpy(&fde_rel, tab + lo * 8 + 4, 4);
	if (hdr_v + (uint64_t)(int64_t)floc > pc)
		return false;
	uint64_t fde_v = hdr_v + (uint64_t)(int64_t)fde_rel;

	/* the FDE */
	const unsigned char *fp = at_vaddr(im, fde_v, 8);
	if (!fp)
		return false;
	uint32_t len32;
	memcpy(&len32, fp, 4);
	if (len32 == 0 || len32 == 0xffffffffu)
		return false;
	const unsigned char *fde_end = fp + 4 + len32;
	if (!at_vaddr(im, fde_v, 4 + (size_t)len32))
		return false;
	uint32_t cie_ptr;
	memcpy(&cie_ptr, fp + 4, 4);
	uint64_t cie_v = fde_v + 4 - cie_ptr;

	/* its CIE */
	const unsigned char *cp = at_vaddr(im, cie_v, 8);
	if (!cp)
		return false;
	uint32_t clen;
	memcpy(&clen, cp, 4);
	if (clen == 0 || clen == 0xffffffffu || !at_vaddr(im, cie_v, 4 + (size_t)clen))
		return false;
	struct rd c = { cp + 8, cp + 4 + clen, cie_v + 8, true };
	unsigned char cver = (unsigned char)rd_u(&c, 1);
	const char *aug = (const char *)c.p;
	size_t auglen = strnlen(aug, (size_t)(c.end - c.p));
	if (auglen == (size_t)(c.end - c.p))
		return false;
	c.p += auglen + 1;
	c.vaddr += auglen + 1;
	if (strstr(aug, "eh"))
		rd_u(&c, 8);
	uint64_t code_align = rd_uleb(&c);
	int64_t data_align = rd_sleb(&c);
	if (cver == 1)
		rd_u(&c, 1);
	else
		rd_uleb(&c);
	unsigned char fde_enc = 0;
	bool has_z = aug[0] == 'z';
	if (has_z) {
		uint64_t alen = rd_uleb(&c);
		const unsigned char *aend = c.p + alen;
		for (const char *a = aug + 1; *a && c.ok; a++) {
			if (*a == 'R')
				fde_enc = (unsigned char)rd_u(&c, 1);
			else if (*a == 'L')
				rd_u(&c, 1);
			else if (*a == 'P') {
				unsigned char penc = (unsigned char)rd_u(&c, 1);
				rd_ptr(&c, (unsigned char)(penc & 0x7f), 0);
			} else if (*a == 'S' || *a == 'B')
				;
			else
				return false;
		}
		if (!c.ok || aend > c.end)
			return false;
		c.vaddr += (uint64_t)(aend - c.p);
		c.p = aend;
	}
	if (!c.ok)
		return false;

	struct rd f = { fp + 8, fde_end, fde_v + 8, true };
	uint64_t pc_begin = rd_ptr(&f, fde_enc, 0);
	uint64_t pc_range = rd_ptr(&f, (unsigned char)(fde_enc & 0x0f), 0);
	if (!f.ok || pc < pc_begin || pc >= pc_begin + pc_range)
		return false;
	if (has_z) {
		uint64_t alen = rd_uleb(&f);
		if (!f.ok || (uint64_t)(f.end - f.p) < alen)
			return false;
		f.p += alen;
		f.vaddr += alen;
	}

	struct cfa cfa = { 7, 8, false }, init;
	uint64_t loc = pc_begin;
	if (!run_cfa(&c, &loc, pc, code_align, data_align, fde_enc, &cfa, NULL))
		return false;
	init = cfa;
	loc = pc_begin;
	if (!run_cfa(&f, &loc, pc, code_align, data_align, fde_enc, &cfa, &init))
		return false;
	if (cfa.expr || cfa.reg != 7)           /* DWARF register 7 is %rsp */
		return false;
	*ra_off = cfa.off - 8;
	return true;
#else
	(void)path;
	(void)pc;
	(void)ra_off;
	return false;
#endif
}
