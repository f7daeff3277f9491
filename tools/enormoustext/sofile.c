/*
 * tools/enormoustext/sofile.c — is a shared object on disk whole.
 *
 * A library the loader maps through /etc/ld.so.preload is mapped into
 * every dynamically linked program before any code of it runs: when the
 * file is shorter than its headers say (a `cp` over it cut short, a full
 * disk), the loader's first touch of a page past the end is a SIGBUS, in
 * every program, and nothing of the library's can prevent it
 * (docs/hosts.md).  So the file's own headers are read here, raw (no
 * libelf: nothing of the file is trusted before its sizes are checked),
 * and every byte the loader or a reader needs must lie within the file.
 *
 * Owns: the whole-file check of a shared object (et_tool_so_check), for
 * `enable` (before it names the library) and `status` (the libraries
 * /etc/ld.so.preload names).
 * May call: core (util: et_pread_all), libc.
 * Never: maps the file (a page past the end would fault here too); reads
 * more than the headers; says anything itself (the caller names the file).
 */
#include "sofile.h"

#include "core/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file's bytes must reach: the part, and the offset it ends at. */
struct need {
	const char *what;
	uint64_t end;
	bool overflow;          /* offset + size past 2^64: corrupt */
};

static void need_of(struct need *n, const char *what, uint64_t off, uint64_t count, uint64_t size)
{
	uint64_t bytes, end;
	if (__builtin_mul_overflow(count, size, &bytes) || __builtin_add_overflow(off, bytes, &end)) {
		n->what = what;
		n->overflow = true;
		return;
	}
	if (!n->what || end > n->end) {
		n->what = what;
		n->end = end;
	}
}

/* The header fields both classes have, widened. */
struct ehdr {
	unsigned char cls, data;
	unsigned type, machine;
	uint64_t phoff, shoff;
	unsigned phentsize, phnum, shentsize, shnum, ehsize;
};

static void widen(const unsigned char *raw, struct ehdr *h)
{
	h->cls = raw[EI_CLASS];
	h->data = raw[EI_DATA];
	if (h->cls == ELFCLASS64) {
		Elf64_Ehdr e;
		memcpy(&e, raw, sizeof e);
		*h = (struct ehdr){ h->cls, h->data, e.e_type, e.e_machine, e.e_phoff, e.e_shoff,
		                    e.e_phentsize, e.e_phnum, e.e_shentsize, e.e_shnum, sizeof e };
	} else {
		Elf32_Ehdr e;
		memcpy(&e, raw, sizeof e);
		*h = (struct ehdr){ h->cls, h->data, e.e_type, e.e_machine, e.e_phoff, e.e_shoff,
		                    e.e_phentsize, e.e_phnum, e.e_shentsize, e.e_shnum, sizeof e };
	}
}

/* This host's class, byte order and machine: those of this command's own
 * file (the loader's list is read by programs built as it is). */
static bool host_header(struct ehdr *h)
{
	unsigned char raw[sizeof(Elf64_Ehdr)] = { 0 };
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = et_pread_all(fd, raw, EI_NIDENT, 0) && !memcmp(raw, ELFMAG, SELFMAG) &&
	          (raw[EI_CLASS] == ELFCLASS32 || raw[EI_CLASS] == ELFCLASS64) &&
	          et_pread_all(fd, raw, raw[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr), 0);
	close(fd);
	if (ok)
		widen(raw, h);
	return ok;
}

static const char *type_word(unsigned type)
{
	switch (type) {
	case ET_EXEC: return "an executable";
	case ET_REL: return "an object file, not linked";
	case ET_CORE: return "a core dump";
	default: return "of no type the loader maps";
	}
}

/* The PT_LOADs' end, from the program headers (already within the file). */
static int loads_end(int fd, const struct ehdr *h, struct need *n, char *why, size_t cap)
{
	unsigned loads = 0;
	for (unsigned i = 0; i < h->phnum; i++) {
		uint64_t off = h->phoff + (uint64_t)i * h->phentsize, p_offset, p_filesz;
		uint32_t type;
		if (h->cls == ELFCLASS64) {
			Elf64_Phdr p;
			if (!et_pread_all(fd, &p, sizeof p, off))
				goto unreadable;
			type = p.p_type, p_offset = p.p_offset, p_filesz = p.p_filesz;
		} else {
			Elf32_Phdr p;
			if (!et_pread_all(fd, &p, sizeof p, off))
				goto unreadable;
			type = p.p_type, p_offset = p.p_offset, p_filesz = p.p_filesz;
		}
		if (type != PT_LOAD)
			continue;
		loads++;
		need_of(n, "loadable segments", p_offset, 1, p_filesz);
	}
	if (!loads) {
		snprintf(why, cap, "no loadable segment: nothing the loader could map");
		return -1;
	}
	return 0;
unreadable:
	snprintf(why, cap, "its program headers cannot be read: %s", errno ? strerror(errno) : "end of file");
	return -1;
}

