/*
 * runtime/defer_moment.h — is the interrupted program at a moment where the
 * deferred pass may run on its own thread (the tick, runtime/defer.c)?
 */
#ifndef ET_RUNTIME_DEFER_MOMENT_H
#define ET_RUNTIME_DEFER_MOMENT_H

#include "core/base.h"

#include <stdint.h>

/* From a signal handler's context uc (the interrupted frame): true when
 * the process has one thread (the kernel's count), the program counter is
 * outside libc, the loader and this library (self: an address in this
 * library's code), and the main stack has need_stack bytes free below the
 * interrupted frame (mapped, or room the stack may grow into).  Else false,
 * with *why (what was not so) and *never (it will not become so: threads
 * the library did not see made, or no frame to read). */
ET_HIDDEN bool et_defer_moment_safe(const void *uc, uintptr_t self, uintptr_t need_stack, const char **why,
                                    bool *never);

#endif
