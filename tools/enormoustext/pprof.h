/*
 * pprof.h — pprof profiles (profile.proto) read into a profile's counts
 * (pprof.c, built only with protobuf-c and zlib: ET_TOOL_PPROF), for
 * import.c, which tells the formats apart and undoes the gzip.
 */
#ifndef ET_TOOL_PPROF_H
#define ET_TOOL_PPROF_H

#include "import.h"

#ifdef ET_TOOL_PPROF
/* A pprof profile (decompressed) into the counts (attrib.h): 0, or -1
 * after one line naming name and what is wrong. */
int et_pprof_import(const char *name, const uint8_t *buf, size_t len, struct et_import_filter *f);
#endif

#endif
