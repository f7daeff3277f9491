/*
 * core/smaps.h — /proc/PID/smaps parsed into a table of mappings with the
 * figures the library and the command read (huge bytes by kind, locked,
 * anonymous).  No malloc: one scratch mapping.
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
/* Mapping i, anonymous, lies between two mappings of one file (the nearest
 * file mappings on each side): text this library copied.  That file's
 * mapping, or NULL.  The one rule `enormoustext stat` and the library's
 * JIT figures tell copied text from JIT code by. */
ET_HIDDEN const struct et_vma *et_smaps_copied_from(const struct et_smaps *sm, size_t i);
#endif
