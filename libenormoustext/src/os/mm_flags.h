/*
 * os/mm_flags.h — the one home of the memory-management flags that an
 * older <sys/mman.h> may lack: the values of the kernel's uapi headers
 * (include/uapi/asm-generic/mman-common.h, mman.h), the same on every
 * architecture the library builds for.  The library takes them through
 * os/os.h; the command (tools/enormoustext) includes this header itself
 * (by core/mm_flags.h, its name before it moved down to os/).
 *
 * Owns: those fallback values, nothing else (no function, no state).
 * Never: defines a flag <sys/mman.h> already has.
 */
#ifndef ET_OS_MM_FLAGS_H
#define ET_OS_MM_FLAGS_H

#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000    /* Linux 4.17 */
#endif
#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_STACK
#define MAP_STACK 0x20000
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE 15
#endif
#ifndef MADV_DONTDUMP
#define MADV_DONTDUMP 16
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22           /* Linux 5.14 */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23          /* Linux 5.14 */
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25                /* Linux 6.1 */
#endif

#endif
