/*
 * runtime/hostwide.c — the host-wide preload: /etc/ld.so.preload loads the
 * library into every dynamically linked program on the host, and only the
 * programs in /etc/enormoustext/binaries (`enormoustext enable --binary`)
 * act; in every other one the constructor returns at once, as with
 * ENORMOUSTEXT=0 but silent whatever the environment says: nothing moved,
 * no thread, no message, and the wrappers (interpose/) pass every call
 * straight to libc.
 *
 * Which way this copy was loaded: the loader keeps the name it was given
 * for each object (dladdr's dli_fname), and /etc/ld.so.preload names the
 * library through a path of its own, /etc/enormoustext/preload/NAME (a
 * symbolic link, core/hostwide.h).  Loaded any other way (LD_PRELOAD with
 * the library's own path, `enormoustext run`, linked) the list is not
 * read and the library does what its environment says.
 *
 * Which program this is: readlink("/proc/self/exe"), the kernel's own
 * name for the executable, with every symbolic link resolved (the command
 * stores each path resolved, realpath(3)); one system call.  AT_EXECFN
 * would cost nothing but is the path as execve was given it (relative, or
 * through a link) and would need resolving by hand.  Without /proc, a
 * deleted program (" (deleted)"), or a list that cannot be read, the
 * answer is "not listed": the library stands down.
 *
 * Cost in a program that is not listed: one dladdr, one readlink, and an
 * open, read and close of the list; nothing allocated (the start-up path
 * has no malloc: core/util.h).
 *
 * The off switch (et_hostwide_off): /etc/enormoustext/off exists, and every
 * copy stands down, however it was loaded: one access(2) per process, the
 * call the loader itself made for /etc/ld.so.preload.
 *
 * Owns: the decision "listed or not" for a copy loaded host-wide; the off
 * switch.
 * May call: libc (dladdr, readlink, open, read, close), os/ (the off
 * switch's access).
 * Never: reads the environment, writes, allocates, says anything.
 */
#include "runtime/hostwide.h"

#include "core/hostwide.h"
#include "os/os.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Written out, not strcmp/memcmp: each first call of a libc function on
 * this path costs a lazy binding in every process of the host. */
static bool same(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* Was this copy loaded through a path in ".../enormoustext/preload/"? */
static bool loaded_hostwide(void)
{
	Dl_info self;
	if (!dladdr((void *)&loaded_hostwide, &self) || !self.dli_fname)
		return false;
	const char *f = self.dli_fname, *slash = NULL;
	for (const char *p = f; *p; p++)
		if (*p == '/')
			slash = p;
	const size_t dl = sizeof ET_HOSTWIDE_DIR - 1;
	if (!slash || (size_t)(slash - f) < dl + 1)
		return false;
	const char *dir = slash - dl;
	return dir[-1] == '/' && same(dir, ET_HOSTWIDE_DIR, dl);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* One line of the list (len bytes, no newline): is it this program? */
static bool line_is(const char *line, size_t len, const char *exe, size_t n)
{
	while (len && is_blank(*line)) {
		line++;
		len--;
	}
	while (len && is_blank(line[len - 1]))
		len--;
	return len == n && line[0] != '#' && same(line, exe, n);
}

/* Is exe (n bytes) a line of the list open at fd?  Read in pieces, any
 * length; a line longer than a path can be matches nothing. */
static bool listed(int fd, const char *exe, size_t n)
{
	char buf[4096], line[PATH_MAX + 64];
	size_t len = 0;
	bool too_long = false;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] == '\n') {
				if (!too_long && line_is(line, len, exe, n))
					return true;
				len = 0;
				too_long = false;
			} else if (len < sizeof line) {
				line[len++] = buf[i];
			} else {
				too_long = true;
			}
		}
	}
	return !too_long && line_is(line, len, exe, n);
}

bool et_hostwide_stands_down(void)
{
	if (!loaded_hostwide())
		return false;
	int e = errno;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
	if (n <= 0 || (size_t)n >= sizeof exe) {
		errno = e;
		return true;
	}
	int fd = open(ET_HOSTWIDE_LIST, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	bool in = fd >= 0 && listed(fd, exe, (size_t)n);
	if (fd >= 0)
		close(fd);
	errno = e;
	return !in;
}

/* The same system call glibc's loader made before the program started
 * (access, or faccessat where there is no access: its check of
 * /etc/ld.so.preload), so that a seccomp filter the process was started
 * under lets it through; made directly (os/), since libc's access would
 * cost a lazy binding in every process started. */
bool et_hostwide_off(void)
{
	int e = errno;
#ifdef SYS_access
	bool off = et_os_sys6(SYS_access, (long)ET_HOSTWIDE_OFF, F_OK, 0, 0, 0, 0) == 0;
#else
	bool off = et_os_sys6(SYS_faccessat, AT_FDCWD, (long)ET_HOSTWIDE_OFF, F_OK, 0, 0, 0) == 0;
#endif
	errno = e;
	return off;
}
