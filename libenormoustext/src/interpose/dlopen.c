/*
 * interpose/dlopen.c — libraries loaded after start-up.
 *
 * This library defines dlopen, dlmopen (glibc) and dlclose, so that calls
 * from the program and its libraries come here first (preloaded, or linked
 * ahead of libc); each reaches the loader's own function, found with
 * dlsym(RTLD_NEXT), and then asks runtime/pass.c for a pass over what the loader
 * added or removed.  No lock of ours is held while the loader runs: the
 * new library's constructors and destructors may dlopen, dlclose, fork or
 * start threads as they please.
 *
 * WHICH LIBRARY A dlopen LOADS MUST NOT CHANGE.  glibc finds the calling
 * object from dlopen's return address and searches with *its* DT_RPATH /
 * DT_RUNPATH, expands $ORIGIN against *its* directory and loads into *its*
 * namespace.  A wrapper that calls the loader makes itself the caller, and
 * no re-resolution by hand can be exact (the loader's own matching of
 * loaded names, its cache, hwcaps subdirectories, class checks...).  So
 * dlopen and dlmopen are two tiny assembly stubs that ask et_dlopen_route
 * which way to go and then *jump* there with the caller's stack and return
 * address untouched:
 *   - when the request resolves the same from here as from the caller
 *     (resolves_as_here: same namespace, no $ string, and either a path or
 *     a bare name with no RUNPATH/RPATH/NODEFLIB that would make the
 *     caller's search differ from ours), to et_dlopen_direct, which calls
 *     the loader and runs the pass right after;
 *   - otherwise straight to the loader's dlopen, which then sees the real
 *     caller and returns to it.  What it loaded is moved at the next pass
 *     (the next dlopen or dlclose, or any call of the API), not at once.
 * musl's dlopen does not depend on the caller, so there a plain wrapper is
 * exact.  Elsewhere (no stub for the architecture) the wrapper is C and
 * always direct: the old behaviour, with this caveat.
 *
 * Owns: dlopen, dlmopen, dlclose as the program sees them.
 * May call: the loader's own functions, runtime/pass.h's et_after_* (the
 * narrow interface into the runtime).
 * Never: holds a lock of ours while the loader runs; changes which library
 * a dlopen loads, or what dlerror says.
 */
#include "interpose/interpose.h"
#include "runtime/pass.h"

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

static void *g_real_dlopen;

/* The loader's dlopen after ours, then the pass.  Entered by a jump from
 * the stub (or called by the C wrapper): it returns to the program. */
ET_HIDDEN void *et_dlopen_direct(const char *file, int mode);
void *et_dlopen_direct(const char *file, int mode)
{
	dlopen_fn fn = (dlopen_fn)next_symbol(&g_real_dlopen, "dlopen");
	if (!fn)
		return NULL;
	void *h = fn(file, mode);
	int e = errno;
	/* After a failure, nothing that could reset the loader's error text
	 * (dlerror) before the caller reads it: see et_after_failed_dlopen. */
	if (h)
		et_after_dlopen();
	else
		et_after_failed_dlopen();
	errno = e;
	return h;
}

#ifdef __GLIBC__
static void *dlopen_missing(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}

/* The object that holds address p (NULL when none: JIT code, say). */
static struct link_map *map_of(const void *p)
{
	struct link_map *lm = NULL;
	Dl_info di;
	if (!p || !dladdr1(p, &di, (void **)&lm, RTLD_DL_LINKMAP))
		return NULL;
	return lm;
}

/* Does the object's dynamic section have this tag (and, for DT_FLAGS_1,
 * this bit)? */
static bool has_dyn(const struct link_map *l, long tag, unsigned long bit)
{
	for (const ElfW(Dyn) *d = l ? l->l_ld : NULL; d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == tag && (!bit || (d->d_un.d_val & bit)))
			return true;
	return false;
}

/*
 * Would the loader resolve `file` the same for `caller` as for this
 * library?  Only when provably so; the cost is a dladdr and a walk over the
 * loaded objects' dynamic sections, on each dlopen.
 *   - The namespace: the caller's must be the base one (ours).
 *   - A '$' (a dynamic string token: $ORIGIN is the caller's directory).
 *   - A path (a '/') or NULL: no search at all.
 *   - A bare name: searched along the caller's DT_RPATH (unless it has a
 *     DT_RUNPATH), the RPATHs of the objects that loaded it, the
 *     program's DT_RPATH, LD_LIBRARY_PATH, the caller's DT_RUNPATH, the
 *     cache and the default directories (unless the caller is
 *     DF_1_NODEFLIB).  From here: the same minus whatever the caller and
 *     its loaders add.  So the same when the caller has no RUNPATH and no
 *     NODEFLIB, no object but the program has a DT_RPATH (that covers the
 *     chain of loaders, which is not visible), and neither have we.  The
 *     new object's own dependencies then resolve the same too (the chain
 *     of loaders they walk differs only by objects without RPATH).
 */
