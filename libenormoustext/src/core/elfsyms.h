/*
 * core/elfsyms.h — the functions of an ELF file, as perf-map lines, for
 * the text the library moved (the library's perf map, the command's
 * `perfmap`).  Reads the file; never maps it.
 */
#ifndef ET_CORE_ELFSYMS_H
#define ET_CORE_ELFSYMS_H

#include "core/outfile.h"

/* A perf-map line to out for each function of the ELF file `path` (loaded
 * at `base`) that overlaps one of the nranges ranges [ranges[2i],
 * ranges[2i+1]).  Returns how many; a write error stays in out->err.  Only
 * a regular file is read (a FIFO there never blocks), and read, not
 * mapped: a file cut short meanwhile gives fewer lines, no SIGBUS. */
ET_HIDDEN size_t et_perfmap_symbols(struct et_out *out, const char *path, uint64_t base,
                                    const uint64_t *ranges, size_t nranges);

#endif
