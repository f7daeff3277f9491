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

/* Is [a, a + size) inside one of the object's moved windows? */
static bool in_moved_window(const struct et_run *run, size_t first, size_t n, uint64_t a)
{
	const uint64_t H = run->si.pmd_size;
	for (size_t j = first; j < first + n; j++) {
		const struct et_window *w = &run->wins[j];
		if (w->remapped && a >= w->addr && a < w->addr + H)
			return true;
	}
	return false;
}

/* One object's functions that lie in its moved windows.  Returns how many. */
static size_t write_object(const struct et_run *run, const struct et_object *o, struct out *out)
{
	if (!o->path[0] || o->path[0] == '[')
		return 0;
	int fd = open(o->path, O_RDONLY | O_CLOEXEC);
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
		uint64_t a = o->base + s[i].st_value;
		if (!in_moved_window(run, o->first_window, o->nwindows, a))
			continue;
		out_line(out, a, s[i].st_size ? s[i].st_size : 1, names + s[i].st_name,
		         str->sh_size - s[i].st_name);
		count++;
	}
done:
	munmap((void *)f, len);
	return count;
}

int et_perfmap_write(const struct et_run *run)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
	struct out out = { .n = 0 };
	out.fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (out.fd < 0)
		return -errno;
	size_t total = 0;
	for (size_t i = 0; i < run->nobjs; i++)
		if (run->objs[i].remapped_bytes)
			total += write_object(run, &run->objs[i], &out);
	out_flush(&out);
	close(out.fd);
	et_log(2, "perf map %s: %zu functions in moved text", path, total);
	return (int)total;
}
