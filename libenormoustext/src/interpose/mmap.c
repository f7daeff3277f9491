/*
 * interpose/mmap.c — mmap, mmap64 and mprotect, for ENORMOUSTEXT_MODE=2
 * and 3 (runtime/jit.c: JIT code on huge pages).
 *
 * Nearly every call goes straight on: one load (et_jit_pmd, 0 unless the
 * mode asks for JIT code) and a sibling call to libc's function, which
 * returns to the program itself.  Only executable mappings, reservations
 * of at least one window (PROT_NONE) and mprotect adding PROT_EXEC go
 * through runtime/jit.c, which calls libc's function as the program did
 * and adds advice (madvise) around it.  The next definitions are found at
 * the first call, by os/next.c's own lookup where the C library is glibc
 * (no lock, no allocation: mmap is called in vfork children and after
 * fork, where a dlsym is not safe), and in a constructor elsewhere; where
 * libc's cannot be found, the system call itself.
 *
 * Owns: those symbols as the program sees them.
 * May call: the next definition of each (libc's), runtime/jit.h, os/.
 * Never: changes what the call does, returns or leaves in errno; is called
 * by the library itself (its own calls are system calls: os/mm.c).
 */
#include "interpose/interpose.h"
#include "runtime/jit.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *g_mmap, *g_mprotect;
#ifdef __GLIBC__
static void *g_mmap64;
#endif

#ifndef __GLIBC__
__attribute__((constructor)) static void mmap_resolve(void)
{
	(void)next_symbol(&g_mmap, "mmap");
	(void)next_symbol(&g_mprotect, "mprotect");
}
#endif

/* The next definition at a call: glibc's is looked up at the first call
 * (os/next.c, no lock); elsewhere the constructor's answer, or NULL (the
 * system call), never a dlsym inside the program's call. */
#ifdef __GLIBC__
#define NEXT_AT_CALL(cache, name) next_symbol(cache, name)
#else
#define NEXT_AT_CALL(cache, name) __atomic_load_n(cache, __ATOMIC_ACQUIRE)
#endif

static int sys_mprotect(void *addr, size_t len, int prot)
{
	return et_os_protect(addr, len, prot);
}

ET_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	et_mmap_fn next = (et_mmap_fn)__atomic_load_n(&g_mmap, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!next, 0))
		next = (et_mmap_fn)NEXT_AT_CALL(&g_mmap, "mmap");
	if (__builtin_expect(!next || et_jit_wants_mmap(len, prot), 0))
		return et_jit_mmap(next, addr, len, prot, flags, fd, off);
	return next(addr, len, prot, flags, fd, off);
}

#ifdef __GLIBC__   /* musl's <sys/mman.h> may make mmap64 a macro for mmap */
ET_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	et_mmap_fn next = (et_mmap_fn)__atomic_load_n(&g_mmap64, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!next, 0))
		next = (et_mmap_fn)NEXT_AT_CALL(&g_mmap64, "mmap64");
	if (!next)
		next = (et_mmap_fn)NEXT_AT_CALL(&g_mmap, "mmap");
	if (__builtin_expect(!next || et_jit_wants_mmap(len, prot), 0))
		return et_jit_mmap(next, addr, len, prot, flags, fd, off);
	return next(addr, len, prot, flags, fd, off);
}
#endif

ET_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	et_mprotect_fn next = (et_mprotect_fn)__atomic_load_n(&g_mprotect, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!next, 0))
		next = (et_mprotect_fn)NEXT_AT_CALL(&g_mprotect, "mprotect");
	if (__builtin_expect(!next, 0))
		next = sys_mprotect;
	if (__builtin_expect(et_jit_wants_mprotect(prot), 0))
		return et_jit_mprotect(next, addr, len, prot);
	return next(addr, len, prot);
}
