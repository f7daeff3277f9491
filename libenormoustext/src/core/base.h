/*
 * core/base.h — what every module of libenormoustext includes first: the
 * name the modules above os/ include it by.  Its content is os/base.h,
 * on the lowest floor, which os/ includes itself (a floor includes only
 * its own headers and those below it: tests/layout/modules.sh).
 */
#ifndef ET_CORE_BASE_H
#define ET_CORE_BASE_H

#include "os/base.h"

#endif
