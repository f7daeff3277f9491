/*
 * tools/enormoustext/output.c — the files the command writes (-o, --svg)
 * as stdio streams over outfile.c (the library's one owner of how a
 * file the user names is written: beside and renamed in, a device or FIFO as
 * it is, a link followed, anything else refused).  Messages name the path
 * the user gave, never a temporary.  (Apart from common.c: the fuzz driver
 * of `check` links common.c without outfile.c.)
 *
 * Owns: the command's files as stdio streams (et_tool_out_*) and the one
 * message for a file that cannot be written (et_tool_out_error).
 * May call: core (outfile), msg.c.
 * Never: writes a file by hand (beside and renamed is outfile.c's).
 */
#include "tool.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* ----------------------------------------------------------- output */

/* The stream's bytes go straight to outfile.c (a FIFO's SIGPIPE is caught
 * there): what the command writes, and where, follow one set of rules. */
static ssize_t out_cookie_write(void *c, const char *buf, size_t n)
{
	struct et_tool_out *t = c;
	int e = et_out_write(&t->o, buf, n);
	if (e) {
		errno = -e;
		return -1;
	}
	return (ssize_t)n;
}

void et_tool_out_error(const char *name, const struct et_out *o, int err)
{
	char why[160];
	const char *w = o ? et_out_why(o, why, sizeof why) : NULL;
	if (w)
		et_tool_err("%s: %s%s", name, w, o->skipped ? ": nothing written" : "");
	else
		et_tool_err("%s: %s", name, strerror(err < 0 ? -err : err));
}

static FILE *out_try(struct et_tool_out *t, const char *path, unsigned flags)
{
	t->name = path;
	t->f = NULL;
	int e = et_out_open(&t->o, path, flags);
	if (e) {
		if (!t->o.skipped)
			et_tool_out_error(path, &t->o, e);
		return NULL;
	}
	static const cookie_io_functions_t io = { .write = out_cookie_write };
	t->f = fopencookie(t, "w", io);
	if (!t->f) {
		et_tool_err("%s: %s", path, strerror(errno));
		et_out_abort(&t->o);
	}
	return t->f;
}

FILE *et_tool_out_try(struct et_tool_out *t, const char *path)
{
	return out_try(t, path, 0);
}

FILE *et_tool_out_open_flags(struct et_tool_out *t, const char *path, unsigned flags)
{
	FILE *f = out_try(t, path, flags);
	if (!f && t->o.skipped)
		et_tool_out_error(path, &t->o, -ENXIO);
	return f;
}

FILE *et_tool_out_open(struct et_tool_out *t, const char *path)
{
	return et_tool_out_open_flags(t, path, 0);
}

int et_tool_out_close(struct et_tool_out *t)
{
	int bad = fflush(t->f) != 0 || ferror(t->f);
	int err = t->o.err ? t->o.err : errno;
	fclose(t->f);
	t->f = NULL;
	if (bad) {
		et_tool_out_error(t->name, NULL, err ? err : EIO);
		et_out_abort(&t->o);
		return -1;
	}
	int e = et_out_commit(&t->o);
	if (e) {
		et_tool_out_error(t->name, &t->o, e);
		return -1;
	}
	return 0;
}

bool et_tool_out_is_stdout(const char *path)
{
	struct stat a, b;
	return path && stat(path, &a) == 0 && fstat(1, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void et_tool_out_abort(struct et_tool_out *t)
{
	if (t->f)
		fclose(t->f);
	t->f = NULL;
	et_out_abort(&t->o);
}
