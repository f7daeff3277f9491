/*
 * dlhooks.c — libraries loaded after start-up.
 *
 * This library defines dlopen, dlmopen (glibc) and dlclose, so that calls
 * from the program and its libraries come here first (preloaded, or linked
 * ahead of libc); each calls the loader's own function, found with
 * dlsym(RTLD_NEXT), and then lets init.c move the text of whatever the
 * loader added.  dlclose holds the object table while the loader unmaps,
 * so that no pass copies from text that is going away.
 *
 * The real dlopen runs without any lock of ours held: the new library's
 * constructors may dlopen, fork or start threads as they please.
 */
#include "internal.h"

#include <dlfcn.h>
#include <link.h>

#define ET_EXPORT __attribute__((visibility("default")))

typedef void *(*dlopen_fn)(const char *, int);
typedef int (*dlclose_fn)(void *);

/* The loader's function of that name: the next definition after ours. */
static void *next_symbol(void **cache, const char *name)
{
	void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, p, __ATOMIC_RELEASE);
	}
	return p;
}

ET_EXPORT void *dlopen(const char *file, int mode)
{
	static void *real;
	dlopen_fn fn = (dlopen_fn)next_symbol(&real, "dlopen");
	if (!fn)
		return NULL;
	void *h = fn(file, mode);
	if (h)
		et_after_dlopen();
	return h;
}

#ifdef __GLIBC__
typedef void *(*dlmopen_fn)(Lmid_t, const char *, int);

ET_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	static void *real;
	dlmopen_fn fn = (dlmopen_fn)next_symbol(&real, "dlmopen");
	if (!fn)
		return NULL;
	void *h = fn(lmid, file, mode);
	if (!h)
		return h;
	/* dl_iterate_phdr shows only the caller's namespace: hand over the
	 * new namespace's own list of objects. */
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm) {
		while (lm->l_prev)
			lm = lm->l_prev;
		et_after_dlmopen(lm);
	}
	return h;
}
#endif

ET_EXPORT int dlclose(void *handle)
{
	static void *real;
	dlclose_fn fn = (dlclose_fn)next_symbol(&real, "dlclose");
	if (!fn)
		return -1;
	et_dlclose_begin();
	int r = fn(handle);
	et_dlclose_end();
	return r;
}
