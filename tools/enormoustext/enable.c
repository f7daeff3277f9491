/*
 * tools/enormoustext/enable.c — `enormoustext enable` and `disable`: turn
 * the library on for a systemd service, or for one program host-wide,
 * persistently, and off again leaving exactly what was there before.
 *
 * (Their options: the tables enable_spec and disable_spec below.)
 *
 * A unit: the drop-in /etc/systemd/system/UNIT.d/enormoustext.conf, whose
 * first line is MARKER (a file there without it is someone else's and is
 * never replaced nor removed): Environment=LD_PRELOAD=<the library `run`
 * uses>, each --env checked with the library's own parser (preload.c's
 * et_tool_options_bad), and with --prime an ExecStartPre= that primes the
 * unit's program and its shared libraries (as its own loader lists them:
 * loader.c).
 *
 * A binary: /etc/ld.so.preload names the library through a path of its
 * own (/etc/enormoustext/preload/NAME, a symbolic link made here, see
 * core/hostwide.h: /etc, so that a read-only /usr is no obstacle and
 * nothing is left in a directory a package owns), and /etc/enormoustext/binaries lists the programs
 * that act; every other program loads the library and its constructor
 * stands down at once (runtime/hostwide.c).  The ld.so.preload there
 * before is kept byte for byte (ld.so.preload.orig, or a note that there
 * was none: ld.so.preload.none) and put back when the list becomes empty.
 *
 * Every file is written beside and renamed in (core/outfile.c), made
 * 0644, fsync'ed, and its directory too.  --root DIR puts DIR before every
 * path written and every unit file read (tests, image building); the
 * program, its libraries and the library are taken as this system has
 * them.
 *
 * Owns: `enable`, `disable`: the drop-in, the include list, the entry in
 * ld.so.preload and its backup, the link; --json's report (each file with
 * what was done to it, gathered as it is done, and the warnings).
 * May call: core (options, outfile, hostwide names), preload.c (the
 * library, the options' check), loader.c (a program's libraries),
 * elffile.c (a file's type, architecture, interpreter), sofile.c (the
 * library checked whole before anything names it), spawn.c
 * (systemctl, the trial run), output.c, msg.c, common.c.
 * Never: writes a file it did not write (no MARKER), or the loader's list
 * without first running a program with the library loaded through the
 * new path.
 */
#include "tool.h"
#include "elffile.h"
#include "loader.h"
#include "opts.h"
#include "preload.h"
#include "sofile.h"

#include "core/hostconf.h"
#include "core/hostwide.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <elf.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARKER "# enormoustext enable:"
#define DROPIN "enormoustext.conf"
#define LIST_BACKUP "/etc/enormoustext/ld.so.preload.orig"
#define LIST_NONE "/etc/enormoustext/ld.so.preload.none"

enum { OPT_ENV = 1, OPT_PRIME, OPT_LIB, OPT_DRY, OPT_NO_RELOAD, OPT_ROOT, OPT_BINARY, OPT_JSON, OPT_ALL, OPT_LIST,
       OPT_MODE, OPT_PAD, OPT_PROGRAMS, OPT_EXCLUDE };

/* --json: what was done (or would be), gathered as it happens and written
 * at the end, instead of the lines; each line's facts are in it. */
#define MAX_EVENTS 16
#define MAX_WARNINGS 8
struct event {
	const char *action;        /* "write", "would write", "remove", "link", "keep", ... */
	char *path;
	const char *key;           /* a fact of its own ("target", "in"), or NULL */
	char *value;
};

struct ctx {
	bool enable, dry, no_reload, prime, json;
	bool all;                  /* --all: every program (the list's ET_HOSTWIDE_ALL line) */
	const char *programs, *exclude;   /* --all's program globs (NULL: not given) */
	const char *root;          /* "" for the real one */
	const char *lib_opt;
	const char *env[ET_OPT__COUNT];
	/* the report (--json) */
	char unit[300];            /* UNIT, normalised ("" with --binary) */
	char binary[PATH_MAX];     /* --binary's program, resolved ("" for a unit) */
	char lib[PATH_MAX + 8];    /* the library ("" when not known: disable) */
	char entry[PATH_MAX + 64]; /* --binary: the path /etc/ld.so.preload names */
	char **prime_files;        /* --prime: the program, then its libraries */
	size_t nprime;
	const char *reload;        /* "done", "not done: ..." (a unit), NULL */
	long programs_left;        /* disable --binary: the programs still listed (-1: not said) */
	bool asan_note;            /* enable --all said asan_note */
	bool listed;               /* --list: its own output, no report */
	struct event ev[MAX_EVENTS];
	size_t nev;
	char *warn[MAX_WARNINGS];
	size_t nwarn;
};

