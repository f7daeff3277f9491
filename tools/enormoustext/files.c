/*
 * tools/enormoustext/files.c — small files, read whole and written whole,
 * as every subcommand that keeps a file of its own needs them: read into a
 * buffer (a regular file, never through a link), written beside and renamed
 * in with the directory fsync'ed (a reader never sees half of it, a crash
 * leaves the old one), the directories above made.
 *
 * Owns: et_tool_slurp, et_tool_read_fd (and their _text forms), et_tool_write_atomic,
 * et_tool_sync_dir, et_tool_make_parents.
 * May call: output.c (et_out: the beside-and-rename writer), msg.c.
 * Never: follows a link when it reads or replaces; leaves a half-written
 * file under the name.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* All of fd (at most max bytes, 0: no bound) in a malloc'd buffer,
 * NUL-terminated; 0 or -errno. */
int et_tool_read_fd(int fd, char **buf, size_t *len, size_t max)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap + 1);
	*buf = NULL;
	*len = 0;
	for (;;) {
		if (!b)
			return -ENOMEM;
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			return -e;
		}
		if (r == 0 || (max && n + (size_t)r >= max)) {
			n += (size_t)r;
			break;
		}
		n += (size_t)r;
		if (n == cap) {
			cap *= 2;
			char *nb = realloc(b, cap + 1);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* The whole file in a malloc'd buffer (NUL-terminated); 0 or -errno. */
int et_tool_slurp(const char *path, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	struct stat st;
	int e = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ? -EINVAL : et_tool_read_fd(fd, buf, len, 0);
	close(fd);
	return e;
}

/* The same, the buffer returned (NULL on any failure): for callers that
 * want only the text.  Here, not in a wrapper beside each caller: a
 * wrapper returning its own local through the pointer made gcc 12 warn of
 * a dangling pointer at -O3 (Release) in every caller that parsed it. */
char *et_tool_slurp_text(const char *path)
{
	char *b = NULL;
	size_t n;
	return et_tool_slurp(path, &b, &n) == 0 ? b : NULL;
}

char *et_tool_read_fd_text(int fd, size_t max)
{
	char *b = NULL;
	size_t n;
	return et_tool_read_fd(fd, &b, &n, max) == 0 ? b : NULL;
}

void et_tool_sync_dir(const char *path)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
		return;   /* longer than any path the kernel takes */
	char *s = strrchr(dir, '/');
	if (!s)
		return;
	if (s == dir)
		s[1] = '\0';
	else
		*s = '\0';
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* path written beside and renamed in, mode, fsync'ed: 0, or ET_EXIT_BAD
 * after one line naming path (what was there stays). */
int et_tool_write_atomic(const char *path, const char *data, size_t len, mode_t mode)
{
	struct et_out o;
	int e = et_out_open(&o, path, ET_OUT_NOFOLLOW | ET_OUT_FILES_ONLY);
	if (e) {
		et_tool_out_error(path, &o, e);
		return ET_EXIT_BAD;
	}
	e = et_out_write(&o, data, len);
	if (!e && o.mode == ET_OUT_REPLACE && fchmod(o.fd, mode) != 0)
		e = -errno;
	if (!e && fsync(o.fd) != 0)
		e = -errno;
	if (e) {
		et_out_abort(&o);
		et_tool_out_error(path, NULL, e);
		return ET_EXIT_BAD;
	}
	e = et_out_commit(&o);
	if (e) {
		et_tool_out_error(path, &o, e);
		return ET_EXIT_BAD;
	}
	et_tool_sync_dir(path);
	return 0;
}

/* mkdir -p of the directory that holds path (0755); 0 or ET_EXIT_BAD. */
int et_tool_make_parents(const char *path)
{
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s", path);
	char *s = strrchr(d, '/');
	if (!s || s == d)
		return 0;
	*s = '\0';
	for (char *p = d + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char keep = *p;
			*p = '\0';
			struct stat st;
			if (mkdir(d, 0755) != 0 && errno != EEXIST) {
				et_tool_err("cannot make the directory %s: %s", d, strerror(errno));
				return ET_EXIT_BAD;
			}
			if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
				et_tool_err("%s: not a directory", d);
				return ET_EXIT_BAD;
			}
			*p = keep;
			if (!keep)
				break;
		}
	}
	return 0;
}
