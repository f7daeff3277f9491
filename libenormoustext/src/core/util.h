/*
 * core/util.h — small helpers every module may use: working memory that is
 * not malloc's, the clock, strings, small files read whole, and the byte
 * sink the writers of text formats (json.c, profile.c) write through.  No
 * process state.
 */
#ifndef ET_CORE_UTIL_H
#define ET_CORE_UTIL_H

#include "core/base.h"

/* Working memory: an anonymous private mapping (never malloc: see base.h). */
ET_HIDDEN void *et_scratch_alloc(size_t len);
ET_HIDDEN void et_scratch_free(void *p, size_t len);
ET_HIDDEN uint64_t et_now_ns(void);
/* CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), 0 if none. */
ET_HIDDEN uint64_t et_thread_cpu_ns(void);
ET_HIDDEN size_t et_strlcpy(char *dst, const char *src, size_t cap);
/* A build-id (at most 20 bytes) in lower-case hex. */
ET_HIDDEN void et_hex_build_id(const unsigned char *d, size_t n, char out[41]);
/* Read a small file whole, without stdio: bytes read (at most cap - 1,
 * NUL-ended), or -errno.  et_read_fd: the same from an open descriptor,
 * from where it is to its end (or cap - 1 bytes). */
ET_HIDDEN long et_read_file(const char *path, char *buf, size_t cap);
ET_HIDDEN long et_read_fd(int fd, char *buf, size_t cap);
/* All of [off, off + n) of fd (pread, again after EINTR and short reads),
 * or false: a short file (cut meanwhile) or an error. */
ET_HIDDEN bool et_pread_all(int fd, void *buf, size_t n, uint64_t off);
/* Under a finite RLIMIT_AS, is there room to work without taking what the
 * program may need?  (util.c: the rule and its margin.) */
ET_HIDDEN bool et_as_headroom_ok(void);
/* "%p" in a path becomes the process id; 0 or -ENAMETOOLONG. */
ET_HIDDEN int et_expand_path(const char *in, char *out, size_t cap);
/* THE edit distance of the project's "did you mean" (a mistyped variable,
 * subcommand or unit): insertions, deletions, substitutions and a swap of
 * two neighbouring characters ("stauts" is 1 from "status") each count 1
 * (the optimal string alignment distance); fold_case: 'a' and 'A' are the
 * same.  Strings longer than ET_EDIT_DISTANCE_MAX are near to nothing
 * (UINT_MAX). */
#define ET_EDIT_DISTANCE_MAX 64
ET_HIDDEN unsigned et_edit_distance(const char *a, const char *b, bool fold_case);

/* Lines of a /proc file, read in pieces into a fixed buffer, no malloc.
 * A line longer than the buffer is skipped whole (an overlay mount's
 * options can run to kilobytes).  et_lines_open: false when the file
 * cannot be opened; et_lines_next: the next line, NUL-ended in place, or
 * NULL at the end (err set on a read error); et_lines_close always. */
struct et_lines {
	int fd;
	bool eof, skipping, err;
	size_t len, pos;          /* bytes in buf; start of the next line */
	char buf[1024];
};
ET_HIDDEN bool et_lines_open(struct et_lines *r, const char *path);
ET_HIDDEN char *et_lines_next(struct et_lines *r);
ET_HIDDEN void et_lines_close(struct et_lines *r);
/* The device ("major:minor", the number /proc/PID/maps gives its files)
 * of the mount whose id is mnt_id (statx's STATX_MNT_ID), from the
 * calling process's mountinfo: true and *maj, *min, or false.  On btrfs a
 * subvolume's files stat(2) with a device of their own, while maps shows
 * the file system's: this is how the two are told to be one. */
ET_HIDDEN bool et_mount_dev(uint64_t mnt_id, uint32_t *maj, uint32_t *min);
/* The same for the mount the file open at fd (path NULL), or at path, is
 * on. */
ET_HIDDEN bool et_file_mount_dev(int fd, const char *path, uint32_t *maj, uint32_t *min);

/* Where a text writer's bytes go (the JSON writer, the profile writer):
 * write(ctx, bytes, n) takes them (its errors are its own to keep: an
 * et_out keeps the first), flush(ctx), where not NULL, once the writer is
 * done.  buf/cap: a buffer in front of write, which then gets whole
 * buffers (cap 0: every piece goes straight through — a stdio stream,
 * which buffers itself).  No malloc, no stdio. */
struct et_sink {
	void (*write)(void *ctx, const char *s, size_t n);
	void (*flush)(void *ctx);
	void *ctx;
	char *buf;
	size_t cap, len;
};
ET_HIDDEN void et_sink_put(struct et_sink *s, const char *p, size_t n);
/* The buffer written out, then flush. */
ET_HIDDEN void et_sink_flush(struct et_sink *s);
/* v in decimal (base 10) or lower-case hex without 0x (base 16). */
ET_HIDDEN void et_sink_u64(struct et_sink *s, uint64_t v, unsigned base);

#endif
