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
 * Every program (`enormoustext enable --all`): the list's ET_HOSTWIDE_ALL
 * line.  Then the host's settings (ET_HOSTWIDE_CONF, core/hostconf.h) say
 * which programs act (programs=, exclude-programs=, globs on the path or
 * the name) and give every variable of the library its value where the
 * process's environment gives none (runtime/init.c's env_get): the
 * environment can still turn the library off (ENORMOUSTEXT=0), and no
 * setting can make a secure-execution process act (the constructor stops
 * at AT_SECURE before any of this).  A settings file that cannot be
 * trusted or read whole: the programs the list names act with their
 * environment alone, and no other program acts.
 *
 * Trust: the list, the settings and the off switch are used only when the
 * file (fstat of the open descriptor) and their directory are owned by
 * root and not writable by group or others; `enormoustext status` says
 * when one is not.
 *
 * Cost in a program that is not listed: one dladdr, one readlink, and an
 * open, fstat, stat, read and close of the list; with --all, an open,
 * fstat, read and close of the settings too; nothing allocated (the
 * start-up path has no malloc: core/util.h: the settings are read into a
 * static buffer).
 *
 * The off switch (et_hostwide_off): /etc/enormoustext/off exists, and every
 * copy stands down, however it was loaded: one access(2) per process, the
 * call the loader itself made for /etc/ld.so.preload.
 *
 * Owns: the decision "listed or not" for a copy loaded host-wide; the
 * host's settings as this process read them; the off switch.
 * May call: libc (dladdr, readlink, open, fstat, stat, read, close,
 * fnmatch through core/options' globs), core (hostconf's parser, the
 * option table), os/ (the off switch's access).
 * Never: reads the environment, writes, allocates, says anything, trusts
 * a file another user could have written.
 */
#include "runtime/hostwide.h"

#include "core/hostconf.h"
#include "core/hostwide.h"
#include "core/options.h"
#include "os/os.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
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

enum match { M_NO, M_ALL, M_EXACT };

/* One line of the list (len bytes, no newline): this program, every
 * program (ET_HOSTWIDE_ALL), or neither? */
static enum match line_is(const char *line, size_t len, const char *exe, size_t n)
{
	while (len && is_blank(*line)) {
		line++;
		len--;
	}
	while (len && is_blank(line[len - 1]))
		len--;
	if (!len || line[0] == '#')
		return M_NO;
	if (len == n && same(line, exe, n))
		return M_EXACT;
	if (len == sizeof ET_HOSTWIDE_ALL - 1 && same(line, ET_HOSTWIDE_ALL, len))
		return M_ALL;
	return M_NO;
}

/* Is exe (n bytes) a line of the list open at fd, or is every program?
 * Read in pieces, any length; a line longer than a path can be matches
 * nothing. */
static enum match listed(int fd, const char *exe, size_t n)
{
	char buf[4096], line[PATH_MAX + 64];
	size_t len = 0;
	bool too_long = false;
	enum match best = M_NO, m;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] == '\n') {
				if (!too_long && (m = line_is(line, len, exe, n)) > best)
					best = m;
				if (best == M_EXACT)
					return best;
				len = 0;
				too_long = false;
			} else if (len < sizeof line) {
				line[len++] = buf[i];
			} else {
				too_long = true;
			}
		}
	}
	if (!too_long && (m = line_is(line, len, exe, n)) > best)
		best = m;
	return best;
}

/* Only root could have written it (core/hostconf.c's rule). */
static bool root_file(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && !et_hostwide_untrusted(&st, false);
}

static bool root_dir(void)
{
	struct stat st;
	return stat(ET_HOSTWIDE_ETC, &st) == 0 && !et_hostwide_untrusted(&st, true);
}

/* The host's settings (ET_HOSTWIDE_CONF), once read: for the one process
 * this copy is in, never written after the constructor. */
static char g_conf_text[ET_HOSTCONF_MAX + 1];
static struct et_hostconf g_conf;
static bool g_conf_used;

/* Read the settings: 1 read and used, 0 there is no file, -1 a file that
 * cannot be trusted or read whole (not root's, writable by others, too
 * long). */
static int conf_read(void)
{
	int fd = open(ET_HOSTWIDE_CONF, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	int rc = -1;
	size_t len = 0;
	if (root_file(fd)) {
		for (;;) {
			ssize_t r = read(fd, g_conf_text + len, sizeof g_conf_text - len);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				rc = r == 0 && len < sizeof g_conf_text ? 1 : -1;
				break;
			}
			len += (size_t)r;
			if (len == sizeof g_conf_text)
				break;   /* longer than ET_HOSTCONF_MAX */
		}
	}
	close(fd);
	if (rc == 1) {
		g_conf_text[len] = '\0';
		et_hostconf_parse(g_conf_text, &g_conf);
		g_conf_used = true;
	}
	return rc;
}

bool et_hostwide_stands_down(void)
{
	if (!loaded_hostwide())
		return false;
	int e = errno;
	bool down = true;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0 || (size_t)n >= sizeof exe - 1)
		goto out;
	exe[n] = '\0';
	int fd = open(ET_HOSTWIDE_LIST, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		goto out;
	/* a list (and its directory) only root could have written, or none */
	enum match m = root_file(fd) && root_dir() ? listed(fd, exe, (size_t)n) : M_NO;
	close(fd);
	if (m == M_NO)
		goto out;
	int conf = conf_read();
	if (m == M_EXACT) {
		down = false;   /* listed by name: the settings when they can be trusted */
		goto out;
	}
	/* every program: only by settings that can be trusted, for the
	 * programs they name */
	if (conf < 0)
		goto out;
	if (g_conf_used && g_conf.programs && !et_glob_list_match(g_conf.programs, exe))
		goto out;
	if (g_conf_used && g_conf.exclude && et_glob_list_match(g_conf.exclude, exe))
		goto out;
	down = false;
out:
	errno = e;
	return down;
}

const char *et_hostwide_setting(const char *name)
{
	if (!g_conf_used)
		return NULL;
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	for (size_t id = 0; id < n && id < ET_OPT__COUNT; id++) {
		const char *a = t[id].name, *b = name;
		for (; *a && *a == *b; a++, b++)
			;
		if (*a == *b)
			return g_conf.val[id];
	}
	return NULL;
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
	/* honoured only where only root could have made it (the directory is
	 * root's and not writable by group or others): one more call, made
	 * only while the switch exists */
	if (off)
		off = root_dir();
	errno = e;
	return off;
}
