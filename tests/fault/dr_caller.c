/*
 * dr_caller.c — a library that calls dlopen itself, for the
 * dlopen-resolution tests: the loader resolves a bare name with the
 * RPATH/RUNPATH of the object dlopen returns into, and $ORIGIN against that
 * object's directory.  Compiled by CMake into an object (dlresolve.cmake);
 * the test scripts link it into libraries with the paths each case needs.
 * Its constructor hands the probe its functions (dr_register).
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#define DR_EXPORT __attribute__((visibility("default")))

/* Every caller library says "caller"; the probe prints its path. */
DR_EXPORT const char *dr_ident(void)
{
	return "caller";
}

/* The call is not the last thing done, so dlopen returns here: the caller
 * is this library. */
DR_EXPORT __attribute__((noinline)) void *dr_call_dlopen(const char *name, int mode)
{
	void *h = dlopen(name, mode);
	__asm__ volatile("" : : "r"(h) : "memory");
	return h;
}

/* A tail call (dlresolve.cmake compiles this at -O2: a jump): dlopen
 * returns straight into whoever called this function, and that object is
 * the caller the loader sees. */
DR_EXPORT __attribute__((noinline)) void *dr_call_dlopen_tail(const char *name, int mode)
{
	return dlopen(name, mode);
}

/* Tell the probe (dr_probe.c) where these functions are, when the probe is
 * in this namespace. */
extern void dr_register(const char *path, const char *kind, void *a, void *b) __attribute__((weak));

__attribute__((constructor)) static void dr_caller_register(void)
{
	Dl_info di;
	if (dr_register && dladdr((void *)dr_call_dlopen, &di) && di.dli_fname)
		dr_register(di.dli_fname, "caller", (void *)dr_call_dlopen, (void *)dr_call_dlopen_tail);
}
