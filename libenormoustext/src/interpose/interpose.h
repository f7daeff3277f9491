/*
 * interpose/interpose.h — what the wrappers of libc and loader symbols
 * share.  Everything in interpose/ goes into the shared library only: in a
 * static archive the wrappers would shadow libc's own functions in a fully
 * static program (where dlsym(RTLD_NEXT) cannot find them).
 *
 * A wrapper calls the real function and tells the runtime what happened
 * through a narrow interface (runtime/pass.h, runtime/record.h); nothing
 * in core/, os/ or runtime/ ever calls a wrapper.
 */
#ifndef ET_INTERPOSE_H
#define ET_INTERPOSE_H

#include "core/base.h"
#include "os/os.h"

#include <dlfcn.h>

#define ET_EXPORT __attribute__((visibility("default")))

typedef void *(*dlopen_fn)(const char *, int);
typedef int (*dlclose_fn)(void *);

/* The loader's function of that name: the next definition after ours. */
#define next_symbol et_os_next

#endif