static bool resolves_as_here(const char *file, const void *caller)
{
	if (getauxval(AT_SECURE))
		return false;   /* nothing to gain there: always the loader's own way */
	if (file && strchr(file, '$'))
		return false;
	struct link_map *self = map_of((const void *)&resolves_as_here);
	if (!self)
		return false;
	struct link_map *head = self;
	while (head->l_prev)
		head = head->l_prev;   /* the program, first of the base namespace */
	struct link_map *lm = map_of(caller);
	if (!lm)
		lm = head;             /* the loader's choice for an unknown caller */
	Lmid_t ns = -1;
	if (lm != head && lm != self && (dlinfo(lm, RTLD_DI_LMID, &ns) != 0 || ns != LM_ID_BASE))
		return false;
	if (!file || strchr(file, '/'))
		return true;
	if (has_dyn(lm, DT_RUNPATH, 0) || has_dyn(lm, DT_FLAGS_1, DF_1_NODEFLIB))
		return false;
	if (has_dyn(self, DT_RUNPATH, 0) || has_dyn(self, DT_RPATH, 0) ||
	    has_dyn(self, DT_FLAGS_1, DF_1_NODEFLIB))
		return false;
	for (const struct link_map *l = head->l_next; l; l = l->l_next)
		if (has_dyn(l, DT_RPATH, 0))
			return false;
	return true;
}

/* Which way a stub goes (see the top of this file): the loader's function
 * `name` (cached in *real), our direct path, or `missing` when the loader
 * has none.  A request that goes to the loader untouched asks for a pass
 * later.  errno is kept. */
static void *route(void **real, const char *name, void *direct, void *missing, const char *file,
                   const void *caller)
{
	int e = errno;
	void *fn = next_symbol(real, name);
	void *to = !fn ? missing : resolves_as_here(file, caller) ? direct : fn;
	if (to == fn)
		et_after_untracked_dlopen();
	errno = e;
	return to;
}

ET_HIDDEN void *et_dlopen_route(const char *file, int mode, const void *caller);
__attribute__((used)) void *et_dlopen_route(const char *file, int mode, const void *caller)
{
	(void)mode;
	return route(&g_real_dlopen, "dlopen", (void *)et_dlopen_direct, (void *)dlopen_missing, file, caller);
}

typedef void *(*dlmopen_fn)(Lmid_t, const char *, int);
static void *g_real_dlmopen;

static void *dlmopen_missing(Lmid_t lmid, const char *file, int mode)
{
	(void)lmid;
	(void)file;
	(void)mode;
	return NULL;
}

ET_HIDDEN void *et_dlmopen_direct(Lmid_t lmid, const char *file, int mode);
void *et_dlmopen_direct(Lmid_t lmid, const char *file, int mode)
{
	dlmopen_fn fn = (dlmopen_fn)next_symbol(&g_real_dlmopen, "dlmopen");
	if (!fn)
		return NULL;
	void *h = fn(lmid, file, mode);
	if (!h)
		return h;
	int e = errno;
	/* dl_iterate_phdr shows only the caller's namespace: hand over the
	 * new namespace's own list of objects. */
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm) {
		while (lm->l_prev)
			lm = lm->l_prev;
		et_after_dlmopen(lm);
	}
	errno = e;
	return h;
}

/* The namespace is the caller's choice, the search the caller's own: the
 * same test as for dlopen.  A namespace reached through the loader's own
 * dlmopen is moved by the next pass (init.c walks every namespace). */
ET_HIDDEN void *et_dlmopen_route(Lmid_t lmid, const char *file, int mode, const void *caller);
__attribute__((used)) void *et_dlmopen_route(Lmid_t lmid, const char *file, int mode, const void *caller)
{
	(void)lmid;
	(void)mode;
	return route(&g_real_dlmopen, "dlmopen", (void *)et_dlmopen_direct, (void *)dlmopen_missing, file,
	             caller);
}

