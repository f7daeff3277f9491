/*
 * elffile.h — ELF files as the command reads them (elffile.c): the one
 * place that opens a file (or an image in memory) with libelf, and the
 * facts every part asks of one: its header, its program headers and
 * interpreter, its GNU build-id (the one reader, and the key a profile
 * gives it), the libraries it names (DT_NEEDED), its functions.
 *
 * `check`'s own analysis (check_elf.c) gets its handle here and reads the
 * rest of the image itself.
 */
#ifndef ET_TOOL_ELFFILE_H
#define ET_TOOL_ELFFILE_H

#include "tool.h"

struct Elf;

struct et_tool_elf {
	struct Elf *e;
	int fd;                 /* -1: an image in memory */
	bool own_fd;            /* closed by et_tool_elf_close */
	uint64_t size;          /* of the file or image */
	char why[256];          /* what failed, for a message naming the file */
};

/* et_tool_elf_open's flags */
#define ET_TOOL_ELF_REGULAR 1u   /* a regular file only ("not a regular file") */

/* The file at path, opened for libelf (O_NONBLOCK: a FIFO is never waited
 * for): 0, or -1 with x->why: the open's error ("No such file or
 * directory"), "not a regular file" (with ET_TOOL_ELF_REGULAR), "not an
 * ELF file". */
int et_tool_elf_open(struct et_tool_elf *x, const char *path, unsigned flags);
/* The same on a descriptor the caller has opened and keeps. */
int et_tool_elf_fd(struct et_tool_elf *x, int fd);
/* An image in memory (libelf reads nothing past it and may change it in
 * place): 0, or -1 with x->why ("libelf is too old: ...", "corrupt ELF
 * file: ...", "not an ELF file"). */
int et_tool_elf_memory(struct et_tool_elf *x, void *buf, size_t len);
/* Ends libelf's handle (and closes the descriptor when it opened it). */
void et_tool_elf_close(struct et_tool_elf *x);

/* The ELF header's type (ET_EXEC, ET_DYN, ...), machine and class (32 or
 * 64); false when libelf cannot read it. */
bool et_tool_elf_header(struct et_tool_elf *x, unsigned *type, unsigned *machine, unsigned *cls);

/* A program header. */
struct et_tool_seg {
	uint32_t type, flags;
	uint64_t offset, vaddr, filesz, memsz, align;
};
/* Every program header, each read and the table inside the file: how
 * many (*segs malloc'd, NULL for none), or -1 with x->why ("truncated (its
 * program headers lie past the end of the file)", "unreadable program
 * headers (truncated?): ...", "unreadable program header N (truncated?)",
 * "out of memory"). */
long et_tool_elf_segments(struct et_tool_elf *x, struct et_tool_seg **segs);
/* The interpreter PT_INTERP names, into out (cut at cap); false when it
 * has none (a static program, a library) or it cannot be read. */
bool et_tool_elf_interp(struct et_tool_elf *x, char *out, size_t cap);

/* The GNU build-id: the descriptor of the first note of type
 * NT_GNU_BUILD_ID named "GNU" with at least one byte, in the PT_NOTE
 * segments (8-byte notes where the segment is 8-aligned), else in the
 * SHT_NOTE sections, every offset checked against the note's data.  Any
 * length: SHA-1 gives 20 bytes, MD5 16, xxHash 8, --build-id=0x... what
 * it is given.  Its bytes (*id points into x's data, valid until
 * et_tool_elf_close), or 0 when it has none. */
size_t et_tool_elf_build_id(struct et_tool_elf *x, const unsigned char **id);
/* The key a profile gives the object: the build-id's first 20 bytes at
 * most, in lower-case hex (core/util.c's et_hex_build_id, as the library
 * keys the objects it loads and as perf's MMAP2 records carry it); ""
 * when it has none. */
void et_tool_elf_build_id_key(struct et_tool_elf *x, char out[41]);

/* The libraries x names (DT_NEEDED of its dynamic section), in order:
 * fn(ctx, name) for each; how many. */
size_t et_tool_elf_needed(struct et_tool_elf *x, void (*fn)(void *ctx, const char *name), void *ctx);

/* Its functions (STT_FUNC of a size, defined) from .symtab, else from
 * .dynsym when .symtab has none: fn(ctx, name, address, size) for each;
 * fn returns nonzero to stop.  How many, or -1 when fn stopped. */
long et_tool_elf_functions(struct et_tool_elf *x,
                           int (*fn)(void *ctx, const char *name, uint64_t addr, uint64_t size), void *ctx);

#endif
