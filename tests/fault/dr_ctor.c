/*
 * dr_ctor.c — a library whose constructor dlopens the name in $DR_CTOR_NAME
 * (a nested dlopen when this library is itself being dlopened; before main
 * when it is a DT_NEEDED of the program).  The loader resolves a bare name
 * with this library's own RUNPATH.  The probe reads the result back with
 * dr_ctor_handle() and dr_ctor_error(), which the constructor hands it
 * (dr_register).  Compiled by CMake into an object
 * (dlresolve.cmake), linked by the test scripts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define DR_EXPORT __attribute__((visibility("default")))

static void *handle;
static char error[1024];

DR_EXPORT void *dr_ctor_handle(void);
DR_EXPORT const char *dr_ctor_error(void);
extern void dr_register(const char *path, const char *kind, void *a, void *b) __attribute__((weak));

__attribute__((constructor)) static void dr_ctor(void)
{
	Dl_info di;
	if (dr_register && dladdr((void *)dr_ctor_handle, &di) && di.dli_fname)
		dr_register(di.dli_fname, "ctor", (void *)dr_ctor_handle, (void *)dr_ctor_error);
	const char *name = getenv("DR_CTOR_NAME");
	if (!name)
		return;
	handle = dlopen(name, RTLD_NOW);
	if (!handle) {
		const char *e = dlerror();
		strncpy(error, e ? e : "NULL, no error", sizeof error - 1);
	}
}

DR_EXPORT void *dr_ctor_handle(void)
{
	return handle;
}

DR_EXPORT const char *dr_ctor_error(void)
{
	return error;
}
