/*
 * core/smaps.h — /proc/PID/smaps parsed into a table of mappings with the
 * figures the library and the command read (huge bytes by kind, locked,
 * anonymous), and whose text each anonymous executable mapping holds (the
 * library's copies).  No malloc: one scratch mapping.
 */
#ifndef ET_CORE_SMAPS_H
#define ET_CORE_SMAPS_H

#include "core/base.h"

struct et_vma {
	uint64_t start, end, offset, inode;
	uint32_t dev_major, dev_minor;   /* of the file, 0:0 for anonymous */
	uint32_t prot;          /* PROT_* from the perms column */
	bool shared;            /* 's' */
	uint32_t path_off;      /* offset of the path in the string pool, 0 = none */
	uint64_t anon_huge, file_pmd, shmem_pmd, hugetlb;  /* bytes */
	uint64_t anonymous;     /* Anonymous: private copies of file pages (patched text) */
	uint64_t locked;        /* Locked: mlock'ed bytes */
	/* Set by et_smaps_attribute.  An anonymous executable mapping: owner
	 * is 1 + the index of a mapping of the file whose text it holds (0:
	 * none, JIT code), bias that object's load bias when its ELF headers
	 * said (owner_elf).  A file mapping: text_known when its ELF headers
	 * were read (or it is no ELF file): the neighbour rule never decides
	 * for it. */
	uint64_t bias;
	uint32_t owner;
	bool owner_elf, text_known;
};

/* An executable PT_LOAD of a file mapped in the process, where it lies
 * there (et_smaps_attribute's table). */
struct et_text_range {
	uint64_t lo, hi, bias;
	uint32_t vma;           /* a mapping of the file */
};

struct et_smaps {
	struct et_vma *vmas;
	size_t count, cap;
	char *pool;             /* path strings, pool[0] = '\0' */
	size_t pool_len, pool_cap;
	void *mem;              /* the scratch mapping holding both */
	size_t mem_len;
	bool dropping;          /* the last header did not fit: skip its fields */
	bool truncated;         /* some VMAs did not fit (et_smaps_read_fd fails) */
	bool attributed;        /* et_smaps_attribute ran */
	struct et_text_range *ranges;   /* its table: executable PT_LOADs in the process */
	size_t nranges, ranges_cap;
};

/* Parse smaps text from fd into sm (which owns a scratch mapping sized for
 * up to `cap` VMAs).  0 or -errno.  Callable on any smaps-formatted file. */
ET_HIDDEN int et_smaps_read_fd(struct et_smaps *sm, int fd);
ET_HIDDEN int et_smaps_read(struct et_smaps *sm, const char *path);
/* This process's own, as the calling thread sees it: /proc/thread-self/smaps
 * (after the main thread has ended, /proc/self's maps are empty: it is the
 * thread group leader's), /proc/self/smaps before Linux 3.17. */
ET_HIDDEN int et_smaps_read_self(struct et_smaps *sm);
ET_HIDDEN void et_smaps_free(struct et_smaps *sm);
ET_HIDDEN const struct et_vma *et_smaps_find(const struct et_smaps *sm, uint64_t addr);
ET_HIDDEN const char *et_vma_path(const struct et_smaps *sm, const struct et_vma *v);
ET_HIDDEN uint64_t et_vma_huge_bytes(const struct et_vma *v);
/* A mapping of a file: a path that is neither anonymous memory smaps gives
 * a name (a hugetlb or shared anonymous mapping, [anon:...], a memfd) nor
 * a pseudo-file ([vdso], [stack]...). */
ET_HIDDEN bool et_vma_is_file(const struct et_smaps *sm, const struct et_vma *v);
/* Anonymous memory that may hold code: no path, or a name smaps gives
 * anonymous memory (a hugetlb or shared anonymous mapping, [anon:...]);
 * not a memfd (a file of its own: JIT code's double mapping). */
ET_HIDDEN bool et_vma_is_anon(const struct et_smaps *sm, const struct et_vma *v);

/*
 * Whose text is an anonymous executable mapping — THE ONE RULE `enormoustext
 * stat`, `perfmap`, `collapse` and the library's JIT figures tell the
 * library's copies of a file's text from JIT code by.
 *
 * From what is known, not from the order of the mappings: for each file
 * mapped in the process, its ELF header and program headers (the file as
 * mapped: et_smaps_mapped_file), the load bias from any of its mappings
 * (the mapping's start less the address of its file offset in the PT_LOAD
 * that holds it: the one whose page-aligned p_offset is the mapping's
 * offset, else the one that contains it), and so where its executable
 * PT_LOADs lie.  An anonymous executable mapping that overlaps one of those
 * ranges holds that object's text (the most bytes win where a mapping
 * overlaps several); one that overlaps none is JIT code.  Only where the
 * file around it cannot be read (no access, replaced on disk, a copy of
 * /proc from elsewhere) does the old neighbour rule decide: the nearest
 * file mappings on both sides are one file's.
 *
 * et_smaps_attribute works it out once for the table, dir being the
 * process's proc directory ("/proc/PID", "/proc/self"); it opens files,
 * reads only their headers, allocates nothing (the table's scratch
 * mapping).  et_smaps_copied_from(sm, i): the owner of mapping i (a mapping
 * of its file), or NULL; before et_smaps_attribute, by the neighbour rule
 * alone.  et_smaps_copied_bias: the owner's load bias, when its headers
 * gave it.
 */
ET_HIDDEN void et_smaps_attribute(struct et_smaps *sm, const char *dir);
ET_HIDDEN const struct et_vma *et_smaps_copied_from(const struct et_smaps *sm, size_t i);
ET_HIDDEN bool et_smaps_copied_bias(const struct et_smaps *sm, size_t i, uint64_t *bias);
/* The file of mapping v as the process maps it: DIR/map_files/START-END,
 * else DIR/root/PATH, else PATH, the last two only when their device and
 * inode are the mapping's.  An open descriptor (O_RDONLY | O_CLOEXEC) and
 * the path it was opened by in buf, or -errno (-ESTALE: a file by that
 * name, but another one). */
ET_HIDDEN int et_smaps_mapped_file(const struct et_smaps *sm, const struct et_vma *v, const char *dir,
                                   char *buf, size_t cap);
#endif
