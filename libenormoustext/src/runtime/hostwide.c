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
 * for each object (its list, r_debug's r_map: the entry whose dynamic
 * section is ours), and /etc/ld.so.preload names the library through a
 * path of its own, /etc/enormoustext/preload/NAME (a symbolic link,
 * core/hostwide.h).  Loaded any other way (LD_PRELOAD with the library's
 * own path, `enormoustext run`, linked), or with a libc other than glibc
 * (only glibc's loader reads /etc/ld.so.preload), the list is not read and
 * the library does what its environment says.
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
 * Cost in a program that is not listed: a walk of the loader's list, one
 * readlink, and an open, fstat, stat, read and close of the list; with
 * --all, an open, fstat, read and close of the settings too; nothing
 * allocated (the start-up path has no malloc: core/util.h: the settings
 * are read into a static buffer).  Every one of them a system call of its
 * own (os/: no first call of a libc function, each a lazy binding, no
 * errno), the code in the start-up section and the buffers small, on the
 * stack (core/base.h's ET_STARTUP): no page of the library's that the
 * loader had not touched.
 *
 * The off switch (et_hostwide_off): /etc/enormoustext/off exists, and every
 * copy stands down, however it was loaded: one access(2) per process, the
 * call the loader itself made for /etc/ld.so.preload.
 *
 * Owns: the decision "listed or not" for a copy loaded host-wide; the
 * host's settings as this process read them; the off switch.
 * May call: the loader's list (r_debug), core (hostconf's parser, the
 * option table, core/options' globs), os/ (the system calls).
 * Never: reads the environment, writes, allocates, says anything, trusts
 * a file another user could have written.
 */
#include "runtime/hostwide.h"

#include "core/hostconf.h"
#include "core/hostwide.h"
#include "core/options.h"
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

/* Written out, not strcmp/memcmp: each first call of a libc function on
 * this path costs a lazy binding in every process of the host. */
ET_STARTUP static bool same(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

#ifdef __GLIBC__
/* this object's dynamic section (the linker's symbol); weak: a program
 * linked statically with libenormoustext.a has none, and is never loaded
 * through /etc/ld.so.preload */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((weak, visibility("hidden")));
#endif

/* Was this copy loaded through a path in ".../enormoustext/preload/"? */
ET_STARTUP static bool loaded_hostwide(void)
{
#ifdef __GLIBC__
	const char *f = NULL;
	if (!_DYNAMIC)
		return false;
	for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next)
		if (l->l_ld == _DYNAMIC) {
			f = l->l_name;
			break;
		}
	if (!f)
		return false;
	const char *slash = NULL;
	for (const char *p = f; *p; p++)
		if (*p == '/')
			slash = p;
	const size_t dl = sizeof ET_HOSTWIDE_DIR - 1;
	if (!slash || (size_t)(slash - f) < dl + 1)
		return false;
	const char *dir = slash - dl;
	return dir[-1] == '/' && same(dir, ET_HOSTWIDE_DIR, dl);
#else
	return false;
#endif
}

ET_STARTUP static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

enum match { M_NO, M_ALL, M_EXACT };

/* One line of the list (len bytes, trimmed): this program, every program
 * (ET_HOSTWIDE_ALL), or neither? */
ET_STARTUP static enum match line_is(const char *line, size_t len, const char *exe, size_t n)
{
	if (!len || line[0] == '#')
		return M_NO;
	if (len == n && same(line, exe, n))
		return M_EXACT;
	if (len == sizeof ET_HOSTWIDE_ALL - 1 && same(line, ET_HOSTWIDE_ALL, len))
		return M_ALL;
	return M_NO;
}

/* Is exe (n bytes) a line of the list open at fd, or is every program?
 * Read in pieces, any length.  A line is kept from its first non-blank
 * byte, in line[cap] (cap > n): one whose content is longer matches
 * nothing; blanks at its end are not content. */
ET_STARTUP static enum match listed(int fd, const char *exe, size_t n, char *line, size_t cap)
{
	char buf[256];
	size_t len = 0, content = 0;
	bool spill = false, too_long = false;
	enum match best = M_NO, m;
	for (;;) {
		long r = et_os_sys_quiet(SYS_read, fd, (long)buf, sizeof buf, 0);
		if (r == -EINTR)
			continue;
		if (r <= 0)
			break;
		for (long i = 0; i < r; i++) {
			char c = buf[i];
			if (c == '\n') {
				if (!too_long && (m = line_is(line, content, exe, n)) > best)
					best = m;
				if (best == M_EXACT)
					return best;
				len = content = 0;
				spill = too_long = false;
				continue;
			}
			bool blank = is_blank(c);
			if (blank && len == 0)
				continue;   /* leading */
			if (!blank && spill)
				too_long = true;
			if (len < cap) {
				line[len++] = c;
				if (!blank)
					content = len;
			} else {
				spill = true;
			}
		}
	}
	if (!too_long && (m = line_is(line, content, exe, n)) > best)
		best = m;
	return best;
}

/* Only root could have written it (core/hostconf.c's rule). */
ET_STARTUP static bool root_file(int fd)
{
	struct stat st;
	return et_os_sys_quiet(SYS_newfstatat, fd, (long)"", (long)&st, AT_EMPTY_PATH) == 0 &&
	       !et_hostwide_untrusted(&st, false);
}

ET_STARTUP static bool root_dir(void)
{
	struct stat st;
	return et_os_sys_quiet(SYS_newfstatat, AT_FDCWD, (long)ET_HOSTWIDE_ETC, (long)&st, 0) == 0 &&
	       !et_hostwide_untrusted(&st, true);
}

ET_STARTUP static int open_ro(const char *path)
{
	return (int)et_os_sys_quiet(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0);
}

/* The host's settings (ET_HOSTWIDE_CONF), once read: for the one process
 * this copy is in, never written after the constructor.  The text is the
 * one big buffer of the start-up path: first of the big ones, so that a
 * short file lands in a page of the small variables' (core/base.h). */
static char g_conf_text[ET_HOSTCONF_MAX + 1] ET_LARGE_BSS_FIRST;
static struct et_hostconf g_conf;
static bool g_conf_used;

/* Read the settings: 1 read and used, 0 there is no file, -1 a file that
 * cannot be trusted or read whole (not root's, writable by others, too
 * long). */
ET_STARTUP static int conf_read(void)
{
	int fd = open_ro(ET_HOSTWIDE_CONF);
	if (fd < 0)
		return fd == -ENOENT ? 0 : -1;
	int rc = -1;
	size_t len = 0;
	if (root_file(fd)) {
		for (;;) {
			long r = et_os_sys_quiet(SYS_read, fd, (long)(g_conf_text + len),
			                         (long)(sizeof g_conf_text - len), 0);
			if (r == -EINTR)
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
	et_os_sys_quiet(SYS_close, fd, 0, 0, 0);
	if (rc == 1) {
		g_conf_text[len] = '\0';
		et_hostconf_parse(g_conf_text, &g_conf);
		g_conf_used = true;
	}
	return rc;
}

/* The decision for the program exe (n bytes, resolved), with line[cap]
 * (cap > n) for the list's lines. */
ET_STARTUP static bool stands_down_for(const char *exe, size_t n, char *line, size_t cap)
{
	int fd = open_ro(ET_HOSTWIDE_LIST);
	if (fd < 0)
		return true;
	/* a list (and its directory) only root could have written, or none */
	enum match m = root_file(fd) && root_dir() ? listed(fd, exe, n, line, cap) : M_NO;
	et_os_sys_quiet(SYS_close, fd, 0, 0, 0);
	if (m == M_NO)
		return true;
	int conf = conf_read();
	if (m == M_EXACT)
		return false;   /* listed by name: the settings when they can be trusted */
	/* every program: only by settings that can be trusted, for the
	 * programs they name */
	if (conf < 0)
		return true;
	if (g_conf_used && g_conf.programs && !et_glob_list_match(g_conf.programs, exe))
		return true;
	if (g_conf_used && g_conf.exclude && et_glob_list_match(g_conf.exclude, exe))
		return true;
	return false;
}

ET_STARTUP static long read_exe(char *buf, size_t cap)
{
#ifdef SYS_readlink
	return et_os_sys_quiet(SYS_readlink, (long)"/proc/self/exe", (long)buf, (long)cap, 0);
#else
	return et_os_sys_quiet(SYS_readlinkat, AT_FDCWD, (long)"/proc/self/exe", (long)buf, (long)cap);
#endif
}

/* A program whose path does not fit the start-up path's small buffers:
 * the same with PATH_MAX ones, off that path. */
__attribute__((noinline)) static bool stands_down_long(void)
{
	char exe[PATH_MAX], line[PATH_MAX];
	long n = read_exe(exe, sizeof exe - 1);
	if (n <= 0 || (size_t)n >= sizeof exe - 1)
		return true;
	exe[n] = '\0';
	return stands_down_for(exe, (size_t)n, line, sizeof line);
}

ET_STARTUP bool et_hostwide_stands_down(void)
{
	if (!loaded_hostwide())
		return false;
	/* small buffers: deep frames would touch stack pages the program's
	 * start has not */
	char exe[240], line[244];
	long n = read_exe(exe, sizeof exe - 1);
	if (n <= 0)
		return true;
	if ((size_t)n >= sizeof exe - 1)
		return stands_down_long();
	exe[n] = '\0';
	return stands_down_for(exe, (size_t)n, line, sizeof line);
}

ET_STARTUP bool et_hostwide_loaded(void)
{
	return loaded_hostwide();
}

ET_STARTUP bool et_hostwide_settings_used(void)
{
	return g_conf_used;
}

ET_STARTUP const char *et_hostwide_setting(const char *name)
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
ET_STARTUP bool et_hostwide_off(void)
{
#ifdef SYS_access
	bool off = et_os_sys_quiet(SYS_access, (long)ET_HOSTWIDE_OFF, F_OK, 0, 0) == 0;
#else
	bool off = et_os_sys_quiet(SYS_faccessat, AT_FDCWD, (long)ET_HOSTWIDE_OFF, F_OK, 0) == 0;
#endif
	/* honoured only where only root could have made it (the directory is
	 * root's and not writable by group or others): one more call, made
	 * only while the switch exists */
	if (off)
		off = root_dir();
	return off;
}
