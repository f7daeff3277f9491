/*
 * runtime/other.c — finding another copy of the library in the process.
 *
 * Owns: et_other, the other copy's entry points.
 * May call: os (the loader's list, walked from the constructor, where it
 * cannot change: a process with one copy, the usual case, asks dlsym
 * nothing at start-up), the loader (dlsym).
 * Never: is called from inside dl_iterate_phdr with our lock held by a
 * thread that waits for the loader (dlsym takes the loader's lock).
 */
#include "runtime/other.h"
#include "os/os.h"

#include <dlfcn.h>

/* Is p in the same loaded object as this code?  (Not "p == &our own
 * function": naming the API here would make this module call api.c.) */
static bool in_this_object(void *p)
{
	Dl_info a, b;
	if (!dladdr(p, &a) || !dladdr((void *)&et_other_find, &b))
		return true;   /* cannot tell: act as the only copy, as without a match */
	return a.dli_fbase == b.dli_fbase;
}

struct et_other et_other;

ET_STARTUP bool et_other_find_in_constructor(void)
{
	/* dlsym's search touches pages of the loader's and a deep stack that
	 * a process with one copy need not: asked only where another object
	 * may define the name.  (Not after start-up: the walk takes no lock,
	 * and a dlclose in another thread could free what it reads.) */
	if (!et_os_defined_elsewhere("enormoustext_get_stats"))
		return false;
	return et_other_find();
}

bool et_other_find(void)
{
	void *p = dlsym(RTLD_DEFAULT, "enormoustext_get_stats");
	if (!p || in_this_object(p))
		return false;
	et_other.stats = (int (*)(struct enormoustext_stats *))p;
	et_other.count = (int (*)(void))dlsym(RTLD_DEFAULT, "enormoustext_object_count");
	et_other.object = (int (*)(unsigned, struct enormoustext_object *))
		dlsym(RTLD_DEFAULT, "enormoustext_get_object");
	et_other.refresh = (int (*)(void))dlsym(RTLD_DEFAULT, "enormoustext_refresh");
	if (!et_other.count || !et_other.object || !et_other.refresh) {
		et_other.stats = NULL;
		return false;
	}
	return true;
}