/* A line on stdout (not with --json). */
static void say(const struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct ctx *c, const char *fmt, ...)
{
	if (c->json)
		return;
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* A file written, removed, linked (or that would be), for --json. */
static void event(struct ctx *c, const char *action, const char *path, const char *key, const char *value)
{
	if (c->nev >= MAX_EVENTS)
		return;
	c->ev[c->nev++] = (struct event){ action, strdup(path), key, value ? strdup(value) : NULL };
}

/* "enormoustext enable: warning: ..." on stderr, and in --json's warnings. */
static void warn(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct ctx *c, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	et_tool_err("warning: %s", msg);
	if (c->nwarn < MAX_WARNINGS)
		c->warn[c->nwarn++] = strdup(msg);
}

/* ---------------------------------------------------------- small files */

static void rooted(const struct ctx *c, char *out, size_t cap, const char *path)
{
	snprintf(out, cap, "%s%s", c->root, path);
}

/* The whole file in a malloc'd buffer (NUL-terminated); 0 or -errno. */
static int slurp(const char *path, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *b = malloc(cap + 1);
	for (;;) {
		if (!b) {
			close(fd);
			return -ENOMEM;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap) {
			cap *= 2;
			char *nb = realloc(b, cap + 1);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	close(fd);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

static bool has_marker(const char *buf)
{
	return !strncmp(buf, MARKER, strlen(MARKER));
}

static void sync_dir_of(const char *path)
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
static int write_atomic(const char *path, const char *data, size_t len, mode_t mode)
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
	sync_dir_of(path);
	return 0;
}

/* mkdir -p of the directory that holds path (0755); 0 or ET_EXIT_BAD. */
static int make_parents(const char *path)
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

/* rmdir the directory that holds path, and its parents up to and not
 * including stop, while they are empty. */
static void remove_empty_parents(const char *path, const char *stop)
{
	char d[PATH_MAX];
	if (snprintf(d, sizeof d, "%s", path) >= (int)sizeof d)
		return;
	for (;;) {
		char *s = strrchr(d, '/');
		if (!s || s == d)
			return;
		*s = '\0';
		if (!strcmp(d, stop) || rmdir(d) != 0)
			return;
	}
}

/* A file of enable's removed (or, --dry-run, said that it would be), with
 * its line and --json's event; 0 or ET_EXIT_BAD after one line. */
static int remove_file(struct ctx *c, const char *path)
{
	if (c->dry) {
		say(c, "would remove %s\n", path);
		event(c, "would remove", path, NULL, NULL);
		return 0;
	}
	if (unlink(path) != 0) {
		et_tool_err("%s: cannot remove: %s", path, strerror(errno));
		return ET_EXIT_BAD;
	}
	sync_dir_of(path);
	say(c, "removed %s\n", path);
	event(c, "remove", path, NULL, NULL);
	return 0;
}

/* ------------------------------------------------------------------ ELF */

struct elf_facts {
	int type, machine, klass;
	bool interp;
	char interp_path[PATH_MAX];
};

/* 0, or -1 with *why set ("not an ELF file", ...). */
static int elf_read(const char *path, struct elf_facts *f, const char **why)
{
	static char reason[256];
	memset(f, 0, sizeof *f);
	struct et_tool_elf x;
	unsigned type, machine, cls;
	if (et_tool_elf_open(&x, path, ET_TOOL_ELF_REGULAR) != 0) {
		snprintf(reason, sizeof reason, "%s", x.why);
		*why = reason;
		return -1;
	}
	int rc = -1;
	*why = "not an ELF file";
	if (et_tool_elf_header(&x, &type, &machine, &cls)) {
		f->type = (int)type;
		f->machine = (int)machine;
		f->klass = (int)cls;
		f->interp = et_tool_elf_interp(&x, f->interp_path, sizeof f->interp_path);
		rc = 0;
	}
	et_tool_elf_close(&x);
	return rc;
}

/* This command's own ELF facts: the host's architecture. */
static int host_elf(struct elf_facts *f)
{
	const char *why;
	return elf_read("/proc/self/exe", f, &why);
}

/* The library: a whole shared object of this host's architecture
 * (sofile.c: a file cut short, named in /etc/ld.so.preload, would kill
 * every program at start), checked before anything names it. */
static int check_lib_elf(const char *lib)
{
	char why[256];
	if (et_tool_so_check(lib, why, sizeof why) != 0) {
		et_tool_err("library %s: %s: nothing written", lib, why);
		return ET_EXIT_BAD;
	}
	return 0;
}

/* ------------------------------------------------------------- systemd */

static bool systemd_running(void)
{
	/* sd_booted(3)'s test */
	struct stat st;
	return lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

static const char *const unit_types[] = { "service", "socket", "target", "device", "mount", "automount",
	                                      "swap", "timer", "path", "slice", "scope" };

/* "mariadb" -> "mariadb.service"; a name systemd would refuse, or a unit
 * that is not a service, is a usage error naming it. */
static int normalise_unit(const char *in, char *out, size_t cap)
{
	const char *dot = strrchr(in, '.');
	bool typed = false;
	if (dot) {
		for (size_t i = 0; i < sizeof unit_types / sizeof *unit_types; i++) {
			if (!strcmp(dot + 1, unit_types[i])) {
				typed = true;
				if (i != 0)
					return et_tool_usage("unit '%s': a %s runs no program of its own: give a service",
					                     in, unit_types[i]);
			}
		}
	}
	if (!*in)
		return et_tool_usage("the unit name is empty");
	snprintf(out, cap, "%s%s", in, typed ? "" : ".service");
	size_t n = strlen(out);
	if (n > 255)   /* UNIT_NAME_MAX - 1 */
		return et_tool_usage("unit '%s': longer than the 255 characters systemd allows", in);
	size_t stem = n - strlen(".service");
	int ats = 0;
	for (size_t i = 0; i < stem; i++) {
		char ch = out[i];
		if (ch == '@') {
			ats++;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      strchr(":-_.\\", ch)))
			return et_tool_usage("unit '%s': systemd does not allow the character '%c' in a unit name",
			                     in, ch);
	}
	if (stem == 0 || out[0] == '@')
		return et_tool_usage("unit '%s': no name before '%s'", in, out[0] == '@' ? "@" : ".service");
	if (ats > 1)
		return et_tool_usage("unit '%s': more than one '@'", in);
	return 0;
}

/* A word for a unit file's Exec line or Environment= value: '%' and '$'
 * doubled (systemd's specifiers and variables), quoted when it holds
 * blanks, quotes or backslashes. */
static void sd_word(FILE *f, const char *s, bool exec)
{
	bool quote = false;
	for (const char *p = s; *p; p++)
		if (strchr(" \t\"'\\", *p))
			quote = true;
	if (quote)
		fputc('"', f);
	for (const char *p = s; *p; p++) {
		if (*p == '%')
			fputs("%%", f);
		else if (exec && *p == '$')
			fputs("$$", f);
		else if (quote && (*p == '"' || *p == '\\'))
			fprintf(f, "\\%c", *p);
		else
			fputc(*p, f);
	}
	if (quote)
		fputc('"', f);
}

static const char *const unit_dirs[] = { "/etc/systemd/system", "/run/systemd/system",
	                                     "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
	                                     "/lib/systemd/system" };
#define N_UNIT_DIRS (sizeof unit_dirs / sizeof *unit_dirs)

struct unit_facts {
	char exec[PATH_MAX];       /* ExecStart's program, as written */
	bool preload;              /* an Environment= of LD_PRELOAD elsewhere */
	char where[PATH_MAX];      /* the first file that had one */
	char main_file[PATH_MAX];
};

/* One unit file's [Service] ExecStart= and Environment= lines. */
static void parse_unit_file(const char *path, struct unit_facts *u)
{
	char *buf;
	size_t len;
	if (slurp(path, &buf, &len) != 0)
		return;
	bool service = false;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '[') {
			service = !strncmp(line, "[Service]", 9);
			continue;
		}
		if (!service)
			continue;
		if (!strncmp(line, "ExecStart=", 10)) {
			const char *v = line + 10;
			while (*v == ' ')
				v++;
			if (!*v) {
				u->exec[0] = '\0';   /* an empty ExecStart= resets the list */
				continue;
			}
			if (u->exec[0])
				continue;            /* oneshot: the first one */
			while (*v && strchr("@-:+!", *v))
				v++;
			char q = (*v == '"' || *v == '\'') ? *v++ : 0;
			size_t n = 0;
			while (v[n] && (q ? v[n] != q : (v[n] != ' ' && v[n] != '\t')) && n + 1 < sizeof u->exec)
				n++;
			memcpy(u->exec, v, n);
			u->exec[n] = '\0';
		} else if (!strncmp(line, "Environment=", 12) && strstr(line, "LD_PRELOAD=") && !u->preload) {
			u->preload = true;
			snprintf(u->where, sizeof u->where, "%s", path);
		}
	}
	free(buf);
}

static int cmp_base(const void *a, const void *b)
{
	return strcmp(strrchr(*(char *const *)a, '/') + 1, strrchr(*(char *const *)b, '/') + 1);
}

/* The unit as its files on disk say (systemd not running, or --root):
 * the unit file first found along the search path (the template's for an
 * instance), then its drop-ins in the order systemd reads them (by file
 * name, a name in an earlier directory hiding the same in a later one). */
static void unit_from_files(const struct ctx *c, const char *unit, struct unit_facts *u)
{
	char names[2][320];
	int nn = 0;
	snprintf(names[nn++], sizeof names[0], "%s", unit);
	const char *at = strchr(unit, '@');
	if (at && at[1] != '.')
		snprintf(names[nn++], sizeof names[0], "%.*s@.service", (int)(at - unit) & 0xff, unit);
	for (int k = 0; k < nn && !u->main_file[0]; k++) {
		for (size_t i = 0; i < N_UNIT_DIRS; i++) {
			char p[PATH_MAX];
			snprintf(p, sizeof p, "%s%s/%s", c->root, unit_dirs[i], names[k]);
			if (access(p, R_OK) == 0) {
				snprintf(u->main_file, sizeof u->main_file, "%s", p);
				break;
			}
		}
	}
	if (u->main_file[0])
		parse_unit_file(u->main_file, u);
	char *drop[256];
	size_t nd = 0;
	for (int k = nn - 1; k >= 0; k--) {
		for (size_t i = 0; i < N_UNIT_DIRS; i++) {
			char d[PATH_MAX];
			snprintf(d, sizeof d, "%s%s/%s.d", c->root, unit_dirs[i], names[k]);
			DIR *dir = opendir(d);
			if (!dir)
				continue;
			struct dirent *de;
			while ((de = readdir(dir)) && nd < 256) {
				size_t l = strlen(de->d_name);
				if (l < 6 || strcmp(de->d_name + l - 5, ".conf") || !strcmp(de->d_name, DROPIN))
					continue;
				bool seen = false;
				for (size_t j = 0; j < nd; j++)
					if (!strcmp(strrchr(drop[j], '/') + 1, de->d_name))
						seen = true;
				if (seen)
					continue;
				char *p = NULL;
				if (asprintf(&p, "%s/%s", d, de->d_name) < 0)
					break;
				drop[nd++] = p;
			}
			closedir(dir);
		}
	}
	/* by file name, whichever directory it is in */
	qsort(drop, nd, sizeof *drop, cmp_base);
	for (size_t i = 0; i < nd; i++) {
		parse_unit_file(drop[i], u);
		free(drop[i]);
	}
}

/* The unit as the running systemd has it. */
static void unit_from_systemd(const char *unit, const char *lib, struct unit_facts *u)
{
	char *out = NULL;
	char *argv[] = { (char *)"/bin/systemctl", (char *)"show", (char *)"-p", (char *)"ExecStart",
		             (char *)"--value", (char *)unit, NULL };
	if (access(argv[0], X_OK) != 0)
		argv[0] = (char *)"/usr/bin/systemctl";
	if (et_tool_capture(argv, NULL, &out, NULL) == 0 && out) {
		/* "{ path=/usr/sbin/mariadbd ; argv[]=... ; ... }" */
		const char *p = strstr(out, "path=");
		if (p) {
			p += 5;
			size_t n = strcspn(p, " ;\n");
			snprintf(u->exec, sizeof u->exec, "%.*s", (int)n, p);
		}
	}
	free(out);
	out = NULL;
	argv[3] = (char *)"Environment";
	const char *pl = NULL;
	size_t ll = strlen(lib);
	if (et_tool_capture(argv, NULL, &out, NULL) == 0 && out && (pl = strstr(out, "LD_PRELOAD=")) &&
	    !(!strncmp(pl + 11, lib, ll) && strchr(" \n", pl[11 + ll]))) {   /* not this drop-in's own */
		u->preload = true;
		snprintf(u->where, sizeof u->where, "systemctl show -p Environment %s", unit);
	}
	free(out);
}

/* Whether the running systemd knows the unit (LoadState not "not-found"). */
static bool systemd_knows(const char *unit)
{
	char *out = NULL;
	char *argv[] = { (char *)"/bin/systemctl", (char *)"show", (char *)"-p", (char *)"LoadState",
		             (char *)"--value", (char *)unit, NULL };
	if (access(argv[0], X_OK) != 0)
		argv[0] = (char *)"/usr/bin/systemctl";
	bool known = true;      /* when systemctl cannot say, no warning */
	if (et_tool_capture(argv, NULL, &out, NULL) == 0 && out)
		known = strncmp(out, "not-found", 9) != 0;
	free(out);
	return known;
}

/* The services of the unit directories (under --root) whose names are
 * nearest to unit (within a third of its length, ".service" left out;
 * 1 for a short one), into out: "a.service,
 * b.service" (at most three), or "". */
static void near_units(const struct ctx *c, const char *unit, char *out, size_t cap)
{
	char best[3][256], stem[320];
	size_t bd[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX };
	/* the names compared without ".service", which every one has */
	snprintf(stem, sizeof stem, "%s", unit);
	size_t sl = strlen(stem);
	if (sl > 8 && !strcmp(stem + sl - 8, ".service"))
		stem[sl -= 8] = '\0';
	size_t limit = sl / 3 ? sl / 3 : 1;
	out[0] = '\0';
	for (size_t i = 0; i < N_UNIT_DIRS; i++) {
		char d[PATH_MAX];
		snprintf(d, sizeof d, "%s%s", c->root, unit_dirs[i]);
		DIR *dir = opendir(d);
		if (!dir)
			continue;
		for (struct dirent *de; (de = readdir(dir));) {
			size_t l = strlen(de->d_name);
			if (l < 9 || l > 255 || strcmp(de->d_name + l - 8, ".service"))
				continue;
			char other[256];
			snprintf(other, sizeof other, "%.*s", (int)(l - 8), de->d_name);
			size_t dist = et_edit_distance(stem, other, false);   /* unit names are case-sensitive */
			if (dist == 0 || dist > limit)
				continue;
			bool dup = false;
			for (int k = 0; k < 3; k++)
				dup |= bd[k] != SIZE_MAX && !strcmp(best[k], de->d_name);
			if (dup)
				continue;
			for (int k = 0; k < 3; k++) {
				if (dist < bd[k]) {
					for (int m = 2; m > k; m--) {
						bd[m] = bd[m - 1];
						memcpy(best[m], best[m - 1], sizeof best[m]);
					}
					bd[k] = dist;
					snprintf(best[k], sizeof best[k], "%s", de->d_name);
					break;
				}
			}
		}
		closedir(dir);
	}
	size_t n = 0;
	for (int k = 0; k < 3 && bd[k] != SIZE_MAX; k++)
		if (n < cap)
			n += (size_t)snprintf(out + n, cap - n, "%s%s", k ? ", " : "", best[k]);
}

/* A bare program name in ExecStart=: systemd looks along a fixed path. */
static void exec_path(const char *exec, char *out, size_t cap)
{
	static const char *const dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
		                                "/sbin", "/bin" };
	if (exec[0] == '/' || !exec[0]) {
		snprintf(out, cap, "%s", exec);
		return;
	}
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		if (snprintf(out, cap, "%s/%s", dirs[i], exec) < (int)cap && access(out, X_OK) == 0)
			return;
	}
	snprintf(out, cap, "%s", exec);
}

