/*
 * tt_shrink.c — a preloaded shim for tool_check_changing: a file whose
 * name ends in ".shrinks" is cut to 100 bytes the moment the command has
 * fstat'ed it, as a writer rewriting it in place would (the command then
 * holds a size the file no longer has).  Deterministic, where a racing
 * writer is not.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void shrink(int fd)
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 8)
		return;
	path[n] = '\0';
	if (!strcmp(path + n - 8, ".shrinks"))
		(void)truncate(path, 100);
}

/* fstat and fstat64: the real one, then the cut */
#define SHRINK_AFTER(name, type)                                                   \
	int name(int fd, type *st)                                                 \
	{                                                                          \
		static int (*real)(int, type *);                                   \
		if (!real)                                                         \
			real = (int (*)(int, type *))dlsym(RTLD_NEXT, #name);      \
		int r = real(fd, st);                                              \
		if (r == 0)                                                        \
			shrink(fd);                                                \
		return r;                                                          \
	}
SHRINK_AFTER(fstat, struct stat)
SHRINK_AFTER(fstat64, struct stat64)
