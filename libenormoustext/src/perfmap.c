/*
 * perfmap.c — a perf map for moved text (ENORMOUSTEXT_PERFMAP=1).
 *
 * An anonymous copy has no file name in /proc/PID/maps, so perf cannot
 * find the symbols of samples in it.  perf reads /tmp/perf-PID.map for such
 * ranges ("START SIZE name", hex, one symbol a line: the format JIT
 * compilers write).  This writes, for every moved window, the functions of
 * the object that lie in it, from the object's own symbol tables (.symtab
 * when the file has one, else .dynsym), read from the file mapped
 * read-only — no libelf, no malloc.
 */
#include "internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct out {
	int fd;
	size_t n;
	char buf[4096];
};

static void out_flush(struct out *o)
{
	size_t off = 0;
	while (off < o->n) {
		ssize_t w = write(o->fd, o->buf + off, o->n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
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

size_t et_perfmap_symbols(int out_fd, const char *path, uint64_t base, const uint64_t *ranges,
                          size_t nranges)
{
	struct out out = { .fd = out_fd, .n = 0 };
	if (!path[0] || path[0] == '[' || nranges == 0)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	size_t count = 0;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
		close(fd);
		return 0;
	}
	size_t len = (size_t)st.st_size;
	const unsigned char *f = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return 0;
	const ElfW(Ehdr) *eh = (const void *)f;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh->e_shoff == 0 || eh->e_shoff > len || eh->e_shnum > (len - eh->e_shoff) / sizeof(ElfW(Shdr)))
		goto done;
	const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
	/* .symtab when there is one (all functions), else .dynsym (exported). */
	const ElfW(Shdr) *sym = NULL;
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && !sym))
			sym = &sh[i];
	if (!sym || sym->sh_link >= eh->e_shnum || sym->sh_entsize != sizeof(ElfW(Sym)) ||
	    sym->sh_offset > len || sym->sh_size > len - sym->sh_offset)
		goto done;
	const ElfW(Shdr) *str = &sh[sym->sh_link];
	if (str->sh_offset > len || str->sh_size > len - str->sh_offset)
		goto done;
	const ElfW(Sym) *s = (const void *)(f + sym->sh_offset);
	size_t nsym = sym->sh_size / sizeof *s;
	const char *names = (const char *)(f + str->sh_offset);
	for (size_t i = 0; i < nsym; i++) {
		if (ELF64_ST_TYPE(s[i].st_info) != STT_FUNC || s[i].st_shndx == SHN_UNDEF ||
		    s[i].st_name >= str->sh_size)
			continue;
		uint64_t a = base + s[i].st_value, size = s[i].st_size ? s[i].st_size : 1;
		if (!in_ranges(ranges, nranges, a, size))
			continue;
		out_line(&out, a, size, names + s[i].st_name,
		         str->sh_size - s[i].st_name);
		count++;
	}
	out_flush(&out);
done:
	munmap((void *)f, len);
	return count;
}

int et_perfmap_write(const struct et_run *run)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
	struct out out = { .n = 0 };   /* only its fd: et_perfmap_symbols buffers */
	out.fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (out.fd < 0)
		return -errno;
	size_t total = 0;
	const uint64_t H = run->si.pmd_size;
	for (size_t i = 0; i < run->nobjs; i++) {
		const struct et_object *o = &run->objs[i];
		if (!o->remapped_bytes)
			continue;
		/* The moved windows, neighbours merged, in chunks of 32 ranges. */
		uint64_t ranges[64];
		size_t n = 0;
		for (uint32_t k = 0; k < o->nwindows; k++) {
			const struct et_window *w = &run->wins[o->first_window + k];
			if (!w->remapped)
				continue;
			if (n && ranges[2 * n - 1] == w->addr) {
				ranges[2 * n - 1] = w->addr + H;
				continue;
			}
			if (n == 32) {
				total += et_perfmap_symbols(out.fd, o->path, o->base, ranges, n);
				n = 0;
			}
			ranges[2 * n] = w->addr;
			ranges[2 * n + 1] = w->addr + H;
			n++;
		}
		total += et_perfmap_symbols(out.fd, o->path, o->base, ranges, n);
	}
	close(out.fd);
	et_log(2, "perf map %s: %zu functions in moved text", path, total);
	return (int)total;
}