/* The shared libraries of a program, for `prime`, as its own loader finds
 * them (loader.c): the paths into *libs (malloc'd); a library the loader
 * does not find is said in one line and left out.  0 or ET_EXIT_BAD. */
static int program_libraries(struct ctx *c, const char *prog, char ***libs, size_t *nlibs)
{
	struct elf_facts f;
	const char *why;
	*libs = NULL;
	*nlibs = 0;
	if (elf_read(prog, &f, &why) != 0) {
		et_tool_err("--prime: the unit's program %s: %s", prog, why);
		return ET_EXIT_BAD;
	}
	struct et_tool_libs l;
	char msg[1024];
	if (et_tool_libraries(prog, f.interp ? f.interp_path : "", &l, msg, sizeof msg) != 0) {
		et_tool_err("--prime: %s", msg);
		return ET_EXIT_BAD;
	}
	char **v = NULL;
	size_t n = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (!l.v[i].needed)
			continue;   /* the loader itself, ld.so.preload's */
		if (!l.v[i].path) {
			warn(c, "--prime: %s: the loader does not find %s: not primed", prog, l.v[i].name);
			continue;
		}
		char **nv = realloc(v, (n + 1) * sizeof *v);
		if (!nv)
			break;
		v = nv;
		v[n++] = strdup(l.v[i].path);
	}
	et_tool_libs_free(&l);
	*libs = v;
	*nlibs = n;
	return 0;
}

static void free_libs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* systemctl daemon-reload when systemd runs this system; else the advice. */
static int reload(struct ctx *c, const char *unit)
{
	if (c->no_reload || c->root[0] || !systemd_running()) {
		say(c, "run 'systemctl daemon-reload' for systemd to read it%s\n",
		    c->no_reload ? "" : c->root[0] ? " (--root: not done)" : " (systemd is not running here: not done)");
		c->reload = c->no_reload ? "not done: --no-reload" :
		            c->root[0] ? "not done: --root" : "not done: systemd is not running here";
	} else {
		char *argv[] = { (char *)"/bin/systemctl", (char *)"daemon-reload", NULL };
		if (access(argv[0], X_OK) != 0)
			argv[0] = (char *)"/usr/bin/systemctl";
		int rc = et_tool_capture(argv, NULL, NULL, NULL);
		if (rc != 0) {
			et_tool_err("systemctl daemon-reload failed (exit status %d): run it by hand", rc);
			return ET_EXIT_BAD;
		}
		say(c, "systemctl daemon-reload: done\n");
		c->reload = "done";
	}
	say(c, "restart the unit for it to take effect: systemctl restart %s\n", unit);
	return 0;
}

static int enable_unit(struct ctx *c, const char *unit_arg)
{
	char unit[300];
	int rc = normalise_unit(unit_arg, unit, sizeof unit);
	if (rc)
		return rc;
	snprintf(c->unit, sizeof c->unit, "%s", unit);
	char lib[PATH_MAX + 8];
	if (et_tool_library(c->lib_opt, lib, sizeof lib))
		return ET_EXIT_BAD;
	if (check_lib_elf(lib))
		return ET_EXIT_BAD;
	snprintf(c->lib, sizeof c->lib, "%s", lib);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/etc/systemd/system/%s.d/" DROPIN, c->root, unit);

	struct unit_facts u = { .exec = "" };
	bool live = !c->root[0] && systemd_running();
	if (live)
		unit_from_systemd(unit, lib, &u);
	else
		unit_from_files(c, unit, &u);
	/* a unit nobody knows (a typo?): said, with the names nearest to it;
	 * the drop-in is written all the same (a unit installed later, an
	 * image being built) */
	if (live ? !systemd_knows(unit) : !u.main_file[0]) {
		char near[800];
		near_units(c, unit, near, sizeof near);
		warn(c, "%s: %s%s%s%s", unit,
		     live ? "systemd does not know this unit" :
		     "no unit file of that name in the unit directories (/etc/systemd/system, "
		     "/usr/lib/systemd/system, ...)",
		     near[0] ? "; did you mean " : "", near, near[0] ? "?" : "; the drop-in is written all the same");
	}

	char **libs = NULL;
	size_t nlibs = 0;
	char prog[PATH_MAX] = "", self[PATH_MAX] = "";
	if (c->prime) {
		if (!u.exec[0]) {
			et_tool_err("--prime: %s: no ExecStart= found (%s)", unit,
			            live ? "systemctl show -p ExecStart" :
			            u.main_file[0] ? u.main_file : "no unit file in the unit directories");
			return ET_EXIT_BAD;
		}
		exec_path(u.exec, prog, sizeof prog);
		if (program_libraries(c, prog, &libs, &nlibs))
			return ET_EXIT_BAD;
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		self[n > 0 ? n : 0] = '\0';
		c->prime_files = calloc(nlibs + 1, sizeof *c->prime_files);
		if (c->prime_files) {
			c->prime_files[c->nprime++] = strdup(prog);
			for (size_t i = 0; i < nlibs; i++)
				c->prime_files[c->nprime++] = strdup(libs[i]);
		}
	}

	/* the file */
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	if (!f) {
		free_libs(libs, nlibs);
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	fprintf(f, MARKER " written by enormoustext %s; 'enormoustext disable %s' removes it\n"
	           "# libenormoustext in this service; restart the service after a change.\n"
	           "[Service]\n", ENORMOUSTEXT_VERSION_STRING, unit);
	fputs("Environment=", f);
	char kv[PATH_MAX + 16];
	snprintf(kv, sizeof kv, "LD_PRELOAD=%s", lib);
	sd_word(f, kv, false);
	fputc('\n', f);
	size_t nt;
	const struct et_option_desc *t = et_option_table(&nt);
	for (size_t i = 0; i < nt && i < ET_OPT__COUNT; i++) {
		if (!c->env[i])
			continue;
		char *a = NULL;
		if (asprintf(&a, "%s=%s", t[i].name, c->env[i]) < 0)
			continue;
		fputs("Environment=", f);
		sd_word(f, a, false);
		fputc('\n', f);
		free(a);
	}
	if (c->prime) {
		fprintf(f, "# before the start: %s and its libraries (as its own loader finds them:\n"
		           "# 'ld.so --list') into the page cache as huge pages; '-': a failure never\n"
		           "# stops the start\n",
		        prog);
		fputs("ExecStartPre=-", f);
		sd_word(f, self, true);
		fputs(" prime ", f);
		sd_word(f, prog, true);
		for (size_t i = 0; i < nlibs; i++) {
			fputc(' ', f);
			sd_word(f, libs[i], true);
		}
		fputc('\n', f);
	}
	fclose(f);
	free_libs(libs, nlibs);

	if (u.preload)
		warn(c, "%s already sets LD_PRELOAD (%s): this drop-in's Environment=LD_PRELOAD= "
		     "replaces that value", unit, u.where);

	/* what is there now */
	struct stat st;
	if (lstat(path, &st) == 0) {
		char *old;
		size_t olen;
		int e = S_ISREG(st.st_mode) ? slurp(path, &old, &olen) : -EINVAL;
		if (e) {
			et_tool_err("%s: %s: not replaced", path, e == -EINVAL ? "not a regular file" : strerror(-e));
			free(text);
			return ET_EXIT_BAD;
		}
		bool ours = has_marker(old);
		free(old);
		if (!ours) {
			et_tool_err("%s exists and was not written by 'enormoustext enable' (no '%s' first line): "
			            "not replaced", path, MARKER);
			free(text);
			return ET_EXIT_BAD;
		}
	}
	if (c->dry) {
		say(c, "would write %s:\n%s", path, text);
		event(c, "would write", path, NULL, NULL);
		free(text);
		return 0;
	}
	rc = make_parents(path);
	if (!rc)
		rc = write_atomic(path, text, tlen, 0644);
	free(text);
	if (rc)
		return rc;
	say(c, "wrote %s\n", path);
	event(c, "write", path, NULL, NULL);
	return reload(c, unit);
}

static int disable_unit(struct ctx *c, const char *unit_arg)
{
	char unit[300];
	int rc = normalise_unit(unit_arg, unit, sizeof unit);
	if (rc)
		return rc;
	snprintf(c->unit, sizeof c->unit, "%s", unit);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/etc/systemd/system/%s.d/" DROPIN, c->root, unit);
	char *old;
	size_t olen;
	int e = slurp(path, &old, &olen);
	if (e == -ENOENT) {
		et_tool_err("%s: no such file: %s is not enabled", path, unit);
		return ET_EXIT_BAD;
	}
	if (e) {
		et_tool_err("%s: %s: not removed", path, e == -EINVAL ? "not a regular file" : strerror(-e));
		return ET_EXIT_BAD;
	}
	bool ours = has_marker(old);
	free(old);
	if (!ours) {
		et_tool_err("%s was not written by 'enormoustext enable' (no '%s' first line): not removed", path,
		            MARKER);
		return ET_EXIT_BAD;
	}
	if (remove_file(c, path))
		return ET_EXIT_BAD;
	if (c->dry)
		return 0;
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s", path);
	*strrchr(d, '/') = '\0';
	if (rmdir(d) == 0) {
		say(c, "removed %s (empty)\n", d);
		event(c, "remove", d, NULL, NULL);
	}
	return reload(c, unit);
}

/* ---------------------------------------------------------- --binary */

struct hw {
	char lib[PATH_MAX + 8];    /* the library, absolute */
	char entry[PATH_MAX + 64]; /* the path ld.so.preload names: /etc/enormoustext/preload/NAME */
	char link[PATH_MAX + 64];  /* the same under --root */
	char preload[PATH_MAX], list[PATH_MAX], backup[PATH_MAX], none[PATH_MAX], etcdir[PATH_MAX];
};

static void hw_paths(const struct ctx *c, struct hw *h)
{
	rooted(c, h->preload, sizeof h->preload, ET_HOSTWIDE_PRELOAD);
	rooted(c, h->list, sizeof h->list, ET_HOSTWIDE_LIST);
	rooted(c, h->backup, sizeof h->backup, LIST_BACKUP);
	rooted(c, h->none, sizeof h->none, LIST_NONE);
	rooted(c, h->etcdir, sizeof h->etcdir, "/etc");
}

/* Where removing the link's empty directories stops: the directory the
 * link's "enormoustext/preload" is in (/etc under --root, or LIBDIR for an
 * entry an older version made). */
static void link_stop(const struct hw *h, char *out, size_t cap)
{
	snprintf(out, cap, "%s", h->link);
	for (int i = 0; i < 3; i++) {
		char *s = strrchr(out, '/');
		if (s)
			*s = '\0';
	}
}

static void hw_entry_for(const struct ctx *c, struct hw *h)
{
	const char *slash = strrchr(h->lib, '/');
	snprintf(h->entry, sizeof h->entry, ET_HOSTWIDE_LINKDIR "/%s", slash + 1);
	snprintf(h->link, sizeof h->link, "%s%s", c->root, h->entry);
}

/* The paths of the list (malloc'd copies), in order. */
struct list {
	char **p;
	size_t n;
	bool exists;
};

static int list_read(const struct hw *h, struct list *l)
{
	memset(l, 0, sizeof *l);
	char *buf;
	size_t len;
	int e = slurp(h->list, &buf, &len);
	if (e == -ENOENT)
		return 0;
	if (e) {
		et_tool_err("%s: %s", h->list, e == -EINVAL ? "not a regular file" : strerror(-e));
		return ET_EXIT_BAD;
	}
	if (!has_marker(buf)) {
		et_tool_err("%s exists and was not written by 'enormoustext enable' (no '%s' first line): "
		            "not changed", h->list, MARKER);
		free(buf);
		return ET_EXIT_BAD;
	}
	l->exists = true;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		line += strspn(line, " \t");
		size_t n = strlen(line);
		while (n && strchr(" \t\r", line[n - 1]))
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		char **np = realloc(l->p, (l->n + 1) * sizeof *np);
		if (!np)
			break;
		l->p = np;
		l->p[l->n++] = strdup(line);
	}
	free(buf);
	return 0;
}

