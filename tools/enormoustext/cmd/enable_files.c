/*
 * tools/enormoustext/cmd/enable_files.c — what the parts of `enable` and
 * `disable` share (enable.h): the report of a run (its lines on stdout,
 * and for --json the files written and the warnings, gathered as it goes),
 * the small files (read whole; written beside and renamed in through
 * core/outfile.c, made 0644, fsync'ed, and the directory too; directories
 * made and removed), an ELF file's facts and the library's check.
 *
 * Owns: the report's lines, events and warnings; how enable reads and
 * writes a file; the ELF facts of a program and of this host; the
 * library's check before anything names it (sofile.c's: a file cut short,
 * named in /etc/ld.so.preload, would kill every program at start).
 * May call: core (outfile), elffile.c, sofile.c, output.c, msg.c.
 * Never: decides what is written where (enable_units.c and
 * enable_hostwide.c do); writes a file in place.
 */
#include "enable.h"
#include "elffile.h"
#include "sofile.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A line on stdout (not with --json). */
void et_enable_say(const struct ctx *c, const char *fmt, ...)
{
	if (c->json)
		return;
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* A file written, removed, linked (or that would be), for --json. */
void et_enable_event(struct ctx *c, const char *action, const char *path, const char *key, const char *value)
{
	if (c->nev >= MAX_EVENTS)
		return;
	c->ev[c->nev++] = (struct event){ action, strdup(path), key, value ? strdup(value) : NULL };
}

/* "enormoustext enable: warning: ..." on stderr, and in --json's warnings. */
void et_enable_warn(struct ctx *c, const char *fmt, ...)
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

void et_enable_rooted(const struct ctx *c, char *out, size_t cap, const char *path)
{
	snprintf(out, cap, "%s%s", c->root, path);
}

bool et_enable_has_marker(const char *buf)
{
	return !strncmp(buf, MARKER, strlen(MARKER));
}


/* rmdir the directory that holds path, and its parents up to and not
 * including stop, while they are empty. */
void et_enable_remove_empty_parents(const char *path, const char *stop)
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
int et_enable_remove_file(struct ctx *c, const char *path)
{
	if (c->dry) {
		et_enable_say(c, "would remove %s\n", path);
		et_enable_event(c, "would remove", path, NULL, NULL);
		return 0;
	}
	if (unlink(path) != 0) {
		et_tool_err("%s: cannot remove: %s", path, strerror(errno));
		return ET_EXIT_BAD;
	}
	et_tool_sync_dir(path);
	et_enable_say(c, "removed %s\n", path);
	et_enable_event(c, "remove", path, NULL, NULL);
	return 0;
}


/* ------------------------------------------------------------------ ELF */

/* 0, or -1 with *why set ("not an ELF file", ...). */
int et_enable_elf_read(const char *path, struct elf_facts *f, const char **why)
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
int et_enable_host_elf(struct elf_facts *f)
{
	const char *why;
	return et_enable_elf_read("/proc/self/exe", f, &why);
}

/* The library: a whole shared object of this host's architecture
 * (sofile.c: a file cut short, named in /etc/ld.so.preload, would kill
 * every program at start), checked before anything names it. */
int et_enable_check_lib(const char *lib)
{
	char why[256];
	if (et_tool_so_check(lib, why, sizeof why) != 0) {
		et_tool_err("library %s: %s: nothing written", lib, why);
		return ET_EXIT_BAD;
	}
	return 0;
}

