/*
 * core/outfile.h — the one way a file the user named is written, by the
 * library and by the command.
 */
#ifndef ET_CORE_OUTFILE_H
#define ET_CORE_OUTFILE_H

#include "core/util.h"

/* Writing a file the user named (outfile.c; the library and the command):
 * a regular file or nothing there is written beside and renamed into place
 * (new files 0600; a replaced one keeps its mode), a character device or a
 * FIFO is written as it is (a FIFO with no reader is skipped), a symbolic
 * link is followed as `>` would, anything else is refused.  No malloc, no
 * stdio stream, errno kept for the caller. */

enum et_out_mode { ET_OUT_CLOSED = 0, ET_OUT_REPLACE, ET_OUT_DIRECT };
#define ET_OUT_NOFOLLOW 1u     /* a symbolic link at the path is left alone, not followed */
#define ET_OUT_FILES_ONLY 2u   /* only a regular file (or nothing) there: devices and FIFOs left alone */
#define ET_OUT_KEEP 4u         /* the new file starts with the content of the one it replaces */
#define ET_OUT_READABLE 8u     /* a new file is 0644 (less the umask), not 0600: for other users to
                                  read (a metrics file for node_exporter's textfile collector) */

struct et_out {
	int fd;                    /* what et_out_write writes to; -1 when closed */
	enum et_out_mode mode;
	int err;                   /* the first write error (errno), 0 none */
	bool skipped;              /* a FIFO with no reader: not an error, nothing written */
	bool existed;              /* ET_OUT_REPLACE: a regular file was there (dev, ino) */
	const char *type;          /* refused for what it is: "a directory", ...; NULL: errno says */
	const char *policy;        /* with type: the rule that refused it */
	uint64_t dev, ino;
	char path[PATH_MAX];       /* the file written (symbolic links followed) */
	char tmp[PATH_MAX];        /* ET_OUT_REPLACE: the temporary beside it */
};

/* 0, or -errno with nothing written (o->type says why where the path was
 * refused for what it is; o->skipped for a FIFO with no reader). */
ET_HIDDEN int et_out_open(struct et_out *o, const char *path, unsigned flags);
/* Write all of buf; 0 or -errno (kept: later writes fail the same). */
ET_HIDDEN int et_out_write(struct et_out *o, const void *buf, size_t n);
/* Close, and rename the temporary into place; 0 or -errno (on any error the
 * temporary is removed and the old file stays).  Also when the caller has
 * closed o->fd itself (set it to -1). */
ET_HIDDEN int et_out_commit(struct et_out *o);
/* Close and remove the temporary: the target is left as it was. */
ET_HIDDEN void et_out_abort(struct et_out *o);
/* "a directory (only ... is written)" when the path was refused for its
 * type (into buf), NULL when errno is the reason. */
ET_HIDDEN const char *et_out_why(const struct et_out *o, char *buf, size_t cap);
/* errno as text for these failures, without strerror (see et_errno_text). */
ET_HIDDEN const char *et_out_errno_text(int e, char buf[24]);
/* A sink (util.h) into o, through buf (cap bytes, the caller's): what the
 * JSON and profile writers write goes to et_out_write, an error staying in
 * o->err for et_out_commit to return. */
ET_HIDDEN void et_out_sink(struct et_sink *s, struct et_out *o, char *buf, size_t cap);

#endif
