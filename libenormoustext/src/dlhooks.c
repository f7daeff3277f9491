/*
 * dlhooks.c — libraries loaded after start-up.
 *
 * This library defines dlopen, dlmopen (glibc) and dlclose, so that calls
 * from the program and its libraries come here first (preloaded, or linked
 * ahead of libc); each calls the loader's own function, found with
 * dlsym(RTLD_NEXT), and then asks init.c for a pass over what the loader
 * added or removed.  No lock of ours is held while the loader runs: the
 * new library's constructors and destructors may dlopen, dlclose, fork or
 * start threads as they please.
 *
 * glibc resolves a bare library name with the DT_RPATH/DT_RUNPATH of the
 * *calling* object, and $ORIGIN against the caller's directory; seen from
 * here, the caller would be this library.  So, for glibc, a name that
 * depends on the caller is resolved first as the caller would have it
 * resolved (its search path from dlinfo(RTLD_DI_SERINFO), its
 * RTLD_DI_ORIGIN), and the loader is handed the resulting path.
 */
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

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

#ifdef __GLIBC__
/* Replace every $ORIGIN / ${ORIGIN} in `file` with origin.  0 or -1. */
static int expand_origin(const char *file, const char *origin, char *out, size_t cap)
{
	size_t n = 0, olen = strlen(origin);
	for (const char *p = file; *p;) {
		size_t skip = 0;
		if (!strncmp(p, "$ORIGIN", 7) && !(p[7] == '_' || (p[7] >= 'A' && p[7] <= 'Z') ||
		                                   (p[7] >= 'a' && p[7] <= 'z') || (p[7] >= '0' && p[7] <= '9')))
			skip = 7;
		else if (!strncmp(p, "${ORIGIN}", 9))
			skip = 9;
		if (skip) {
			if (n + olen >= cap)
				return -1;
			memcpy(out + n, origin, olen);
			n += olen;
			p += skip;
		} else {
			if (n + 1 >= cap)
				return -1;
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	return 0;
}

/*
 * The name the caller's own dlopen would have opened, or `file` itself when
 * it does not depend on the caller (a path without $ORIGIN, an object
 * already loaded, nothing found on the caller's search path: the loader's
 * cache and default directories do not depend on it either).
 */
static const char *as_caller(const char *file, const void *caller, dlopen_fn real, char *buf, size_t cap)
{
	if (!file || !*file || !caller)
		return file;
	bool origin = strstr(file, "$ORIGIN") || strstr(file, "${ORIGIN}");
	if (strchr(file, '/') && !origin)
		return file;
	struct link_map *lm = NULL;
	Dl_info di;
	if (!dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return file;
	if (origin) {
		char dir[1024];
		if (dlinfo(lm, RTLD_DI_ORIGIN, dir) != 0 || expand_origin(file, dir, buf, cap) != 0)
			return file;
		return buf;
	}
	/* A bare name: already loaded (by name or soname) wins, as in the loader. */
	void *h = real(file, RTLD_LAZY | RTLD_NOLOAD);
	if (h) {
		static void *real_close;
		dlclose_fn close_fn = (dlclose_fn)next_symbol(&real_close, "dlclose");
		if (close_fn)
			close_fn(h);   /* the loader's own: nothing changed, no pass */
		return file;
	}
	Dl_serinfo size;
	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &size) != 0 || size.dls_size > 8192)
		return file;
	union {
		Dl_serinfo si;
		char raw[8192];
	} u;
	u.si.dls_size = size.dls_size;
	u.si.dls_cnt = size.dls_cnt;
	if (dlinfo(lm, RTLD_DI_SERINFO, &u.si) != 0)
		return file;
	for (unsigned i = 0; i < u.si.dls_cnt; i++) {
		const char *dir = u.si.dls_serpath[i].dls_name;
		size_t dl = strlen(dir), fl = strlen(file);
		if (!dl || dl + 1 + fl >= cap)
			continue;
		memcpy(buf, dir, dl);
		buf[dl] = '/';
		memcpy(buf + dl + 1, file, fl + 1);
		if (access(buf, F_OK) == 0)
			return buf;
	}
	return file;
}
#endif

ET_EXPORT void *dlopen(const char *file, int mode)
{
	static void *real;
	dlopen_fn fn = (dlopen_fn)next_symbol(&real, "dlopen");
	if (!fn)
		return NULL;
#ifdef __GLIBC__
	char buf[4096];
	file = as_caller(file, __builtin_return_address(0), fn, buf, sizeof buf);
#endif
	void *h = fn(file, mode);
	if (h)
		et_after_dlopen();
	return h;
}

#ifdef __GLIBC__
typedef void *(*dlmopen_fn)(Lmid_t, const char *, int);

ET_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	static void *real, *real_open;
	dlmopen_fn fn = (dlmopen_fn)next_symbol(&real, "dlmopen");
	dlopen_fn open_fn = (dlopen_fn)next_symbol(&real_open, "dlopen");
	if (!fn)
		return NULL;
	char buf[4096];
	/* Only the caller-relative parts: a bare name is looked up in the
	 * target namespace, where "already loaded" means something else. */
	if (file && (strstr(file, "$ORIGIN") || strstr(file, "${ORIGIN}")) && open_fn)
		file = as_caller(file, __builtin_return_address(0), open_fn, buf, sizeof buf);
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
	int r = fn(handle);
	if (r == 0)
		et_after_dlclose();
	return r;
}
