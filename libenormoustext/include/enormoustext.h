/*
 * enormoustext.h — the one public header of libenormoustext.
 *
 * libenormoustext puts the executable text of a running program and of the
 * shared libraries it has loaded onto 2 MiB (PMD-size) huge pages.  It does
 * its work by itself, from a constructor, when it is preloaded
 * (LD_PRELOAD=libenormoustext.so) or linked (-lenormoustext); this header is
 * only needed by programs that want to read back what it did.
 *
 * Conventions
 *   - Every public name starts with `enormoustext_` (types: `enormoustext_`).
 *   - Functions return 0 on success and a negative errno value on failure
 *     (liburing style); they never set errno and never print.
 *   - Structures carry their own size in `size` so that fields can be added
 *     at the end without breaking older callers: set `size` to
 *     sizeof(struct ...) before the call; the library fills what fits.
 *   - Byte counts are uint64_t; a "huge" byte is one that /proc/self/smaps
 *     confirmed is backed by a huge page (AnonHugePages, FilePmdMapped or
 *     Private/Shared_Hugetlb), never one the library merely asked for.
 */
#ifndef ENORMOUSTEXT_H
#define ENORMOUSTEXT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ENORMOUSTEXT_API __attribute__((visibility("default")))
#else
#define ENORMOUSTEXT_API
#endif

#define ENORMOUSTEXT_VERSION_MAJOR 0
#define ENORMOUSTEXT_VERSION_MINOR 2
#define ENORMOUSTEXT_VERSION_PATCH 0
#define ENORMOUSTEXT_VERSION_STRING "0.2.0"

/* Process-wide figures of the last run (start-up). */
struct enormoustext_stats {
	uint32_t size;            /* in: sizeof(struct enormoustext_stats) */
	uint32_t ran;             /* 1 when the library did its start-up work */
	uint32_t objects;         /* loaded objects looked at */
	uint32_t objects_huge;    /* objects with at least one huge window */
	uint64_t pmd_size;        /* huge page size used (bytes) */
	uint64_t text_bytes;      /* executable PT_LOAD bytes of all objects */
	uint64_t eligible_bytes;  /* bytes in whole PMD windows (after options) */
	uint64_t remapped_bytes;  /* bytes swapped onto new huge mappings */
	uint64_t huge_bytes;      /* bytes confirmed huge in /proc/self/smaps */
	uint64_t elapsed_ns;      /* time spent in the passes (start-up and later) */
	char backend[16];         /* backend that did most of the work, or "none" */
	char reason[160];         /* why nothing/less was done, "" when all went huge */
	/* since 0.2 (check out->size): */
	uint64_t zero_copy_bytes; /* huge straight from the file's page cache, nothing copied */
	uint64_t padded_bytes;    /* zero fill added beyond text in padded partial windows */
};

/* One loaded object, as the library saw and handled it. */
struct enormoustext_object {
	uint32_t size;            /* in: sizeof(struct enormoustext_object) */
	uint32_t windows;         /* whole PMD windows planned */
	uint32_t windows_huge;    /* windows confirmed huge */
	uint32_t reserved;
	char path[256];           /* file path ("" if unknown) */
	char build_id[41];        /* hex GNU build-id, "" if none */
	char backend[16];         /* backend used, "none", or "file" when the kernel
	                             already had it huge */
	char reason[160];         /* why (part of) it stayed small, "" if it did not */
	uint64_t text_start;      /* lowest executable address */
	uint64_t text_end;        /* end of the highest executable segment */
	uint64_t text_bytes;
	uint64_t eligible_bytes;
	uint64_t remapped_bytes;
	uint64_t huge_bytes;
	uint64_t elapsed_ns;
	/* since 0.2 (check out->size): */
	uint64_t zero_copy_bytes;
	uint64_t padded_bytes;
};

/* Copy the process-wide figures into *out.  -EINVAL when out is NULL or
 * out->size is too small for the fields up to `huge_bytes`. */
ENORMOUSTEXT_API int enormoustext_get_stats(struct enormoustext_stats *out);

/* Number of objects recorded (>= 0). */
ENORMOUSTEXT_API int enormoustext_object_count(void);

/* Copy object number i (0 .. count-1) into *out.  -ERANGE for a bad index,
 * -EINVAL for a bad out/size. */
ENORMOUSTEXT_API int enormoustext_get_object(unsigned i, struct enormoustext_object *out);

/* Move the text of objects loaded since the last pass (the library's own
 * dlopen/dlmopen wrappers call this; a program that loads code some other
 * way may too).  Returns how many objects were new (>= 0), -EDEADLK when
 * called from inside a pass, or -EAGAIN while another thread does the
 * checks a quick start-up left for later. */
ENORMOUSTEXT_API int enormoustext_refresh(void);

/* Move every whole huge-page window of executable text in
 * [start, start + len) onto new huge pages, also windows already moved
 * (each is copied again and swapped in the same way).  Returns how many
 * windows were moved and confirmed huge (>= 0), -EINVAL for an empty
 * range, -EPERM when the library is not active in this process (or another
 * copy of it does the work), -EDEADLK inside a pass, -EAGAIN as for
 * enormoustext_refresh.  Meant for
 * tests that exercise the swap, and for programs that rewrite their text. */
ENORMOUSTEXT_API int enormoustext_remap_range(const void *start, size_t len);

/* Library version as "MAJOR.MINOR.PATCH". */
ENORMOUSTEXT_API const char *enormoustext_version(void);

#ifdef __cplusplus
}
#endif
#endif /* ENORMOUSTEXT_H */
