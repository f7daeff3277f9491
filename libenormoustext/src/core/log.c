/*
 * core/log.c — the one log facility.
 *
 * Every line starts with "enormoustext: ", is formatted into a stack buffer
 * and leaves with a single write(2) to stderr: no stdio buffer, no malloc,
 * errno preserved — it is called from a constructor that may run before the
 * program's allocator or stdio are ready.
 *
 * Owns: the level and whether the user silenced the library.
 * May call: libc (vsnprintf into a stack buffer, write).
 * Never: prints when silenced (ENORMOUSTEXT_VERBOSE=0), not even a warning.
 */
#include "core/log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int log_level;        /* lines at or below this level are written */
static bool log_silenced;    /* the user said ENORMOUSTEXT_VERBOSE=0 */
static int (*log_get)(void);
static void (*log_done)(int);

ET_STARTUP void et_log_route(int (*get)(void), void (*done)(int))
{
	__atomic_store_n(&log_done, done, __ATOMIC_RELEASE);
	__atomic_store_n(&log_get, get, __ATOMIC_RELEASE);
}

ET_STARTUP void et_log_setup(int verbose, bool silenced)
{
	log_level = verbose;
	log_silenced = silenced;
}

bool et_log_enabled(int level)
{
	if (level == 0)
		return !log_silenced;
	return level <= log_level;
}

void et_log(int level, const char *fmt, ...)
{
	if (!et_log_enabled(level))
		return;
	int saved = errno;
	char buf[1024];
	static const char prefix[] = "enormoustext: ";
	size_t n = sizeof prefix - 1;
	memcpy(buf, prefix, n);
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
	va_end(ap);
	if (k < 0)
		k = 0;
	if ((size_t)k > sizeof buf - n - 2)
		k = (int)(sizeof buf - n - 2);
	n += (size_t)k;
	buf[n++] = '\n';
	int (*get)(void) = __atomic_load_n(&log_get, __ATOMIC_ACQUIRE);
	int fd = get ? get() : 2;
	const char *p = buf;
	while (fd >= 0 && n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		n -= (size_t)w;
	}
	void (*done)(int) = __atomic_load_n(&log_done, __ATOMIC_ACQUIRE);
	if (get && done)
		done(fd);
	errno = saved;
}

/* errno as text without strerror: inside a pass the loader's list lock is
 * held, and strerror may translate through gettext, which may load a
 * conversion module with dlopen. */
const char *et_errno_text(int e, char buf[24])
{
	switch (e) {
	case EPERM: return "operation not permitted";
	case ENOENT: return "no such file or directory";
	case EINTR: return "interrupted";
	case EIO: return "input/output error";
	case EAGAIN: return "resource temporarily unavailable";
	case ENOMEM: return "out of memory";
	case EACCES: return "permission denied";
	case EFAULT: return "bad address";
	case EBUSY: return "device or resource busy";
	case EEXIST: return "file exists";
	case EINVAL: return "invalid argument";
	case ENOSPC: return "no space left on device";
	case EROFS: return "read-only file system";
	case ENAMETOOLONG: return "file name too long";
	case E2BIG: return "argument list too long";
	default:
		snprintf(buf, 24, "errno %d", e);
		return buf;
	}
}
