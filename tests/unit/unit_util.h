/*
 * unit_util.h — small helpers shared by the Criterion unit suites: a
 * scratch directory per test, writing and reading whole files, and removing
 * a tree afterwards.  Header-only (static inline) so every suite is one .c
 * file linked with the library's objects.
 *
 * Criterion runs each test in its own forked process, so a test may change
 * per-process state (prctl, mappings) without affecting the others.
 */
#ifndef UNIT_UTIL_H
#define UNIT_UTIL_H

#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline void ut_rmtree(const char *dir);

/* Directories made by ut_tmpdir in this test's process: ut_cleanup (each
 * suite's .fini) removes whatever a failed assertion left behind. */
static char ut_dirs[16][PATH_MAX];
static int ut_ndirs;

static inline void ut_cleanup(void)
{
	for (int i = 0; i < ut_ndirs; i++)
		ut_rmtree(ut_dirs[i]);
	ut_ndirs = 0;
}

/* A fresh directory under $TMPDIR (or /tmp); the caller removes it with
 * ut_rmtree (and ut_cleanup does if the test stops early).  Aborts the test
 * when it cannot be made. */
static inline void ut_tmpdir(char *out, size_t cap)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	int n = snprintf(out, cap, "%s/et-unit-XXXXXX", base);
	cr_assert(n > 0 && (size_t)n < cap, "temp dir name too long");
	cr_assert_not_null(mkdtemp(out), "mkdtemp(%s): %s", out, strerror(errno));
	if (ut_ndirs < 16)
		snprintf(ut_dirs[ut_ndirs++], PATH_MAX, "%s", out);
}

static inline int ut_rm_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static inline void ut_rmtree(const char *dir)
{
	struct stat st;
	if (lstat(dir, &st) != 0)
		return;
	nftw(dir, ut_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* mkdir -p of the directory part of `path` (everything before the last /). */
static inline void ut_mkdirs_for(const char *path)
{
	char tmp[PATH_MAX];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s", path) >= sizeof tmp)
		return;
	char *slash = strrchr(tmp, '/');
	if (!slash)
		return;
	*slash = '\0';
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
	mkdir(tmp, 0755);
}

/* Write `len` bytes to dir/rel, creating the directories on the way. */
static inline void ut_write_n(const char *dir, const char *rel, const char *text, size_t len)
{
	char path[PATH_MAX];
	int k = snprintf(path, sizeof path, "%s/%s", dir, rel);
	cr_assert(k > 0 && (size_t)k < sizeof path, "path too long");
	ut_mkdirs_for(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert(fd >= 0, "open(%s): %s", path, strerror(errno));
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		cr_assert(w > 0, "write(%s): %s", path, strerror(errno));
		off += (size_t)w;
	}
	close(fd);
}

static inline void ut_write(const char *dir, const char *rel, const char *text)
{
	ut_write_n(dir, rel, text, strlen(text));
}

/* Read a whole file into a malloc'd, NUL-terminated buffer; *len gets the
 * byte count (which may be more than strlen when the file holds NULs).
 * NULL when the file cannot be opened. */
static inline char *ut_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	cr_assert_not_null(buf);
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			cr_assert_not_null(buf);
		}
		size_t r = fread(buf + n, 1, cap - 1 - n, f);
		if (r == 0)
			break;
		n += r;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* Number of entries in a directory, not counting . and .. */
static inline int ut_count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

#define UT_KIB (UINT64_C(1) << 10)
#define UT_MIB (UINT64_C(1) << 20)
#define UT_GIB (UINT64_C(1) << 30)

#endif
