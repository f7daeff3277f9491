/*
 * tools/enormoustext/elffile.c — ELF files through libelf, for every part
 * of the command (see elffile.h): opening a file or an image, its header,
 * program headers and interpreter, its build-id, its DT_NEEDED names, its
 * functions.
 *
 * One reader of the build-id, with one rule (elffile.h): any length, the
 * first GNU note; the key a profile gives it, its first 20 bytes in hex,
 * is the library's own (core/util.c), so that `record`, `profile import`
 * and `order`, `collapse --profile` and the library match an object the
 * same way.
 *
 * Owns: opening ELF files with libelf (elf_version, elf_begin,
 * elf_memory: nothing else in the command calls them), and the facts
 * above.
 * May call: libelf, core (util: et_hex_build_id).
 * Never: writes a message (it says why in x->why; the caller names the
 * file); reads past the file or image (every offset is checked first, by
 * libelf or here).
 */
#include "elffile.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

static void why(struct et_tool_elf *x, const char *what, const char *detail)
{
	if (detail)
		snprintf(x->why, sizeof x->why, "%s: %s", what, detail);
	else
		snprintf(x->why, sizeof x->why, "%s", what);
}

static const char *elf_msg(void)
{
	const char *m = elf_errmsg(-1);
	return m ? m : "unknown libelf error";
}

static int begin(struct et_tool_elf *x)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		why(x, "libelf", elf_msg());
		return -1;
	}
	x->e = elf_begin(x->fd, ELF_C_READ, NULL);
	if (!x->e || elf_kind(x->e) != ELF_K_ELF) {
		why(x, "not an ELF file", NULL);
		return -1;
	}
	return 0;
}

int et_tool_elf_fd(struct et_tool_elf *x, int fd)
{
	memset(x, 0, sizeof *x);
	x->fd = fd;
	struct stat st;
	if (fstat(fd, &st) == 0)
		x->size = (uint64_t)st.st_size;
	if (begin(x) == 0)
		return 0;
	et_tool_elf_close(x);
	return -1;
}

int et_tool_elf_open(struct et_tool_elf *x, const char *path, unsigned flags)
{
	memset(x, 0, sizeof *x);
	x->fd = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		why(x, strerror(errno), NULL);
		return -1;
	}
	struct stat st;
	if ((flags & ET_TOOL_ELF_REGULAR) && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		why(x, "not a regular file", NULL);
		return -1;
	}
	int rc = et_tool_elf_fd(x, fd);
	if (rc != 0) {
		close(fd);
		return -1;
	}
	x->own_fd = true;
	return 0;
}

int et_tool_elf_memory(struct et_tool_elf *x, void *buf, size_t len)
{
	memset(x, 0, sizeof *x);
	x->fd = -1;
	x->size = len;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		why(x, "libelf is too old", elf_msg());
		return -1;
	}
	x->e = elf_memory(buf, len);
	if (!x->e) {
		why(x, "corrupt ELF file", elf_msg());
		return -1;
	}
	if (elf_kind(x->e) != ELF_K_ELF) {
		why(x, "not an ELF file", NULL);
		et_tool_elf_close(x);
		return -1;
	}
	return 0;
}

void et_tool_elf_close(struct et_tool_elf *x)
{
	if (x->e)
		elf_end(x->e);
	x->e = NULL;
	if (x->own_fd && x->fd >= 0)
		close(x->fd);
	x->fd = -1;
	x->own_fd = false;
}

bool et_tool_elf_header(struct et_tool_elf *x, unsigned *type, unsigned *machine, unsigned *cls)
{
	GElf_Ehdr eh;
	if (!x->e || !gelf_getehdr(x->e, &eh))
		return false;
	*type = eh.e_type;
	*machine = eh.e_machine;
	*cls = gelf_getclass(x->e) == ELFCLASS64 ? 64 : 32;
	return true;
}

long et_tool_elf_segments(struct et_tool_elf *x, struct et_tool_seg **segs)
{
	*segs = NULL;
	GElf_Ehdr eh;
	if (!gelf_getehdr(x->e, &eh) || eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize > x->size) {
		why(x, "truncated (its program headers lie past the end of the file)", NULL);
		return -1;
	}
	size_t n = 0;
	if (elf_getphdrnum(x->e, &n) != 0) {
		why(x, "unreadable program headers (truncated?)", elf_msg());
		return -1;
	}
	struct et_tool_seg *s = n ? calloc(n, sizeof *s) : NULL;
	if (n && !s) {
		why(x, "out of memory", NULL);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(x->e, (int)i, &ph)) {
			snprintf(x->why, sizeof x->why, "unreadable program header %zu (truncated?)", i);
			free(s);
			return -1;
		}
		s[i] = (struct et_tool_seg){ ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr,
			                         ph.p_filesz, ph.p_memsz, ph.p_align };
	}
	*segs = s;
	return (long)n;
}

