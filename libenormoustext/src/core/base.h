/*
 * core/base.h — what every module of libenormoustext includes first.
 *
 * Every internal non-static name starts with `et_`; nothing but the public
 * API (include/enormoustext.h) and the interposed libc/loader symbols is
 * exported from the shared object (-fvisibility=hidden, and the version
 * script libenormoustext.map).
 *
 * Memory: the library may run before malloc is usable (or with a replaced
 * malloc), so nothing on the start-up path allocates with malloc; tables
 * live in anonymous mappings (et_scratch_*), text is formatted into stack
 * buffers.
 */
#ifndef ET_CORE_BASE_H
#define ET_CORE_BASE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ET_HIDDEN __attribute__((visibility("hidden")))

/* ELF segment flags, without pulling <elf.h> into every file. */
#define PF_X_FLAG 0x1
#define PF_W_FLAG 0x2
#define PF_R_FLAG 0x4

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#endif
