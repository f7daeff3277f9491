/*
 * runtime/other.h — another copy of this library in the same process
 * (say, linked statically into the program and also preloaded): the first
 * one in the global scope does the work, the others answer the API with
 * its figures.
 */
#ifndef ET_RUNTIME_OTHER_H
#define ET_RUNTIME_OTHER_H

#include "core/base.h"
#include "enormoustext.h"

struct et_other {
	int (*stats)(struct enormoustext_stats *);
	int (*count)(void);
	int (*object)(unsigned, struct enormoustext_object *);
	int (*refresh)(void);
};
/* Set by et_other_find when another copy acts; all NULL otherwise. */
ET_HIDDEN extern struct et_other et_other;
/* Does another copy's public API come first in the global scope?  Then
 * et_other holds its entry points.  A symbol lookup: takes the loader's
 * lock. */
ET_HIDDEN bool et_other_find(void);
/* The same from the library's constructor, where the loader's list cannot
 * change under a walk (before main, or inside the dlopen that loads this
 * copy, under the loader's lock): the list is walked first, and dlsym is
 * asked only where another object may define the API. */
ET_HIDDEN bool et_other_find_in_constructor(void);

#endif