bool et_tool_elf_interp(struct et_tool_elf *x, char *out, size_t cap)
{
	size_t n = 0;
	if (cap)
		out[0] = '\0';
	if (!x->e || elf_getphdrnum(x->e, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(x->e, (int)i, &ph) || ph.p_type != PT_INTERP || !ph.p_filesz)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(x->e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!d || !d->d_buf || !cap)
			return false;
		size_t len = d->d_size < cap - 1 ? d->d_size : cap - 1;
		snprintf(out, cap, "%.*s", (int)strnlen(d->d_buf, len), (const char *)d->d_buf);
		return true;
	}
	return false;
}

/* ------------------------------------------------------------ build-id */

/* The GNU build-id note in d: its descriptor's length (and *id), or 0. */
static size_t build_id_note(Elf_Data *d, const unsigned char **id)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;
	while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (next <= off)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz > 0 &&
		    name_off + 4 <= d->d_size && desc_off <= d->d_size && nh.n_descsz <= d->d_size - desc_off &&
		    !memcmp((const char *)d->d_buf + name_off, "GNU", 4)) {
			*id = (const unsigned char *)d->d_buf + desc_off;
			return nh.n_descsz;
		}
		off = next;
	}
	return 0;
}

size_t et_tool_elf_build_id(struct et_tool_elf *x, const unsigned char **id)
{
	size_t n = 0, len;
	*id = NULL;
	if (!x->e)
		return 0;
	if (elf_getphdrnum(x->e, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(x->e, (int)i, &ph) || ph.p_type != PT_NOTE || !ph.p_filesz)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(x->e, (int64_t)ph.p_offset, ph.p_filesz,
			                                   ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (d && (len = build_id_note(d, id)) > 0)
				return len;
		}
	}
	/* no PT_NOTE holds one (a file without program headers for notes): the
	 * sections */
	for (Elf_Scn *scn = elf_nextscn(x->e, NULL); scn; scn = elf_nextscn(x->e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (d && d->d_buf && (d->d_type == ELF_T_NHDR || d->d_type == ELF_T_NHDR8) &&
		    (len = build_id_note(d, id)) > 0)
			return len;
	}
	*id = NULL;
	return 0;
}

void et_tool_elf_build_id_key(struct et_tool_elf *x, char out[41])
{
	const unsigned char *id;
	size_t n = et_tool_elf_build_id(x, &id);
	if (n)
		et_hex_build_id(id, n, out);
	else
		out[0] = '\0';
}

/* ---------------------------------------------------- dynamic, symbols */

size_t et_tool_elf_needed(struct et_tool_elf *x, void (*fn)(void *ctx, const char *name), void *ctx)
{
	size_t count = 0;
	for (Elf_Scn *scn = x->e ? elf_nextscn(x->e, NULL) : NULL; scn; scn = elf_nextscn(x->e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t ent = sh.sh_entsize ? sh.sh_entsize : gelf_fsize(x->e, ELF_T_DYN, 1, EV_CURRENT);
		for (size_t k = 0; data && ent && k < data->d_size / ent; k++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(data, (int)k, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED)
				continue;
			const char *s = elf_strptr(x->e, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			fn(ctx, s);
			count++;
		}
		break;
	}
	return count;
}

long et_tool_elf_functions(struct et_tool_elf *x,
                           int (*fn)(void *ctx, const char *name, uint64_t addr, uint64_t size), void *ctx)
{
	long nf = 0;
	for (int pass = 0; pass < 2 && nf == 0; pass++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(x->e, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t count = d ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; i < count; i++) {
				GElf_Sym s;
				if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size ||
				    s.st_shndx == SHN_UNDEF)
					continue;
				const char *name = elf_strptr(x->e, sh.sh_link, s.st_name);
				if (!name || !name[0])
					continue;
				if (fn(ctx, name, s.st_value, s.st_size))
					return -1;
				nf++;
			}
		}
	}
	return nf;
}
