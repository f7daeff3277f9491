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
 * here, the caller would be this library: see open_as_caller.
 */
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
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
static bool has_origin(const char *file)
{
	return strstr(file, "$ORIGIN") || strstr(file, "${ORIGIN}");
}

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

/* glibc-hwcaps subdirectories, best first, then the directory itself. */
static const char *const hwcaps[] = {
#if defined(__x86_64__)
	"glibc-hwcaps/x86-64-v4/", "glibc-hwcaps/x86-64-v3/", "glibc-hwcaps/x86-64-v2/",
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	"glibc-hwcaps/power10/", "glibc-hwcaps/power9/",
#elif defined(__s390x__)
	"glibc-hwcaps/z16/", "glibc-hwcaps/z15/", "glibc-hwcaps/z14/", "glibc-hwcaps/z13/",
#endif
	"",
};

/* The calling object's link map. */
static struct link_map *caller_map(const void *caller)
{
	struct link_map *lm = NULL;
	Dl_info di;
	if (!caller || !dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP))
		return NULL;
	return lm;
}

/* The caller's directory, as the loader computes $ORIGIN: the program's
 * from /proc/self/exe, a library's from its path.  0 or -1. */
static int caller_origin(const struct link_map *lm, char *dir, size_t cap)
{
	char path[PATH_MAX];
	if (!lm->l_name || !lm->l_name[0]) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
		if (n <= 0)
			return -1;
		path[n] = '\0';
	} else if (!realpath(lm->l_name, path)) {
		return -1;
	}
	char *slash = strrchr(path, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if (strlen(path) + 1 > cap)
		return -1;
	memcpy(dir, path[0] ? path : "/", strlen(path[0] ? path : "/") + 1);
	return 0;
}

/*
 * dlopen as the caller would have it.  glibc resolves $ORIGIN against the
 * calling object and searches that object's DT_RPATH/DT_RUNPATH; called
 * from here, the caller would be this library.  So: $ORIGIN is expanded
 * here from the caller's directory (not in a secure-execution process,
 * where the loader refuses it); a bare name is first handed to the loader
 * as it is (the environment, the cache and the default directories do not
 * depend on the caller, and the loader skips files of the wrong class and
 * prefers glibc-hwcaps subdirectories by itself), and only when that finds
 * nothing, tried in the caller's own RPATH/RUNPATH directories.
 */
static void *open_as_caller(dlopen_fn real, const char *file, int mode, const void *caller)
{
	if (!file || !*file || getauxval(AT_SECURE))
		return real(file, mode);
	struct link_map *lm;
	if (has_origin(file)) {
		char *dir = malloc(2 * PATH_MAX);
		void *h;
		if (dir && (lm = caller_map(caller)) && caller_origin(lm, dir, PATH_MAX) == 0 &&
		    expand_origin(file, dir, dir + PATH_MAX, PATH_MAX) == 0)
			h = real(dir + PATH_MAX, mode);
		else
			h = real(file, mode);
		free(dir);
		return h;
	}
	void *h = real(file, mode);
	if (h || strchr(file, '/') || !(lm = caller_map(caller)))
		return h;
	/* The caller's DT_RUNPATH (else DT_RPATH), from its dynamic section. */
	const char *strtab = NULL, *path = NULL;
	uintptr_t runpath = 0, rpath = 0;
	bool have_runpath = false, have_rpath = false;
	for (const ElfW(Dyn) *d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = (const char *)d->d_un.d_ptr;
		else if (d->d_tag == DT_RUNPATH) {
			runpath = d->d_un.d_val;
			have_runpath = true;
		} else if (d->d_tag == DT_RPATH) {
			rpath = d->d_un.d_val;
			have_rpath = true;
		}
	}
	/* glibc relocates DT_STRTAB in place on most targets; not on all. */
	if (strtab && (uintptr_t)strtab < lm->l_addr)
		strtab += lm->l_addr;
	if (strtab && (have_runpath || have_rpath))
		path = strtab + (have_runpath ? runpath : rpath);
	char *buf = path ? malloc(3 * PATH_MAX) : NULL;
	if (buf) {
		char *origin = buf + PATH_MAX, *dir = buf + 2 * PATH_MAX;
		bool have_origin = caller_origin(lm, origin, PATH_MAX) == 0;
		size_t fl = strlen(file);
		for (const char *p = path; *p && !h;) {
			const char *e = strchr(p, ':');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			if (n > 0 && n < PATH_MAX) {
				memcpy(buf, p, n);
				buf[n] = '\0';
				const char *d = buf;
				if (has_origin(buf)) {
					d = have_origin && expand_origin(buf, origin, dir, PATH_MAX) == 0 ? dir : NULL;
				}
				size_t dl = d ? strlen(d) : 0;
				/* Like the loader: the glibc-hwcaps subdirectories first
				 * (it refuses a library for an ISA level the CPU lacks). */
				for (size_t k = 0; d && dl && !h && k < sizeof hwcaps / sizeof *hwcaps; k++) {
					size_t hl = strlen(hwcaps[k]);
					if (dl + 1 + hl + fl >= PATH_MAX)
						break;
					char *full = d == dir ? buf : dir;
					memmove(full, d, dl);
					full[dl] = '/';
					memcpy(full + dl + 1, hwcaps[k], hl);
					memcpy(full + dl + 1 + hl, file, fl + 1);
					if (access(full, F_OK) == 0)
						h = real(full, mode);
					d = full;   /* the directory is now at the start of full */
				}
			}
			if (!e)
				break;
			p = e + 1;
		}
	}
	free(buf);
	/* Not found there either: the loader's own error for the name. */
	return h ? h : real(file, mode);
}
#endif

