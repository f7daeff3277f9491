/*
 * runtime/objects.c — the objects stage: the loaded objects, from
 * dl_iterate_phdr (and a dlmopen namespace's link maps).
 *
 * For each object: its executable PT_LOAD segments at run-time addresses,
 * GNU build-id, whether it has text relocations, and whether it is one we
 * must leave alone (the vdso, this library itself).  Paths come from the
 * loader; the main program's (which the loader reports as "") is resolved
 * later from the mappings.
 *
 * Owns: reading the loader's list and each object's program headers.
 * May call: core (util), os (is a page mapped), runtime/loader (the walk,
 * under its rules).
 * Never: takes a lock (the caller is inside dl_iterate_phdr); allocates.
 */

#include "runtime/objects.h"

#include "runtime/loader.h"

#include "core/util.h"
#include "os/os.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <stdbool.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#ifndef DF_TEXTREL
#define DF_TEXTREL 0x4
#endif

struct collect {
	struct et_object *objs;
	size_t n, cap;
	uintptr_t self_addr;
	uintptr_t vdso;
	uint64_t max_seg;    /* largest executable segment (file-backed bytes) */
	uint64_t text;       /* all executable segments (counting pass) */
};


static void read_build_id(const struct dl_phdr_info *info, const ElfW(Phdr) *ph, char out[41])
{
	const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
	const unsigned char *end = p + ph->p_memsz;
	size_t align = ph->p_align >= 8 ? 8 : 4;
	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
		size_t nsz = (nh->n_namesz + align - 1) & ~(align - 1);
		size_t dsz = (nh->n_descsz + align - 1) & ~(align - 1);
		const unsigned char *name = p + sizeof *nh;
		const unsigned char *desc = name + nsz;
		if (desc + nh->n_descsz > end)
			return;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
			et_hex_build_id(desc, nh->n_descsz, out);
			return;
		}
		p = desc + dsz;
	}
}

static bool has_textrel(const struct dl_phdr_info *info, const ElfW(Phdr) *ph)
{
	const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
	size_t n = ph->p_memsz / sizeof *d;
	for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++) {
		if (d[i].d_tag == DT_TEXTREL)
			return true;
		if (d[i].d_tag == DT_FLAGS && (d[i].d_un.d_val & DF_TEXTREL))
			return true;
	}
	return false;
}

ET_STARTUP static int collect_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct collect *c = arg;
	size_t idx = c->n++;
	if (idx >= c->cap) {
		/* Counting pass (or table full): only the largest text segment. */
		for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
			if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
				continue;
			c->text += ph->p_memsz;
			if (ph->p_filesz > c->max_seg)
				c->max_seg = ph->p_filesz;
		}
		return 0;
	}
	struct et_object *o = &c->objs[idx];
	memset(o, 0, sizeof *o);
	o->base = info->dlpi_addr;
	o->phdr = (uintptr_t)info->dlpi_phdr;
	o->is_main = idx == 0;
	o->backend = ET_BACKEND_NONE;
	if (info->dlpi_name && info->dlpi_name[0])
		et_strlcpy(o->path, info->dlpi_name, sizeof o->path);

	bool textrel = false, self = false;
	/* The span the loader mapped for the object (its holes included): a
	 * padded window may cover a hole of its own object, never more. */
	uint64_t pg = getauxval(AT_PAGESZ) ? getauxval(AT_PAGESZ) : 4096;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uint64_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(pg - 1);
		uint64_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + pg - 1) & ~(pg - 1);
		if (!o->map_hi || lo < o->map_lo)
			o->map_lo = lo;
		if (hi > o->map_hi)
			o->map_hi = hi;
	}
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uint64_t start = info->dlpi_addr + ph->p_vaddr;
			/* Only bytes backed by the file are text worth moving. */
			uint64_t end = start + (ph->p_filesz < ph->p_memsz ? ph->p_filesz : ph->p_memsz);
			if (c->self_addr >= start && c->self_addr < end)
				self = true;
			if (o->nsegs < ET_MAX_SEGS) {
				struct et_segment *s = &o->segs[o->nsegs++];
				s->start = start;
				s->end = end;
				s->offset = ph->p_offset;
				s->flags = ph->p_flags;
			}
			o->text_bytes += ph->p_memsz;
		} else if (ph->p_type == PT_NOTE && !o->build_id[0]) {
			read_build_id(info, ph, o->build_id);
		} else if (ph->p_type == PT_DYNAMIC) {
			textrel = has_textrel(info, ph);
		}
	}

	/* The vdso is found by its address: its name differs between loaders. */
	uintptr_t first = 0;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			first = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			break;
		}
	if (c->vdso && (info->dlpi_addr == c->vdso || (first & ~(uintptr_t)4095) == c->vdso)) {
		o->skip = ET_R_VDSO;
		if (!o->path[0])
			et_strlcpy(o->path, "[vdso]", sizeof o->path);
	} else if (self && !o->is_main) {
		/* This library as its own shared object.  Linked statically into
		 * the program, it is part of the program's text and moves with it. */
		o->skip = ET_R_SELF;
	} else if (textrel) {
		o->skip = ET_R_TEXTREL;
	}
	return 0;
}

static void self_marker(void) {}

/* The program headers of a loaded object, found from its ELF header at
 * its load address (where a shared object's first segment maps offset 0). */
static bool phdrs_of(uintptr_t addr, const ElfW(Phdr) **ph, ElfW(Half) *n)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)addr;
	if (!addr || !et_os_mapped(eh, sizeof *eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phnum == 0 || eh->e_phnum > 64 ||
	    !et_os_mapped((const char *)eh + eh->e_phoff, eh->e_phnum * sizeof(ElfW(Phdr))))
		return false;
	*ph = (const ElfW(Phdr) *)(addr + eh->e_phoff);
	*n = eh->e_phnum;
	return true;
}

size_t et_objects_collect_linkmap(const struct link_map *head, struct et_object *objs, size_t cap)
{
	struct collect c = { objs, 0, cap, (uintptr_t)&self_marker,
	                     (uintptr_t)getauxval(AT_SYSINFO_EHDR), 0, 0 };
	for (const struct link_map *l = head; l; l = l->l_next) {
		struct dl_phdr_info info;
		memset(&info, 0, sizeof info);
		if (!phdrs_of(l->l_addr, &info.dlpi_phdr, &info.dlpi_phnum))
			continue;
		info.dlpi_addr = l->l_addr;
		info.dlpi_name = l->l_name;
		collect_cb(&info, sizeof info, &c);
		if (c.n <= cap)
			objs[c.n - 1].is_main = false;
	}
	return c.n;
}

bool et_object_still_mapped(const struct et_object *o)
{
	const ElfW(Phdr) *ph;
	ElfW(Half) n;
	return phdrs_of(o->base, &ph, &n) && (uintptr_t)ph == o->phdr;
}

ET_STARTUP size_t et_objects_collect(struct et_object *objs, size_t cap, uint64_t *max_seg,
                          uint64_t *text_bytes)
{
	struct collect c = { objs, 0, cap, (uintptr_t)&self_marker,
	                     (uintptr_t)getauxval(AT_SYSINFO_EHDR), 0, 0 };
	et_loader_iterate(collect_cb, &c);
	if (max_seg)
		*max_seg = c.max_seg;
	if (text_bytes)
		*text_bytes = c.text;
	return c.n;
}
