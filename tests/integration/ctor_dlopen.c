/* ctor_dlopen.c — a library whose constructor dlopens another one (the
 * path in IT_CTOR_DLOPEN): the loader is busy with us while it does. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void load_from_constructor(void)
{
	const char *p = getenv("IT_CTOR_DLOPEN");
	if (p && !dlopen(p, RTLD_NOW | RTLD_GLOBAL))
		fprintf(stderr, "ctor_dlopen: dlopen %s: %s\n", p, dlerror());
}