/*
 * THE STUBS.  Each saves the argument registers, asks the route function
 * (with the return address, i.e. the caller), restores them and jumps:
 * the stack and the return address are exactly as the caller left them,
 * so the loader's dlopen sees the caller and returns to it.  Never a
 * `call` to the loader from here.
 */
#if defined(__x86_64__)
#if defined(__CET__) && (__CET__ & 1)
#define ET_ENDBR "endbr64\n"
#else
#define ET_ENDBR ""
#endif
__asm__(
	".text\n"
	".globl dlopen\n"
	".type dlopen, @function\n"
	".p2align 4\n"
	"dlopen:\n"
	".cfi_startproc\n"
	ET_ENDBR
	"pushq %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"pushq %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"subq $8, %rsp\n"               /* 16-byte aligned for the call */
	".cfi_adjust_cfa_offset 8\n"
	"movq 24(%rsp), %rdx\n"         /* the return address: the caller */
	"call et_dlopen_route\n"
	"addq $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"popq %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"popq %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"jmp *%rax\n"
	".cfi_endproc\n"
	".size dlopen, .-dlopen\n"
	"\n"
	".globl dlmopen\n"
	".type dlmopen, @function\n"
	".p2align 4\n"
	"dlmopen:\n"
	".cfi_startproc\n"
	ET_ENDBR
	"pushq %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"pushq %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"pushq %rdx\n"
	".cfi_adjust_cfa_offset 8\n"
	"movq 24(%rsp), %rcx\n"
	"call et_dlmopen_route\n"
	"popq %rdx\n"
	".cfi_adjust_cfa_offset -8\n"
	"popq %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"popq %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"jmp *%rax\n"
	".cfi_endproc\n"
	".size dlmopen, .-dlmopen\n");
#define ET_HAVE_DL_STUBS 1
#elif defined(__aarch64__)
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define ET_BTI_C "hint #34\n"
#else
#define ET_BTI_C ""
#endif
__asm__(
	".text\n"
	".globl dlopen\n"
	".type dlopen, %function\n"
	".p2align 2\n"
	"dlopen:\n"
	".cfi_startproc\n"
	ET_BTI_C
	"stp x29, x30, [sp, #-32]!\n"
	".cfi_def_cfa_offset 32\n"
	".cfi_offset 29, -32\n"
	".cfi_offset 30, -24\n"
	"mov x29, sp\n"
	"stp x0, x1, [sp, #16]\n"
	"mov x2, x30\n"                 /* the return address: the caller */
	"bl et_dlopen_route\n"
	"mov x16, x0\n"
	"ldp x0, x1, [sp, #16]\n"
	"ldp x29, x30, [sp], #32\n"
	".cfi_def_cfa_offset 0\n"
	".cfi_restore 29\n"
	".cfi_restore 30\n"
	"br x16\n"
	".cfi_endproc\n"
	".size dlopen, .-dlopen\n"
	"\n"
	".globl dlmopen\n"
	".type dlmopen, %function\n"
	".p2align 2\n"
	"dlmopen:\n"
	".cfi_startproc\n"
	ET_BTI_C
	"stp x29, x30, [sp, #-48]!\n"
	".cfi_def_cfa_offset 48\n"
	".cfi_offset 29, -48\n"
	".cfi_offset 30, -40\n"
	"mov x29, sp\n"
	"stp x0, x1, [sp, #16]\n"
	"str x2, [sp, #32]\n"
	"mov x3, x30\n"
	"bl et_dlmopen_route\n"
	"mov x16, x0\n"
	"ldp x0, x1, [sp, #16]\n"
	"ldr x2, [sp, #32]\n"
	"ldp x29, x30, [sp], #48\n"
	".cfi_def_cfa_offset 0\n"
	".cfi_restore 29\n"
	".cfi_restore 30\n"
	"br x16\n"
	".cfi_endproc\n"
	".size dlmopen, .-dlmopen\n");
#define ET_HAVE_DL_STUBS 1
#endif
#endif /* __GLIBC__ */

#ifndef ET_HAVE_DL_STUBS
ET_EXPORT void *dlopen(const char *file, int mode)
{
	return et_dlopen_direct(file, mode);
}
#ifdef __GLIBC__
ET_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	return et_dlmopen_direct(lmid, file, mode);
}
#endif
#endif

ET_EXPORT int dlclose(void *handle)
{
	static void *real;
	dlclose_fn fn = (dlclose_fn)next_symbol(&real, "dlclose");
	if (!fn)
		return -1;
	int r = fn(handle);
	if (r == 0) {
		int e = errno;
		et_after_dlclose();
		errno = e;
	}
	return r;
}
