/*
 * os/next.c — the next definition of a symbol after this library: libc's
 * (or the loader's) own function, past this library's wrapper of it.
 *
 * Owns: the one lookup the wrappers (interpose/) and the library's own
 * calls to libc (os/perf.c's sigaction, os/thread.c's pthread_create) use.
 * May call: the loader (dlsym(RTLD_NEXT)), once per symbol.
 * Never: looks a symbol up again once found.
 */
#include "os/os.h"

#include <dlfcn.h>

ET_STARTUP void *et_os_next(void **cache, const char *name)
{
	void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, p, __ATOMIC_RELEASE);
	}
	return p;
}
