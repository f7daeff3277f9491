/*
 * os/base.h — what every module of libenormoustext includes first (through
 * core/base.h above os/): it sits on the lowest floor, so that os/ itself
 * includes nothing from the floors above it.
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
#ifndef ET_OS_BASE_H
#define ET_OS_BASE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ET_HIDDEN __attribute__((visibility("hidden")))

/* ELF segment flags, without pulling <elf.h> into every file. */
#define PF_X_FLAG 0x1
#define PF_W_FLAG 0x2
#define PF_R_FLAG 0x4

/*
 * The start-up path: what the constructor runs in a process the library
 * leaves alone or that has nothing to move (runtime/init.c's banner) —
 * with `enormoustext enable --all`, every process of the host.  On a
 * machine where a page fault costs what ten system calls do, touching a
 * page the loader has not touched is the largest cost there is; so the
 * code of that path goes where the loader's own reads of the file have
 * already mapped it (ET_STARTUP: .text.hot, placed first in .text, within
 * the first 64 KiB of the file with .rodata moved in front of .text by
 * libenormoustext/startup.ld), and the big buffers go after every small
 * variable (ET_LARGE_BSS), so that the small ones share the page the
 * loader writes anyway (the end of .got.plt, .data).  The test:
 * integration.startup-faults (no more page faults than an empty library).
 */
#define ET_STARTUP __attribute__((section(".text.hot.et_startup")))
#define ET_LARGE_BSS __attribute__((section(".bss.et_large")))
/* The one big buffer the start-up path may write (the host's settings,
 * runtime/hostwide.c): first of the big ones, next to the small. */
#define ET_LARGE_BSS_FIRST __attribute__((section(".bss.et_large_first")))

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#endif
