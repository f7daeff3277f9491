/*
 * core/mm_flags.h — the memory-management flags an older <sys/mman.h> may
 * lack, by the name the command (tools/enormoustext) includes them: their
 * one home is os/mm_flags.h, on the floor that makes the system calls.
 */
#ifndef ET_CORE_MM_FLAGS_H
#define ET_CORE_MM_FLAGS_H

#include "os/mm_flags.h"

#endif