static void list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->p[i]);
	free(l->p);
}

static char *list_text(const struct list *l, size_t *len)
{
	char *t = NULL;
	FILE *f = open_memstream(&t, len);
	if (!f)
		return NULL;
	fprintf(f, MARKER " the programs libenormoustext acts in when " ET_HOSTWIDE_PRELOAD " loads it\n"
	           "# (one resolved path a line; 'enormoustext disable --binary PATH' removes one)\n");
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%s\n", l->p[i]);
	fclose(f);
	return t;
}

/* Does the loader's list hold entry as one of its words? */
static bool preload_has(const char *buf, const char *entry)
{
	size_t n = strlen(entry);
	for (const char *p = buf; *p;) {
		if (*p == '#') {
			p += strcspn(p, "\n");
			continue;
		}
		size_t w = strcspn(p, " \t\n:");
		if (w == n && !strncmp(p, entry, n))
			return true;
		p += w ? w : 1;
	}
	return false;
}


/* The program: a dynamically linked ELF executable of this architecture;
 * its resolved path into real. */
static int check_program(const char *path, char *real, size_t cap)
{
	struct elf_facts f, h;
	const char *why;
	if (elf_read(path, &f, &why) != 0) {
		et_tool_err("--binary %s: %s", path, why);
		return ET_EXIT_BAD;
	}
	if (f.type != ET_EXEC && f.type != ET_DYN) {
		et_tool_err("--binary %s: not an ELF executable", path);
		return ET_EXIT_BAD;
	}
	if (!f.interp) {
		et_tool_err("--binary %s: %s", path,
		            f.type == ET_EXEC ? "statically linked: the loader (and /etc/ld.so.preload) never runs for it"
		                              : "a shared library or a static PIE, not a dynamically linked program");
		return ET_EXIT_BAD;
	}
	if (host_elf(&h) == 0 && (h.machine != f.machine || h.klass != f.klass)) {
		et_tool_err("--binary %s: built for another architecture than this system's library", path);
		return ET_EXIT_BAD;
	}
	if (access(path, X_OK) != 0) {
		et_tool_err("--binary %s: not executable", path);
		return ET_EXIT_BAD;
	}
	char buf[PATH_MAX];
	if (!realpath(path, buf) || strlen(buf) >= cap) {
		et_tool_err("--binary %s: cannot resolve the path: %s", path, strerror(errno));
		return ET_EXIT_BAD;
	}
	snprintf(real, cap, "%s", buf);
	return 0;
}

/* The link entry -> lib (replaced when it points elsewhere); *made says
 * whether it is new, *changed whether it was made or replaced.  0 or
 * ET_EXIT_BAD. */
static int make_link(const struct hw *h, bool *made, bool *changed)
{
	*made = false;
	*changed = false;
	char cur[PATH_MAX];
	ssize_t n = readlink(h->link, cur, sizeof cur - 1);
	if (n > 0) {
		cur[n] = '\0';
		if (!strcmp(cur, h->lib))
			return 0;
	} else if (errno != ENOENT) {
		et_tool_err("%s: exists and is not a symbolic link: not replaced", h->link);
		return ET_EXIT_BAD;
	}
	if (make_parents(h->link))
		return ET_EXIT_BAD;
	char tmp[PATH_MAX + 80];
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", h->link, (long)getpid());
	unlink(tmp);
	if (symlink(h->lib, tmp) != 0 || rename(tmp, h->link) != 0) {
		et_tool_err("%s: cannot make the link: %s", h->link, strerror(errno));
		unlink(tmp);
		return ET_EXIT_BAD;
	}
	sync_dir_of(h->link);
	*made = n <= 0;
	*changed = true;
	return 0;
}

/* A program run with LD_PRELOAD=the new path: exit 0 and not a word from
 * the loader, or one line naming what it said. */
static int trial(const struct hw *h, const char *prog)
{
	char env0[PATH_MAX + 80];
	snprintf(env0, sizeof env0, "LD_PRELOAD=%s", h->link);
	char *argv[] = { (char *)prog, NULL };
	char *envp[] = { env0, NULL };
	char *err = NULL;
	int rc = et_tool_capture(argv, envp, NULL, &err);
	bool quiet = !err || !err[0];
	if (rc != 0 || !quiet) {
		et_tool_err("trial run 'LD_PRELOAD=%s %s' failed (exit status %d%s%.200s): nothing written", h->link,
		            prog, rc, quiet ? "" : "; it said: ", quiet ? "" : et_tool_trim(err));
		free(err);
		return ET_EXIT_BAD;
	}
	free(err);
	return 0;
}

static const char *trial_program(void)
{
	return access("/bin/true", X_OK) == 0 ? "/bin/true" : "/usr/bin/true";
}

/* The directory of the list, the settings and the off switch is one the
 * library trusts (root's, not writable by group or others: as
 * runtime/hostwide.c checks it), or does not exist yet. */
static int check_etc_dir(const struct ctx *c)
{
	char d[PATH_MAX];
	rooted(c, d, sizeof d, ET_HOSTWIDE_ETC);
	struct stat st;
	if (lstat(d, &st) != 0)
		return 0;
	const char *why = et_hostwide_untrusted(&st, true);
	if (why) {
		et_tool_err("%s is %s: the library trusts nothing in it (fix: chown root:root %s; chmod 755 %s): "
		            "nothing written", d, why, d, d);
		return ET_EXIT_BAD;
	}
	return 0;
}

static int enable_entry(struct ctx *c, const char *real);

static int enable_binary(struct ctx *c, const char *path)
{
	char real[PATH_MAX];
	if (check_program(path, real, sizeof real))
		return ET_EXIT_BAD;
	snprintf(c->binary, sizeof c->binary, "%s", real);
	return enable_entry(c, real);
}

/* The list gets real (a resolved path, or ET_HOSTWIDE_ALL), and
 * /etc/ld.so.preload the entry when it has none. */
