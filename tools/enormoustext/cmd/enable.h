/*
 * enable.h — what the parts of `enormoustext enable` and `disable` share:
 * the run's context (its options, and the report gathered in it as files
 * are written, for --json), the names of enable's files, and each part's
 * entry points.
 *
 *   enable.c           the command's front: options, --json's report, --list
 *   enable_units.c     a systemd service's drop-in (UNIT)
 *   enable_hostwide.c  the host-wide list, /etc/ld.so.preload's entry and
 *                      its backup, the link, --all's settings file
 *   enable_daemon.c    --all's daemon: its unit, enabled and started
 *   enable_files.c     what both kinds share: the report's lines, events
 *                      and warnings, the small files (read whole, written
 *                      by rename, directories made and removed), the ELF
 *                      facts and the library's check
 */
#ifndef ET_TOOL_ENABLE_H
#define ET_TOOL_ENABLE_H

#include "tool.h"

#include "core/hostwide.h"

#include <limits.h>
#include <sys/types.h>

/* The first line of every file enable writes: a file there without it is
 * someone else's and is never replaced nor removed. */
#define MARKER "# enormoustext enable:"
#define DROPIN "enormoustext.conf"
#define LIST_BACKUP "/etc/enormoustext/ld.so.preload.orig"
#define LIST_NONE "/etc/enormoustext/ld.so.preload.none"
/* What enable --all did for the daemon (enable_daemon.c). */
#define ET_ENABLE_DAEMON_NOTE ET_HOSTWIDE_DAEMON_NOTE

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
	bool all;                  /* --all: the daemon, and the host's settings */
	bool preload;              /* --all --preload: and every program (the list's ET_HOSTWIDE_ALL line) */
	const char *daemon;        /* enable --all: what became of the daemon ("started", ...) */
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


/* ---------------------------------------------------- enable_files.c */

/* A line on stdout (not with --json). */
void et_enable_say(const struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A file written, removed, linked (or that would be), for --json. */
void et_enable_event(struct ctx *c, const char *action, const char *path, const char *key, const char *value);
/* "enormoustext enable: warning: ..." on stderr, and in --json's warnings. */
void et_enable_warn(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* path under --root's directory, into out. */
void et_enable_rooted(const struct ctx *c, char *out, size_t cap, const char *path);
/* The whole file (a regular file, no link followed) in a malloc'd buffer,
 * NUL-terminated; 0 or -errno (-EINVAL: not a regular file). */
/* Does buf begin with MARKER? */
bool et_enable_has_marker(const char *buf);
/* fsync of the directory that holds path. */
/* path written beside and renamed in, mode, fsync'ed, and its directory:
 * 0, or ET_EXIT_BAD after one line naming path (what was there stays). */
/* mkdir -p of the directory that holds path (0755); 0 or ET_EXIT_BAD. */
/* rmdir the directory that holds path, and its parents up to and not
 * including stop, while they are empty. */
void et_enable_remove_empty_parents(const char *path, const char *stop);
/* A file of enable's removed (or, --dry-run, said that it would be), with
 * its line and --json's event; 0 or ET_EXIT_BAD after one line. */
int et_enable_remove_file(struct ctx *c, const char *path);

struct elf_facts {
	int type, machine, klass;
	bool interp;
	char interp_path[PATH_MAX];
};
/* An ELF file's type, machine, class and interpreter: 0, or -1 with *why
 * ("not an ELF file", ...). */
int et_enable_elf_read(const char *path, struct elf_facts *f, const char **why);
/* This command's own ELF facts: the host's architecture. */
int et_enable_host_elf(struct elf_facts *f);
/* The library a whole shared object of this host (sofile.c): 0, or
 * ET_EXIT_BAD after one line naming it and what is wrong. */
int et_enable_check_lib(const char *lib);

/* ---------------------------------------------------- enable_units.c */

/* enable UNIT / disable UNIT (c: the options; the report gathered). */
int et_enable_unit(struct ctx *c, const char *unit_arg);
int et_disable_unit(struct ctx *c, const char *unit_arg);
/* --list: the drop-ins enable wrote, as lines, or into j's array (NULL
 * without --json); how many. */
size_t et_enable_list_units(const struct ctx *c, struct et_json *j);

/* ------------------------------------------------- enable_hostwide.c */

/* enable --binary PATH / disable --binary PATH. */
int et_enable_binary(struct ctx *c, const char *path);
int et_disable_binary(struct ctx *c, const char *path);
/* enable --all / disable --all. */
int et_enable_all(struct ctx *c);
int et_disable_all(struct ctx *c);
/* ---------------------------------------------------- enable_daemon.c */

/* enable --all's daemon: the unit (written when none is installed),
 * enabled (and started where systemd runs), the note of what was done;
 * 0 or ET_EXIT_BAD after one line. */
int et_enable_daemon(struct ctx *c);
/* disable --all's: what the note says enable did, undone; *did: there was
 * a note.  0 or ET_EXIT_BAD. */
int et_disable_daemon(struct ctx *c, bool *did);
/* --list: the note, as a line or into j (NULL without --json). */
void et_enable_list_daemon(const struct ctx *c, struct et_json *j, bool *any);

/* What enable --all --preload says of gcc's -fsanitize=address programs. */
extern const char et_enable_asan_note[];
/* --list: the host-wide entry, the programs and --all's settings, as
 * lines, or into j (NULL without --json); *any: whether the list or the
 * settings hold anything.  0, or ET_EXIT_BAD when the list cannot be
 * read. */
int et_enable_list_hostwide(const struct ctx *c, struct et_json *j, bool *any);

#endif
