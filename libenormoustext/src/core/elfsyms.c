/*
 * core/elfsyms.c — the functions of an ELF file in given address ranges,
 * as perf-map lines: for the perf map of moved text (ENORMOUSTEXT_PERFMAP=1,
 * runtime/perfmap.c) and the command's `perfmap`.
 *
 * An anonymous copy has no file name in /proc/PID/maps, so perf cannot
 * find the symbols of samples in it.  perf reads /tmp/perf-PID.map for such
 * ranges ("START SIZE name", hex, one symbol a line: the format JIT
 * compilers write).  This writes, for every moved window, the functions of
 * the object that lie in it, from the object's own symbol tables (.symtab
 * when the file has one, else .dynsym), read from the file in pieces — no
 * libelf, no malloc, and never the file mapped (a file cut short under a
 * mapping would kill the program with SIGBUS).  The map goes through
 * outfile.c: beside and renamed in, never through a link or into a FIFO
 * someone put at its name in /tmp.
 *
 * Owns: reading symbol tables from a file, without libelf or malloc.
 * May call: util (scratch memory), outfile (the lines' destination).
 * Never: maps the file; reads anything but a regular file.
 */
#include "core/elfsyms.h"

#include "core/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct out {
	struct et_out *o;
	size_t n;
	char buf[4096];
};

static void out_flush(struct out *o)
{
	if (o->n)
		et_out_write(o->o, o->buf, o->n);
	o->n = 0;
}

static void out_line(struct out *o, uint64_t start, uint64_t size, const char *name, size_t name_max)
{
	char line[600];
	size_t len = strnlen(name, name_max);
	if (len > 500)
		len = 500;
	int k = snprintf(line, sizeof line, "%llx %llx %.*s\n", (unsigned long long)start,
	                 (unsigned long long)size, (int)len, name);
	if (k <= 0)
		return;
	if (o->n + (size_t)k > sizeof o->buf)
		out_flush(o);
	memcpy(o->buf + o->n, line, (size_t)k);
	o->n += (size_t)k;
}

/* Does [a, a + len) overlap one of the ranges? */
static bool in_ranges(const uint64_t *ranges, size_t n, uint64_t a, uint64_t len)
{
	for (size_t i = 0; i < n; i++)
		if (a < ranges[2 * i + 1] && a + len > ranges[2 * i])
			return true;
	return false;
}

/* The file is read in pieces into one scratch mapping, never mapped itself:
 * a file cut short while it is read gives short reads, not SIGBUS. */
#define SYM_BUF (64u << 10)
#define STR_BUF (64u << 10)
#define NAME_MAX_OUT 500

struct strtab {
	int fd;
	uint64_t off, size;       /* of the string table in the file */
	char *buf;
	uint64_t lo, len;         /* the part of it in buf */
};

/* The name at `at` in the string table, and how many bytes of it are held
 * (at least NAME_MAX_OUT + 1 or up to its end), or NULL. */
static const char *str_at(struct strtab *t, uint64_t at, size_t *max)
{
	if (at >= t->size)
		return NULL;
	bool held = at >= t->lo && at < t->lo + t->len;
	if (held && t->lo + t->len - at <= NAME_MAX_OUT && t->lo + t->len < t->size &&
	    !memchr(t->buf + (at - t->lo), '\0', t->lo + t->len - at))
		held = false;   /* it may go on past what is held */
	if (!held) {
		uint64_t n = t->size - at < STR_BUF ? t->size - at : STR_BUF;
		ssize_t r;
		do
			r = pread(t->fd, t->buf, (size_t)n, (off_t)(t->off + at));
		while (r < 0 && errno == EINTR);
		if (r <= 0) {
			t->len = 0;
			return NULL;
		}
		t->lo = at;
		t->len = (uint64_t)r;
	}
	*max = (size_t)(t->lo + t->len - at);
	return t->buf + (at - t->lo);
}

size_t et_perfmap_symbols(struct et_out *dst, const char *path, uint64_t base, const uint64_t *ranges,
                          size_t nranges)
{
	if (!path[0] || path[0] == '[' || nranges == 0)
		return 0;
	/* O_NONBLOCK: a FIFO at the path must not hold the open up */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	size_t count = 0;
	char *mem = NULL;
	ElfW(Ehdr) eh;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof eh ||
	    !et_pread_all(fd, &eh, sizeof eh, 0))
		goto done;
	uint64_t len = (uint64_t)st.st_size;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh.e_shoff == 0 || eh.e_shoff > len || eh.e_shnum > (len - eh.e_shoff) / sizeof(ElfW(Shdr)))
		goto done;
	mem = et_scratch_alloc(SYM_BUF + STR_BUF);
	if (!mem)
		goto done;
	/* .symtab when there is one (all functions), else .dynsym (exported). */
	ElfW(Shdr) sym = { .sh_type = SHT_NULL };
	const size_t per = SYM_BUF / sizeof(ElfW(Shdr));
	for (unsigned i = 0; i < eh.e_shnum && sym.sh_type != SHT_SYMTAB; i += (unsigned)per) {
		size_t k = eh.e_shnum - i < per ? eh.e_shnum - i : per;
		if (!et_pread_all(fd, mem, k * sizeof(ElfW(Shdr)), eh.e_shoff + (uint64_t)i * sizeof(ElfW(Shdr))))
			goto done;
		const ElfW(Shdr) *sh = (const void *)mem;
		for (size_t j = 0; j < k; j++)
			if (sh[j].sh_type == SHT_SYMTAB || (sh[j].sh_type == SHT_DYNSYM && sym.sh_type == SHT_NULL)) {
				sym = sh[j];
				if (sym.sh_type == SHT_SYMTAB)
					break;
			}
	}
	ElfW(Shdr) str;
	if (sym.sh_type == SHT_NULL || sym.sh_link >= eh.e_shnum || sym.sh_entsize != sizeof(ElfW(Sym)) ||
	    sym.sh_offset > len || sym.sh_size > len - sym.sh_offset ||
	    !et_pread_all(fd, &str, sizeof str, eh.e_shoff + (uint64_t)sym.sh_link * sizeof(ElfW(Shdr))) ||
	    str.sh_offset > len || str.sh_size > len - str.sh_offset)
		goto done;
	struct strtab names = { fd, str.sh_offset, str.sh_size, mem + SYM_BUF, 0, 0 };
	struct out out = { .o = dst, .n = 0 };
	const size_t nsym = sym.sh_size / sizeof(ElfW(Sym)), sper = SYM_BUF / sizeof(ElfW(Sym));
	for (size_t i = 0; i < nsym; i += sper) {
		size_t k = nsym - i < sper ? nsym - i : sper;
		ElfW(Sym) *s = (void *)mem;
		if (!et_pread_all(fd, s, k * sizeof *s, sym.sh_offset + (uint64_t)i * sizeof *s))
			break;
		for (size_t j = 0; j < k; j++) {
			if (ELF64_ST_TYPE(s[j].st_info) != STT_FUNC || s[j].st_shndx == SHN_UNDEF)
				continue;
			uint64_t a = base + s[j].st_value, size = s[j].st_size ? s[j].st_size : 1;
			if (!in_ranges(ranges, nranges, a, size))
				continue;
			size_t max = 0;
			const char *name = str_at(&names, s[j].st_name, &max);
			if (!name)
				continue;
			out_line(&out, a, size, name, max);
			count++;
		}
	}
	out_flush(&out);
done:
	et_scratch_free(mem, SYM_BUF + STR_BUF);
	close(fd);
	return count;
}