static int enable_entry(struct ctx *c, const char *real)
{
	struct hw h;
	hw_paths(c, &h);
	if (check_etc_dir(c))
		return ET_EXIT_BAD;
	if (et_tool_library(c->lib_opt, h.lib, sizeof h.lib) || check_lib_elf(h.lib))
		return ET_EXIT_BAD;
	hw_entry_for(c, &h);
	snprintf(c->lib, sizeof c->lib, "%s", h.lib);
	snprintf(c->entry, sizeof c->entry, "%s", h.entry);

	struct list l;
	if (list_read(&h, &l))
		return ET_EXIT_BAD;
	bool listed = false;
	for (size_t i = 0; i < l.n; i++)
		listed |= !strcmp(l.p[i], real);
	char *cur = NULL;
	size_t clen = 0;
	int e = slurp(h.preload, &cur, &clen);
	if (e && e != -ENOENT) {
		et_tool_err("%s: %s: not changed", h.preload, e == -EINVAL ? "not a regular file" : strerror(-e));
		list_free(&l);
		return ET_EXIT_BAD;
	}
	bool had = e == 0;
	bool entered = had && preload_has(cur, h.entry);
	/* the new loader's list: what was there, byte for byte, and a line */
	size_t nlen = clen + strlen(h.entry) + 2;
	char *next = malloc(nlen + 1);
	if (!next) {
		free(cur);
		list_free(&l);
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	nlen = (size_t)snprintf(next, nlen + 1, "%s%s%s\n", had ? cur : "",
	                        (had && clen && cur[clen - 1] != '\n') ? "\n" : "", h.entry);
	if (!listed) {
		char **np = realloc(l.p, (l.n + 1) * sizeof *np);
		if (np) {
			l.p = np;
			l.p[l.n++] = strdup(real);
		}
	}
	size_t ltlen = 0;
	char *lt = list_text(&l, &ltlen);
	int rc = 0;
	if (c->dry) {
		say(c, "would check: LD_PRELOAD=%s %s (exit 0, nothing said)\n", h.link, trial_program());
		say(c, "would link %s -> %s\n", h.link, h.lib);
		event(c, "would link", h.link, "target", h.lib);
		say(c, "would write %s:\n%s", h.list, lt ? lt : "");
		event(c, "would write", h.list, "program", listed ? "already listed" : "listed");
		if (!entered) {
			say(c, "would keep %s as it is now in %s\n", h.preload, had ? h.backup : h.none);
			event(c, "would keep", h.preload, "in", had ? h.backup : h.none);
			say(c, "would write %s:\n%s", h.preload, next);
			event(c, "would write", h.preload, "entry", h.entry);
		} else {
			say(c, "%s already names %s: unchanged\n", h.preload, h.entry);
			event(c, "unchanged", h.preload, "entry", h.entry);
		}
		goto out;
	}
	bool made = false, changed = false;
	if ((rc = make_link(&h, &made, &changed)) != 0)
		goto out;
	if ((rc = trial(&h, trial_program())) != 0) {
		if (made) {
			char stop[PATH_MAX + 64];
			link_stop(&h, stop, sizeof stop);
			unlink(h.link);
			remove_empty_parents(h.link, stop);
		}
		goto out;
	}
	if ((rc = make_parents(h.list)) != 0 || (rc = write_atomic(h.list, lt, ltlen, 0644)) != 0)
		goto out;
	event(c, changed ? "link" : "unchanged", h.link, "target", h.lib);
	say(c, "%s %s in %s\n", listed ? "already listed:" : "listed", strcmp(real, ET_HOSTWIDE_ALL) ? real :
	    ET_HOSTWIDE_ALL " (every program)", h.list);
	event(c, "write", h.list, "program", listed ? "already listed" : "listed");
	if (entered) {
		say(c, "%s already names %s\n", h.preload, h.entry);
		event(c, "unchanged", h.preload, "entry", h.entry);
		goto out;
	}
	/* the backup first, then the loader's list */
	struct stat st;
	mode_t mode = had && stat(h.preload, &st) == 0 ? (st.st_mode & 07777) : 0644;
	if (had) {
		rc = write_atomic(h.backup, cur, clen, mode);
		unlink(h.none);
	} else {
		static const char note[] = MARKER " there was no " ET_HOSTWIDE_PRELOAD " before\n";
		rc = write_atomic(h.none, note, sizeof note - 1, 0644);
		unlink(h.backup);
	}
	if (!rc)
		rc = write_atomic(h.preload, next, nlen, mode);
	if (rc) {
		/* the list as it was: nothing half-done */
		if (!listed && !l.exists) {
			unlink(h.list);
		} else if (!listed) {
			free(l.p[--l.n]);
			size_t plen;
			char *pt = list_text(&l, &plen);
			if (pt)
				write_atomic(h.list, pt, plen, 0644);
			free(pt);
		}
		goto out;
	}
	say(c, "kept %s as it was in %s\n", h.preload, had ? h.backup : h.none);
	event(c, "keep", h.preload, "in", had ? h.backup : h.none);
	say(c, "wrote %s: it names %s -> %s\n", h.preload, h.entry, h.lib);
	event(c, "write", h.preload, "entry", h.entry);
	say(c, "takes effect in each program started from now on\n");
out:
	free(lt);
	free(next);
	free(cur);
	list_free(&l);
	return rc;
}

/* ld.so.preload without the line (or word) entry: into a malloc'd copy. */
static char *preload_without(const char *buf, const char *entry, size_t *len)
{
	size_t n = strlen(buf), el = strlen(entry);
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (const char *p = buf; *p;) {
		size_t ll = strcspn(p, "\n");
		bool nl = p[ll] == '\n';
		if (ll == el && !strncmp(p, entry, el)) {
			p += ll + nl;
			continue;
		}
		memcpy(out + o, p, ll + nl);
		o += ll + nl;
		p += ll + nl;
	}
	out[o] = '\0';
	*len = o;
	return out;
}

static int disable_binary(struct ctx *c, const char *path)
{
	struct hw h;
	hw_paths(c, &h);
	struct list l;
	if (list_read(&h, &l))
		return ET_EXIT_BAD;
	const char *what = c->all ? "--all" : "--binary ";
	if (c->all)
		path = "";
	if (!l.exists) {
		et_tool_err("%s%s: %s does not exist: no program is enabled", what, path, h.list);
		return ET_EXIT_BAD;
	}
	char real[PATH_MAX];
	if (c->all)
		snprintf(real, sizeof real, "%s", ET_HOSTWIDE_ALL);
	else if (!realpath(path, real))
		snprintf(real, sizeof real, "%s", path);
	if (!c->all)
		snprintf(c->binary, sizeof c->binary, "%s", real);
	size_t k = 0;
	bool found = false;
	for (size_t i = 0; i < l.n; i++) {
		if (!strcmp(l.p[i], real) || !strcmp(l.p[i], path)) {
			found = true;
			free(l.p[i]);
		} else {
			l.p[k++] = l.p[i];
		}
	}
	l.n = k;
	if (!found) {
		if (c->all)
			et_tool_err("--all: not enabled (%s has no '" ET_HOSTWIDE_ALL "' line)", h.list);
		else
			et_tool_err("--binary %s: not in %s", path, h.list);
		list_free(&l);
		return ET_EXIT_BAD;
	}
	int rc = 0;
	if (l.n > 0) {
		size_t len;
		char *t = list_text(&l, &len);
		c->programs_left = (long)l.n;
		if (c->dry) {
			say(c, "would write %s:\n%s", h.list, t ? t : "");
			event(c, "would write", h.list, NULL, NULL);
		} else if (!t || (rc = write_atomic(h.list, t, len, 0644)) == 0) {
			say(c, "removed %s from %s (%zu program%s left)\n", c->all ? ET_HOSTWIDE_ALL " (every program)" : real,
			    h.list, l.n, et_tool_s(l.n));
			event(c, "write", h.list, NULL, NULL);
		}
		free(t);
		list_free(&l);
		return rc;
	}
	list_free(&l);
	c->programs_left = 0;

	/* the last one: the loader's list as it was */
	char *cur = NULL, *orig = NULL;
	size_t clen = 0, olen = 0;
	int e = slurp(h.preload, &cur, &clen);
	bool had_cur = e == 0;
	int eo = slurp(h.backup, &orig, &olen);
	bool had_orig = eo == 0;
	bool noted = access(h.none, F_OK) == 0;
	char entry[PATH_MAX + 64] = "";
	if (!(had_cur && et_tool_preload_entry(cur, entry, sizeof entry))) {
		if (!et_tool_library(c->lib_opt, h.lib, sizeof h.lib)) {
			hw_entry_for(c, &h);
			snprintf(entry, sizeof entry, "%s", h.entry);
			snprintf(c->lib, sizeof c->lib, "%s", h.lib);
		}
	}
	snprintf(c->entry, sizeof c->entry, "%s", entry);
	snprintf(h.entry, sizeof h.entry, "%s", entry);
	snprintf(h.link, sizeof h.link, "%s%s", c->root, entry);
	/* what enable wrote: the backup and the entry's line */
	char *expect = NULL;
	size_t elen = 0;
	if (had_orig || noted) {
		if (asprintf(&expect, "%s%s%s\n", had_orig ? orig : "",
		             (had_orig && olen && orig[olen - 1] != '\n') ? "\n" : "", entry) >= 0)
			elen = strlen(expect);
	}
	bool as_written = had_cur && expect && elen == clen && !memcmp(expect, cur, clen);
	struct stat st;
	mode_t mode = had_orig && stat(h.backup, &st) == 0 ? (st.st_mode & 07777) : 0644;
	if (c->dry) {
		if (as_written && had_orig) {
			say(c, "would put back %s from %s (byte for byte)\n", h.preload, h.backup);
			event(c, "would put back", h.preload, "from", h.backup);
		} else if (as_written) {
			say(c, "would remove %s (there was none before)\n", h.preload);
			event(c, "would remove", h.preload, NULL, NULL);
		} else if (had_cur && entry[0] && preload_has(cur, entry)) {
			say(c, "would remove the line %s from %s (changed since enable: the rest kept)\n", entry, h.preload);
			event(c, "would remove the line", h.preload, "entry", entry);
		}
		say(c, "would remove %s, %s%s\n", h.list, had_orig ? h.backup : h.none, entry[0] ? " and the link" : "");
		event(c, "would remove", h.list, NULL, NULL);
		event(c, "would remove", had_orig ? h.backup : h.none, NULL, NULL);
		if (entry[0])
			event(c, "would remove", h.link, NULL, NULL);
		goto out;
	}
	if (as_written && had_orig) {
		if ((rc = write_atomic(h.preload, orig, olen, mode)) != 0)
			goto out;
		say(c, "put back %s as it was before (from %s)\n", h.preload, h.backup);
		event(c, "put back", h.preload, "from", h.backup);
	} else if (as_written) {
		if (unlink(h.preload) != 0) {
			et_tool_err("%s: cannot remove: %s", h.preload, strerror(errno));
			rc = ET_EXIT_BAD;
			goto out;
		}
		sync_dir_of(h.preload);
		say(c, "removed %s (there was none before)\n", h.preload);
		event(c, "remove", h.preload, NULL, NULL);
	} else if (had_cur && entry[0] && preload_has(cur, entry)) {
		size_t nlen;
		char *n = preload_without(cur, entry, &nlen);
		if (!n || (rc = write_atomic(h.preload, n, nlen, stat(h.preload, &st) == 0 ? st.st_mode & 07777 : 0644))) {
			free(n);
			rc = ET_EXIT_BAD;
			goto out;
		}
		free(n);
		say(c, "removed the line %s from %s (it changed since enable: the rest kept as it is)\n", entry,
		    h.preload);
		event(c, "remove the line", h.preload, "entry", entry);
	} else {
		say(c, "%s does not name the library: left as it is\n", h.preload);
		event(c, "unchanged", h.preload, NULL, NULL);
	}
	unlink(h.list);
	if (unlink(h.backup) == 0) {
		say(c, "removed %s\n", h.backup);
		event(c, "remove", h.backup, NULL, NULL);
	}
	if (unlink(h.none) == 0) {
		say(c, "removed %s\n", h.none);
		event(c, "remove", h.none, NULL, NULL);
	}
	say(c, "removed %s\n", h.list);
	event(c, "remove", h.list, NULL, NULL);
	char etc_en[PATH_MAX];
	rooted(c, etc_en, sizeof etc_en, "/etc/enormoustext");
	rmdir(etc_en);
	if (entry[0]) {
		char cur_l[PATH_MAX];
		if (readlink(h.link, cur_l, sizeof cur_l) > 0 && unlink(h.link) == 0) {
			char stop[PATH_MAX + 64];
			link_stop(&h, stop, sizeof stop);
			say(c, "removed the link %s\n", h.link);
			event(c, "remove", h.link, NULL, NULL);
			remove_empty_parents(h.link, stop);
		}
	}
out:
	free(expect);
	free(cur);
	free(orig);
	return rc;
}

/* -------------------------------------------------------------- --all */

/* The settings file enable --all writes (core/hostconf.h's form). */
static char *conf_text(const struct ctx *c, size_t *len)
{
	char *t = NULL;
	FILE *f = open_memstream(&t, len);
	if (!f)
		return NULL;
	fprintf(f, MARKER " the host's settings for every program (enormoustext %s, 'enable --all')\n"
	           "# NAME=VALUE a line: the library's variables (a process's own environment\n"
	           "# wins), " ET_HOSTCONF_PROGRAMS "= and " ET_HOSTCONF_EXCLUDE "= (colon-separated globs on a\n"
	           "# program's path or name); 'enormoustext disable --all' removes this file\n",
	        ENORMOUSTEXT_VERSION_STRING);
	if (c->programs)
		fprintf(f, ET_HOSTCONF_PROGRAMS "=%s\n", c->programs);
	if (c->exclude)
		fprintf(f, ET_HOSTCONF_EXCLUDE "=%s\n", c->exclude);
	size_t nt;
	const struct et_option_desc *tb = et_option_table(&nt);
	for (size_t i = 0; i < nt && i < ET_OPT__COUNT; i++)
		if (c->env[i])
			fprintf(f, "%s=%s\n", tb[i].name, c->env[i]);
	fclose(f);
	return t;
}

/* A program built with gcc's -fsanitize=address (its shared runtime)
 * stops at start when any library is loaded before that runtime, and
 * /etc/ld.so.preload loads this one first in every program
 * (docs/hosts.md). */
static const char asan_note[] =
	"programs built with gcc's -fsanitize=address (the shared libasan) stop at start\n"
	"  while any library is preloaded ('ASan runtime does not come first'), and\n"
	"  /etc/ld.so.preload now loads this one into every program (excluded ones too):\n"
	"  run them with ASAN_OPTIONS=verify_asan_link_order=0 (this command does not set\n"
	"  it for you); clang's -fsanitize=address and the other sanitizers are not\n"
	"  affected";

static int enable_all(struct ctx *c)
{
	char conf[PATH_MAX];
	rooted(c, conf, sizeof conf, ET_HOSTWIDE_CONF);
	snprintf(c->binary, sizeof c->binary, "%s", "");
	char *old = NULL;
	size_t olen = 0;
	int e = slurp(conf, &old, &olen);
	if (e && e != -ENOENT) {
		et_tool_err("%s: %s: not changed", conf, e == -EINVAL ? "not a regular file" : strerror(-e));
		return ET_EXIT_BAD;
	}
	if (e == 0 && !has_marker(old)) {
		et_tool_err("%s exists and was not written by 'enormoustext enable' (no '%s' first line): not changed",
		            conf, MARKER);
		free(old);
		return ET_EXIT_BAD;
	}
	/* the library checked before the settings are written (enable_entry
	 * checks it again, after them): a refusal leaves nothing behind */
	char lib[PATH_MAX + 8];
	if (check_etc_dir(c) || et_tool_library(c->lib_opt, lib, sizeof lib) || check_lib_elf(lib)) {
		free(old);
		return ET_EXIT_BAD;
	}
	size_t tlen = 0;
	char *text = conf_text(c, &tlen);
	if (!text) {
		free(old);
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	int rc = 0;
	if (c->dry) {
		say(c, "would write %s:\n%s", conf, text);
		event(c, "would write", conf, NULL, NULL);
		rc = enable_entry(c, ET_HOSTWIDE_ALL);
	} else if ((rc = make_parents(conf)) == 0 && (rc = write_atomic(conf, text, tlen, 0644)) == 0) {
		rc = enable_entry(c, ET_HOSTWIDE_ALL);
		if (rc) {
			/* the settings as they were: nothing half-done */
			if (old)
				write_atomic(conf, old, olen, 0644);
			else
				unlink(conf);
		} else {
			say(c, "wrote %s: the settings every program gets\n", conf);
			event(c, "write", conf, NULL, NULL);
		}
	}
	if (rc == 0) {
		say(c, "note: %s\n", asan_note);
		c->asan_note = true;
	}
	free(text);
	free(old);
	return rc;
}

static int disable_all(struct ctx *c)
{
	char conf[PATH_MAX];
	rooted(c, conf, sizeof conf, ET_HOSTWIDE_CONF);
	char *old = NULL;
	size_t olen = 0;
	int e = slurp(conf, &old, &olen);
	bool ours = e == 0 && has_marker(old);
	free(old);
	int rc = disable_binary(c, "");
	if (rc)
		return rc;
	if (e == 0 && !ours) {
		warn(c, "%s was not written by 'enormoustext enable': left as it is", conf);
	} else if (ours) {
		if (remove_file(c, conf))
			return ET_EXIT_BAD;
		if (c->dry)
			return 0;
		char etc_en[PATH_MAX];
		rooted(c, etc_en, sizeof etc_en, ET_HOSTWIDE_ETC);
		rmdir(etc_en);
	}
	return 0;
}

/* ------------------------------------------------------------- --list */

/* The drop-ins enable wrote (MARKER first) under ROOT/etc/systemd/system,
 * the programs of the host-wide list, and --all's settings: as lines, or
 * JSON. */
static int list_enabled(struct ctx *c)
{
	struct et_json j;
	if (c->json) {
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_str(&j, "command", "enable");
		et_json_bool(&j, "list", true);
		et_json_str(&j, "root", c->root);
		et_json_arr(&j, "units");
	}
	char dir[PATH_MAX];
	rooted(c, dir, sizeof dir, "/etc/systemd/system");
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort);
	size_t nunits = 0;
	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		size_t dl = strlen(d);
		char path[PATH_MAX + 300], *buf = NULL;
		size_t len;
		if (dl > 2 && !strcmp(d + dl - 2, ".d") &&
		    snprintf(path, sizeof path, "%s/%s/" DROPIN, dir, d) < (int)sizeof path &&
		    slurp(path, &buf, &len) == 0 && has_marker(buf)) {
			char unit[300];
			snprintf(unit, sizeof unit, "%.*s", (int)(dl - 2), d);
			if (c->json) {
				et_json_obj(&j, NULL);
				et_json_str(&j, "unit", unit);
				et_json_str(&j, "dropin", path);
				et_json_arr(&j, "environment");
			} else {
				printf("unit %s: %s\n", unit, path);
			}
			for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
				if (strncmp(l, "Environment=", 12) && strncmp(l, "ExecStartPre=", 13))
					continue;
				if (c->json && !strncmp(l, "Environment=", 12))
					et_json_str(&j, NULL, l + 12);
				else if (!c->json)
					printf("  %s\n", l);
			}
			if (c->json) {
				et_json_arr_end(&j);
				et_json_obj_end(&j);
			}
			nunits++;
		}
		free(buf);
		free(ents[i]);
	}
	free(ents);
	if (c->json)
		et_json_arr_end(&j);

	struct hw h;
	hw_paths(c, &h);
	char *cur = NULL, entry[PATH_MAX + 64] = "";
	size_t clen;
	if (slurp(h.preload, &cur, &clen) == 0)
		(void)et_tool_preload_entry(cur, entry, sizeof entry);
	free(cur);
	struct list l;
	int rc = list_read(&h, &l);
	bool all = false;
	if (c->json) {
		if (entry[0])
			et_json_str(&j, "preload_entry", entry);
		else
			et_json_null(&j, "preload_entry");
		et_json_arr(&j, "programs");
	} else if (entry[0]) {
		printf("%s names %s; %s lists:\n", h.preload, entry, h.list);
	} else if (l.n) {
		printf("%s does not name the library; %s lists:\n", h.preload, h.list);
	}
	for (size_t i = 0; i < l.n; i++) {
		if (!strcmp(l.p[i], ET_HOSTWIDE_ALL)) {
			all = true;
			if (!c->json)
				printf("  " ET_HOSTWIDE_ALL "  every program (enable --all)\n");
		} else if (c->json) {
			et_json_str(&j, NULL, l.p[i]);
		} else {
			printf("  %s  (enable --binary)\n", l.p[i]);
		}
	}
	if (c->json) {
		et_json_arr_end(&j);
		et_json_bool(&j, "all", all);
	}
	char conf[PATH_MAX];
	rooted(c, conf, sizeof conf, ET_HOSTWIDE_CONF);
	char *text = NULL;
	size_t tlen;
	bool have_conf = slurp(conf, &text, &tlen) == 0 && has_marker(text);
	if (c->json)
		et_json_obj(&j, "settings");
	if (have_conf) {
		/* as the library reads it (core/hostconf.c) */
		struct et_hostconf hc;
		et_hostconf_parse(text, &hc);
		if (!c->json)
			printf("%s:\n", conf);
		size_t nt;
		const struct et_option_desc *t = et_option_table(&nt);
		for (int i = -2; i < (int)nt && i < ET_OPT__COUNT; i++) {
			const char *k = i == -2 ? ET_HOSTCONF_PROGRAMS : i == -1 ? ET_HOSTCONF_EXCLUDE : t[i].name;
			const char *v = i == -2 ? hc.programs : i == -1 ? hc.exclude : hc.val[i];
			if (!v)
				continue;
			if (c->json)
				et_json_str(&j, k, v);
			else
				printf("  %s=%s\n", k, v);
		}
	}
	free(text);
	if (c->json) {
		et_json_obj_end(&j);
		et_json_obj_end(&j);
		et_json_end(&j);
	} else if (!nunits && !l.n && !have_conf) {
		printf("nothing: no drop-in of enable in %s, no program in %s\n", dir, h.list);
	}
	list_free(&l);
	return rc;
}

