/*
 * runtime/other.c — finding another copy of the library in the process.
 *
 * Owns: et_other, the other copy's entry points.
 * May call: the loader (dlsym).
 * Never: is called from inside dl_iterate_phdr with our lock held by a
 * thread that waits for the loader (dlsym takes the loader's lock).
 */
#include "runtime/other.h"

#include <dlfcn.h>

struct et_other et_other;

bool et_other_find(void)
{
	void *p = dlsym(RTLD_DEFAULT, "enormoustext_get_stats");
	if (!p || p == (void *)&enormoustext_get_stats)
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