ET_EXPORT void *dlopen(const char *file, int mode)
{
	static void *real;
	dlopen_fn fn = (dlopen_fn)next_symbol(&real, "dlopen");
	if (!fn)
		return NULL;
#ifdef __GLIBC__
	void *h = open_as_caller(fn, file, mode, __builtin_return_address(0));
#else
	void *h = fn(file, mode);
#endif
	/* Even a failed dlopen may have mapped objects and unmapped them: the
	 * pass after it keeps the table true. */
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
	/* Only $ORIGIN is the caller's; a bare name is searched in the target
	 * namespace, which the caller's RUNPATH does not speak for. */
	char *expanded = NULL;
	struct link_map *cl;
	if (file && has_origin(file) && !getauxval(AT_SECURE) && (cl = caller_map(__builtin_return_address(0))) &&
	    (expanded = malloc(2 * PATH_MAX)) && caller_origin(cl, expanded, PATH_MAX) == 0 &&
	    expand_origin(file, expanded, expanded + PATH_MAX, PATH_MAX) == 0)
		file = expanded + PATH_MAX;
	void *h = fn(lmid, file, mode);
	free(expanded);
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

/*
 * Threads and SIGPROF, for ENORMOUSTEXT_RECORD's timer (record.c): while it
 * samples, a new thread gets a CPU-time timer of its own before it runs its
 * code, and a SIGPROF disposition the program sets stops the timers first.
 * Otherwise both pass straight through.
 */
typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

ET_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static void *real;
	pthread_create_fn next = (pthread_create_fn)next_symbol(&real, "pthread_create");
	if (!next)
		return EAGAIN;
	void *w = et_record_threads_sampled() ? et_record_thread_wrap(fn, arg) : NULL;
	if (!w)
		return next(t, attr, fn, arg);
	int r = next(t, attr, et_record_thread_start, w);
	if (r != 0)
		free(w);
	return r;
}

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*sighandler_fn)(int);
typedef sighandler_fn (*signal_fn)(int, sighandler_fn);

ET_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static void *real;
	sigaction_fn next = (sigaction_fn)next_symbol(&real, "sigaction");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if (sig == SIGPROF && act)
		et_record_sigprof_change((act->sa_flags & SA_SIGINFO) ? (const void *)act->sa_sigaction :
		                                                          (const void *)act->sa_handler);
	return next(sig, act, old);
}

ET_EXPORT sighandler_fn signal(int sig, sighandler_fn handler)
{
	static void *real;
	signal_fn next = (signal_fn)next_symbol(&real, "signal");
	if (!next) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	if (sig == SIGPROF)
		et_record_sigprof_change((const void *)handler);
	return next(sig, handler);
}