/* ------------------------------------------------------------- options */

static const struct et_opt unit_opts[] = {
	{ "env", 0, "NAME=VALUE",
	  "a variable of the library (ENORMOUSTEXT_VERBOSE=1, or\n"
	  "VERBOSE=1), checked as 'enormoustext run' checks it\n"
	  "(with --all: a setting of every program)",
	  OPT_ENV, ET_OPTF_REPEAT, 0, 1 | 4, NULL, ET_COMP_NONE },
	{ "prime", 0, NULL,
	  "ExecStartPre=-enormoustext prime <the unit's program\n"
	  "and its shared libraries> (from ExecStart=)",
	  OPT_PRIME, 0, 0, 1, NULL, 0 },
	{ "no-reload", 0, NULL, "do not run 'systemctl daemon-reload'", OPT_NO_RELOAD, 0, 0, 1, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_opt binary_opts[] = {
	{ "binary", 0, "PATH", "the program (instead of a UNIT)", OPT_BINARY, ET_OPTF_REQUIRED, 0, 2, NULL,
	  ET_COMP_FILE },
	{ "all", 0, NULL, "every dynamically linked program of the host", OPT_ALL, ET_OPTF_REQUIRED, 0, 4, NULL,
	  0 },
	{ "mode", 0, "N",
	  "with --all: 1 text, 2 JIT code only, 3 both\n"
	  "(ENORMOUSTEXT_MODE)",
	  OPT_MODE, 0, 0, 4, "1 2 3", 0 },
	{ "pad-threshold", 0, "BYTES",
	  "with --all: pad a partial last window with more text\n"
	  "than this (ENORMOUSTEXT_PAD_THRESHOLD)",
	  OPT_PAD, 0, 0, 4, NULL, 0 },
	{ "programs", 0, "GLOBS",
	  "with --all: only programs whose path or name matches\n"
	  "one of these colon-separated globs act",
	  OPT_PROGRAMS, 0, 0, 4, NULL, 0 },
	{ "exclude-programs", 0, "GLOBS",
	  "with --all: programs matching one of these never act\n"
	  "(they still load the library: it stands down)",
	  OPT_EXCLUDE, 0, 0, 4, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_opt both_opts[] = {
	{ "list", 0, NULL,
	  "list what enable wrote: the units' drop-ins, the\n"
	  "programs of " ET_HOSTWIDE_LIST ", --all's settings",
	  OPT_LIST, ET_OPTF_REQUIRED, 0, 8, NULL, 0 },
	{ "lib", 0, "PATH", "the library (default: as 'enormoustext run' finds it)", OPT_LIB, 0, 0, 1 | 2 | 4,
	  NULL, ET_COMP_FILE },
	{ "dry-run", 'n', NULL, "print what would be written and where; write nothing", OPT_DRY, 0, 0, 1 | 2 | 4,
	  NULL, 0 },
	{ "root", 0, "DIR",
	  "put DIR before every path written or read under /etc\n"
	  "(and the unit directories, the link): for tests and\n"
	  "image building; the program and the library are this\n"
	  "system's",
	  OPT_ROOT, 0, 0, 0, NULL, ET_COMP_DIR },
	{ "json", 0, NULL,
	  "JSON on stdout instead of the lines: dry_run, root,\n"
	  "unit or binary, library, environment (a unit's\n"
	  "variables), prime (the files primed), entry (the\n"
	  "path /etc/ld.so.preload names), all, settings and\n"
	  "note (--all), files (path, action, and target, in or\n"
	  "entry), reload, restart, warnings; with --list: units,\n"
	  "preload_entry, programs, all, settings",
	  OPT_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec enable_spec = {
	.name = "enable",
	.forms = { { "UNIT", NULL }, { NULL, NULL } },
	.about =
	        "Turn libenormoustext on, persistently.\n"
	        "\n"
	        "UNIT (a systemd service; 'mariadb' means mariadb.service): writes the drop-in\n"
	        "/etc/systemd/system/UNIT.d/" DROPIN "\n"
	        "with Environment=LD_PRELOAD=<the library>, then runs 'systemctl daemon-reload'\n"
	        "when systemd runs this system.  The service must be restarted for it to take\n"
	        "effect.  A unit that systemd (or, with --root, the unit directories) does not\n"
	        "know draws a warning naming the units nearest to it (a typo?); the drop-in is\n"
	        "written all the same (a unit installed later).  Root is needed (not with\n"
	        "--dry-run or --root).\n"
	        "\n"
	        "--binary PATH (a dynamically linked program, no wrapper, no unit): the\n"
	        "library goes into /etc/ld.so.preload through a path of its own\n"
	        "(" ET_HOSTWIDE_LINKDIR "/, a symbolic link) and PATH, resolved, into\n"
	        ET_HOSTWIDE_LIST ": every other program loads the library and it does\n"
	        "nothing there.  The ld.so.preload there before is kept byte for byte and put\n"
	        "back by 'disable --binary' when no program is left.  Before writing, a\n"
	        "program is run with the library loaded through the new path.\n"
	        "\n"
	        "--all: the same entry, and every program acts, by the host's settings in\n"
	        ET_HOSTWIDE_CONF " (--mode, --pad-threshold, --env; a\n"
	        "process's own environment wins, ENORMOUSTEXT=0 turns it off; a setuid program\n"
	        "never acts), the programs --programs names (default: all) and not those of\n"
	        "--exclude-programs.  The library trusts the list, the settings and the off\n"
	        "switch only while they and " ET_HOSTWIDE_ETC " are root's and not writable by\n"
	        "group or others.  --binary programs act beside it, whatever its globs say.\n"
	        "\n"
	        "--list: what this command wrote, and nothing is changed.\n",
	.sections = { { "for a UNIT:", unit_opts }, { "host-wide (a program, or every one):", binary_opts },
	              { "all forms:", both_opts } },
	.tail = "A file there that this command did not write (no\n"
	        "'" MARKER "' first line) is never replaced.  Exit status: 0 done;\n"
	        "1 a bad input or a failed write (nothing changed); 2 usage error.\n",
	.operand = ET_COMP_UNIT,
};

static const struct et_opt disable_unit_opts[] = {
	{ "no-reload", 0, NULL, "do not run 'systemctl daemon-reload'", OPT_NO_RELOAD, 0, 0, 1, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_opt disable_binary_opts[] = {
	{ "binary", 0, "PATH", "the program enable --binary named", OPT_BINARY, ET_OPTF_REQUIRED, 0, 2, NULL,
	  ET_COMP_FILE },
	{ "all", 0, NULL, "undo enable --all", OPT_ALL, ET_OPTF_REQUIRED, 0, 4, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_opt disable_both_opts[] = {
	{ "dry-run", 'n', NULL, "print what would be removed; change nothing", OPT_DRY, 0, 0, 0, NULL, 0 },
	{ "root", 0, "DIR", "as for enable (tests, image building)", OPT_ROOT, 0, 0, 0, NULL, ET_COMP_DIR },
	{ "json", 0, NULL,
	  "JSON on stdout instead of the lines: dry_run, root,\n"
	  "unit or binary, library, entry, programs_left\n"
	  "(--binary), files (path, action, and from or\n"
	  "entry), reload, restart, warnings",
	  OPT_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec disable_spec = {
	.name = "disable",
	.forms = { { "UNIT", NULL }, { NULL, NULL } },
	.about =
	        "Undo 'enormoustext enable'.\n"
	        "\n"
	        "UNIT: removes /etc/systemd/system/UNIT.d/" DROPIN " (only when 'enable'\n"
	        "wrote it) and UNIT.d when it is left empty, then 'systemctl daemon-reload'\n"
	        "(unless --no-reload, or systemd does not run here).  Restart the service.\n"
	        "\n"
	        "--binary PATH: takes PATH out of " ET_HOSTWIDE_LIST "; when no program is\n"
	        "left, puts /etc/ld.so.preload back byte for byte as it was before 'enable'\n"
	        "(or removes it when there was none), and removes the list and the link.\n"
	        "\n"
	        "--all: takes every program (the list's '" ET_HOSTWIDE_ALL "' line) out the same way, and\n"
	        "removes " ET_HOSTWIDE_CONF "; programs of --binary stay.\n",
	.sections = { { "for a UNIT:", disable_unit_opts }, { "host-wide:", disable_binary_opts },
	              { "both:", disable_both_opts } },
	.tail = "Exit status: 0 done; 1 nothing of enable's there, or a failed change; 2\n"
	        "usage error.\n",
	.operand = ET_COMP_UNIT,
};

const struct et_cmd_spec *et_cmd_enable_spec(void)
{
	return &enable_spec;
}

const struct et_cmd_spec *et_cmd_disable_spec(void)
{
	return &disable_spec;
}

/* The variables given (--env, --mode, --pad-threshold), as NAME: VALUE. */
static void json_env(struct et_json *j, const struct ctx *c)
{
	size_t nt;
	const struct et_option_desc *t = et_option_table(&nt);
	for (size_t i = 0; i < nt && i < ET_OPT__COUNT; i++)
		if (c->env[i])
			et_json_str(j, t[i].name, c->env[i]);
}

/* --json: the report gathered in c (after a success). */
static void report_json(const struct ctx *c)
{
	struct et_json j;
	et_json_init(&j, stdout);
	et_json_obj(&j, NULL);
	et_json_str(&j, "command", c->enable ? "enable" : "disable");
	et_json_bool(&j, "dry_run", c->dry);
	et_json_str(&j, "root", c->root);
	if (c->unit[0])
		et_json_str(&j, "unit", c->unit);
	else
		et_json_null(&j, "unit");
	if (c->binary[0])
		et_json_str(&j, "binary", c->binary);
	else
		et_json_null(&j, "binary");
	if (c->lib[0])
		et_json_str(&j, "library", c->lib);
	else
		et_json_null(&j, "library");
	if (c->unit[0] && c->enable) {
		et_json_obj(&j, "environment");
		et_json_str(&j, "LD_PRELOAD", c->lib);
		json_env(&j, c);
		et_json_obj_end(&j);
		et_json_arr(&j, "prime");
		for (size_t i = 0; i < c->nprime; i++)
			et_json_str(&j, NULL, c->prime_files[i]);
		et_json_arr_end(&j);
	}
	et_json_bool(&j, "all", c->all);
	if (c->all && c->enable) {
		et_json_obj(&j, "settings");
		if (c->programs)
			et_json_str(&j, ET_HOSTCONF_PROGRAMS, c->programs);
		if (c->exclude)
			et_json_str(&j, ET_HOSTCONF_EXCLUDE, c->exclude);
		json_env(&j, c);
		et_json_obj_end(&j);
		et_json_str(&j, "note", c->asan_note ? asan_note : NULL);
	}
	if (c->binary[0] || c->all) {
		if (c->entry[0])
			et_json_str(&j, "entry", c->entry);
		else
			et_json_null(&j, "entry");
		if (!c->enable) {
			if (c->programs_left >= 0)
				et_json_i64(&j, "programs_left", c->programs_left);
			else
				et_json_null(&j, "programs_left");
		}
	}
	et_json_arr(&j, "files");
	for (size_t i = 0; i < c->nev; i++) {
		et_json_obj_flat(&j, NULL);
		et_json_str(&j, "path", c->ev[i].path);
		et_json_str(&j, "action", c->ev[i].action);
		if (c->ev[i].key)
			et_json_str(&j, c->ev[i].key, c->ev[i].value);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	if (c->unit[0]) {
		if (c->reload) {
			et_json_str(&j, "reload", c->reload);
			char cmd[340];
			snprintf(cmd, sizeof cmd, "systemctl restart %s", c->unit);
			et_json_str(&j, "restart", cmd);
		} else {
			et_json_null(&j, "reload");
		}
	}
	et_json_arr(&j, "warnings");
	for (size_t i = 0; i < c->nwarn; i++)
		et_json_str(&j, NULL, c->warn[i]);
	et_json_arr_end(&j);
	et_json_obj_end(&j);
	et_json_end(&j);
}

static void ctx_free(struct ctx *c)
{
	for (size_t i = 0; i < c->nev; i++) {
		free(c->ev[i].path);
		free(c->ev[i].value);
	}
	for (size_t i = 0; i < c->nwarn; i++)
		free(c->warn[i]);
	for (size_t i = 0; i < c->nprime; i++)
		free(c->prime_files[i]);
	free(c->prime_files);
}

/* --env NAME=VALUE: NAME is a variable of the table (the prefix may be
 * left out); usage error otherwise. */
static int take_env(struct ctx *c, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return et_tool_usage("--env '%s': give NAME=VALUE", arg);
	char name[64];
	size_t n = (size_t)(eq - arg);
	bool prefixed = n >= 12 && !strncmp(arg, "ENORMOUSTEXT", 12);
	if (n >= sizeof name - 16)
		return et_tool_usage("--env '%s': no such variable", arg);
	snprintf(name, sizeof name, "%s%.*s", prefixed ? "" : "ENORMOUSTEXT_", (int)n, arg);
	int id = et_tool_option_index(name);
	if (id < 0) {
		const char *near = et_option_nearest(name);
		if (near)
			return et_tool_usage("--env '%s': %s is not a variable of libenormoustext (did you mean %s?)",
			                     arg, name, near);
		return et_tool_usage("--env '%s': %s is not a variable of libenormoustext", arg, name);
	}
	if (strchr(eq + 1, '\n'))
		return et_tool_usage("--env '%s': a value cannot hold a newline", name);
	if (c->env[id])
		return et_tool_usage("--env '%s': %s is given twice", arg, name);
	c->env[id] = eq + 1;
	return 0;
}

/* Options, then the work; what was done is gathered in *c (--json). */
static int main_common(struct ctx *c, int argc, char **argv)
{
	bool enable = c->enable;
	const char *binary = NULL, *host_opt = NULL;
	bool any_env = false, list = false;
	struct et_args a;
	et_args_init(&a, enable ? &enable_spec : &disable_spec, argc, argv);
	int o, rc;
	while ((o = et_args_next(&a)) > 0) {
		switch (o) {
		case OPT_DRY:
			c->dry = true;
			break;
		case OPT_ENV:
			if ((rc = take_env(c, a.val)) != 0)
				return rc;
			any_env = true;
			break;
		case OPT_PRIME:
			c->prime = true;
			break;
		case OPT_LIB:
			c->lib_opt = a.val;
			break;
		case OPT_NO_RELOAD:
			c->no_reload = true;
			break;
		case OPT_ROOT:
			c->root = a.val;
			break;
		case OPT_BINARY:
			binary = a.val;
			break;
		case OPT_ALL:
			c->all = true;
			break;
		case OPT_LIST:
			list = true;
			break;
		case OPT_MODE:
		case OPT_PAD: {
			int id = o == OPT_MODE ? ET_OPT_MODE : ET_OPT_PAD_THRESHOLD;
			if (c->env[id])
				return et_tool_usage("%s: ENORMOUSTEXT_%s is given twice", et_args_name(&a),
				                     o == OPT_MODE ? "MODE" : "PAD_THRESHOLD");
			c->env[id] = a.val;
			any_env = true;
			host_opt = o == OPT_MODE ? "--mode" : "--pad-threshold";
			break;
		}
		case OPT_PROGRAMS:
		case OPT_EXCLUDE:
			if (!a.val[0] || strchr(a.val, '\n'))
				return et_tool_usage("%s '%s': give colon-separated globs, on one line", et_args_name(&a),
				                     a.val);
			*(o == OPT_PROGRAMS ? &c->programs : &c->exclude) = a.val;
			host_opt = o == OPT_PROGRAMS ? "--programs" : "--exclude-programs";
			break;
		case OPT_JSON:
			c->json = true;
			break;
		}
	}
	if (o < 0)
		return et_args_exit(o);
	static char root[PATH_MAX];   /* c->root, read by the report after this returns */
	root[0] = '\0';
	if (c->root[0]) {
		struct stat st;
		if (stat(c->root, &st) != 0 || !S_ISDIR(st.st_mode) || !realpath(c->root, root)) {
			et_tool_err("--root %s: not a directory", c->root);
			return ET_EXIT_BAD;
		}
		if (!strcmp(root, "/"))
			root[0] = '\0';
		c->root = root;
	}
	/* what is written under /etc is root's: said before anything is read
	 * or tried (a user gets one line, not a failed write halfway) */
	if (list) {
		if (a.nops || binary || c->all || any_env || host_opt || c->prime)
			return et_tool_usage("--list takes no UNIT and no other option but --root and --json");
		c->listed = true;
		return list_enabled(c);
	}
	if (host_opt && !c->all)
		return et_tool_usage("%s is a setting of --all", host_opt);
	if (c->all && (binary || a.nops))
		return et_tool_usage("give one of UNIT, --binary PATH and --all");
	if (!c->root[0] && !c->dry && geteuid() != 0) {
		const char *dir = binary || c->all ? "/etc" : "/etc/systemd/system";
		if (access(dir, W_OK) != 0) {
			et_tool_err("%s %s needs root: it writes %s; run it as root (sudo), or see what it "
			            "would %s with --dry-run", enable ? "enable" : "disable",
			            c->all ? "--all" : binary ? "--binary" : "UNIT",
			            binary || c->all ? "/etc/ld.so.preload and " ET_HOSTWIDE_LIST :
			            "/etc/systemd/system/UNIT.d/" DROPIN,
			            enable ? "write" : "remove");
			return ET_EXIT_BAD;
		}
	}
	if (c->all) {
		if (c->prime)
			return et_tool_usage("--prime is for a unit");
		if (enable && any_env) {
			size_t nt;
			const struct et_option_desc *t = et_option_table(&nt);
			for (int i = 0; i < ET_OPT__COUNT; i++)
				if (c->env[i] && !et_hostconf_settable(i))
					return et_tool_usage("--env %s: not a setting for every program (%s)", t[i].name,
					                     i == ET_OPT_TOP_ONLY ? "it is about LD_PRELOAD, which --all does not use" :
					                     "it names a file each process would write");
			const char *accepts = "";
			int bad = et_tool_options_bad(c->env, &accepts);
			if (bad >= 0)
				return et_tool_usage("--env '%s=%s' is not valid: it accepts %s", t[bad].name,
				                     c->env[bad], accepts);
			/* host-wide, nobody asked the programs to speak */
			char why[PATH_MAX + 256];
			if (et_tool_options_speak(c->env, why, sizeof why))
				return et_tool_usage("not a setting for every program: %s", why);
		}
		return enable ? enable_all(c) : disable_all(c);
	}
	if (binary) {
		if (a.nops)
			return et_tool_usage("give either UNIT or --binary PATH, not both ('%s')", a.ops[0]);
		if (any_env || c->prime)
			return et_tool_usage("--env and --prime are for a unit: with --binary the program's own "
			                     "environment applies");
		if (!*binary)
			return et_tool_usage("--binary: the path is empty");
		return enable ? enable_binary(c, binary) : disable_binary(c, binary);
	}
	if (!a.nops)
		return et_tool_usage("give a UNIT (a systemd service), --binary PATH or --all");
	if (a.nops > 1)
		return et_tool_usage("one UNIT at a time ('%s' is one too many)", a.ops[1]);
	if (enable && any_env) {
		const char *accepts = "";
		int bad = et_tool_options_bad(c->env, &accepts);
		if (bad >= 0) {
			size_t n;
			const struct et_option_desc *t = et_option_table(&n);
			return et_tool_usage("--env '%s=%s' is not valid: it accepts %s", t[bad].name, c->env[bad],
			                     accepts);
		}
	}
	return enable ? enable_unit(c, a.ops[0]) : disable_unit(c, a.ops[0]);
}

static int enable_or_disable(int argc, char **argv, bool enable)
{
	static struct ctx c;   /* large: not on the stack */
	c = (struct ctx){ .enable = enable, .root = "", .programs_left = -1 };
	int rc = main_common(&c, argc, argv);
	if (rc == ET_EXIT_OK && c.json && !c.listed)
		report_json(&c);
	ctx_free(&c);
	return rc;
}

int et_cmd_enable(int argc, char **argv)
{
	return enable_or_disable(argc, argv, true);
}

int et_cmd_disable(int argc, char **argv)
{
	return enable_or_disable(argc, argv, false);
}