/* The header checked, then each part's end against the size. */
static int check_fd(int fd, char *why, size_t cap)
{
	struct stat st;
	if (fstat(fd, &st) != 0) {
		snprintf(why, cap, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, cap, "not a regular file");
		return -1;
	}
	uint64_t size = (uint64_t)st.st_size;
	unsigned char raw[sizeof(Elf64_Ehdr)] = { 0 };
	size_t head = size < sizeof raw ? (size_t)size : sizeof raw;
	if (!et_pread_all(fd, raw, head, 0)) {
		snprintf(why, cap, "cannot be read: %s", errno ? strerror(errno) : "end of file");
		return -1;
	}
	if (size < SELFMAG || memcmp(raw, ELFMAG, SELFMAG) != 0) {
		snprintf(why, cap, size ? "not an ELF file" : "empty (0 bytes): not an ELF file");
		return -1;
	}
	unsigned char cls = size > EI_CLASS ? raw[EI_CLASS] : 0;
	size_t ehsize = cls == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (size < ehsize) {
		snprintf(why, cap, "ends at %llu bytes, its ELF header needs %zu", (unsigned long long)size, ehsize);
		return -1;
	}
	if (cls != ELFCLASS32 && cls != ELFCLASS64) {
		snprintf(why, cap, "corrupt ELF header (class %u)", cls);
		return -1;
	}
	struct ehdr h, host;
	widen(raw, &h);
	if (host_header(&host) && (h.cls != host.cls || h.data != host.data || h.machine != host.machine)) {
		snprintf(why, cap, "built for another architecture (%s-bit, %s-endian, machine %u) than this "
		         "system's (%s-bit, %s-endian, machine %u)", h.cls == ELFCLASS64 ? "64" : "32",
		         h.data == ELFDATA2MSB ? "big" : "little", h.machine, host.cls == ELFCLASS64 ? "64" : "32",
		         host.data == ELFDATA2MSB ? "big" : "little", host.machine);
		return -1;
	}
	if (h.type != ET_DYN) {
		snprintf(why, cap, "not a shared object (%s)", type_word(h.type));
		return -1;
	}
	size_t phsize = h.cls == ELFCLASS64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t shsize = h.cls == ELFCLASS64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	if (!h.phnum || h.phentsize != phsize) {
		snprintf(why, cap, h.phnum ? "corrupt ELF header (program header size %u, not %zu)" :
		         "no program headers: nothing the loader could map", h.phentsize, phsize);
		return -1;
	}
	if (h.shnum && h.shentsize != shsize) {
		snprintf(why, cap, "corrupt ELF header (section header size %u, not %zu)", h.shentsize, shsize);
		return -1;
	}
	/* the loader's order: the program headers, then the segments; the
	 * section headers last (the loader needs none, but a file without
	 * its end is not the file that was built) */
	struct need ph = { 0 }, ld = { 0 }, sh = { 0 };
	need_of(&ph, "program headers", h.phoff, h.phnum, h.phentsize);
	if (!ph.overflow && ph.end <= size && loads_end(fd, &h, &ld, why, cap) != 0)
		return -1;
	if (h.shoff || h.shnum)
		need_of(&sh, "section headers", h.shoff, h.shnum, h.shentsize);
	const struct need *parts[] = { &ph, &ld, &sh };
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
		const struct need *n = parts[i];
		if (n->what && n->overflow) {
			snprintf(why, cap, "corrupt: its %s lie past any file's end", n->what);
			return -1;
		}
		if (n->what && n->end > size) {
			snprintf(why, cap, "ends at %llu bytes, its %s need %llu", (unsigned long long)size, n->what,
			         (unsigned long long)n->end);
			return -1;
		}
	}
	return 0;
}

int et_tool_so_check(const char *path, char *why, size_t cap)
{
	/* O_NONBLOCK: a FIFO put there is never waited for (fstat says what it is) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		snprintf(why, cap, "%s", strerror(errno));
		return -1;
	}
	errno = 0;
	int rc = check_fd(fd, why, cap);
	close(fd);
	return rc;
}
