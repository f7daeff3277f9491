/*
 * core/util.h — small helpers every module may use: working memory that is
 * not malloc's, the clock, strings, one-line files.  No process state.
 */
#ifndef ET_CORE_UTIL_H
#define ET_CORE_UTIL_H

#include "core/base.h"

/* Working memory: an anonymous private mapping (never malloc: see base.h). */
ET_HIDDEN void *et_scratch_alloc(size_t len);
ET_HIDDEN void et_scratch_free(void *p, size_t len);
ET_HIDDEN uint64_t et_now_ns(void);
ET_HIDDEN size_t et_strlcpy(char *dst, const char *src, size_t cap);
/* A build-id (at most 20 bytes) in lower-case hex. */
ET_HIDDEN void et_hex_build_id(const unsigned char *d, size_t n, char out[41]);
/* Read a small file whole, without stdio: bytes read (NUL-ended), or -errno. */
ET_HIDDEN long et_read_file(const char *path, char *buf, size_t cap);
/* Under a finite RLIMIT_AS, is there room to work without taking what the
 * program may need?  (util.c: the rule and its margin.) */
ET_HIDDEN bool et_as_headroom_ok(void);
/* "%p" in a path becomes the process id; 0 or -ENAMETOOLONG. */
ET_HIDDEN int et_expand_path(const char *in, char *out, size_t cap);

#endif
