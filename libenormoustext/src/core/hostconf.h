/*
 * core/hostconf.h — the host's settings for `enormoustext enable --all`
 * (core/hostwide.h's ET_HOSTWIDE_CONF), read by the library in every
 * process the host-wide entry loads it into and by the command (status,
 * enable --list).  Pure: a buffer in, the settings out.
 *
 * The file: one setting a line, NAME=VALUE; blank lines and lines that
 * start with '#' are skipped; blanks around NAME and VALUE are not part of
 * them.  NAME is a variable of the library's table (ENORMOUSTEXT_MODE,
 * ENORMOUSTEXT_PAD_THRESHOLD, ...: the value every process gets unless
 * its environment gives its own), or one of
 *   programs=GLOB[:GLOB...]          only programs matching one act
 *                                    (full path or name; default: all)
 *   exclude-programs=GLOB[:GLOB...]  programs matching one never act
 * The variables that name a file each process would write
 * (ENORMOUSTEXT_REPORT, ENORMOUSTEXT_RECORD) and ENORMOUSTEXT_TOP_ONLY
 * (about LD_PRELOAD, which the host-wide entry does not use) are not the
 * host's to set: such a line is refused (not used, and counted).
 */
#ifndef ET_CORE_HOSTCONF_H
#define ET_CORE_HOSTCONF_H

#include "core/base.h"
#include "core/options.h"

#include <sys/stat.h>

/* A longer file is not read at all (the library reads it into a static
 * buffer of this size: its start-up path does not allocate). */
#define ET_HOSTCONF_MAX 8192

#define ET_HOSTCONF_PROGRAMS "programs"
#define ET_HOSTCONF_EXCLUDE "exclude-programs"

struct et_hostconf {
	const char *val[ET_OPT__COUNT]; /* the library's variables, by id (NULL: not set) */
	const char *programs;           /* colon-separated globs (NULL: every program) */
	const char *exclude;            /* colon-separated globs (NULL: none) */
	int bad_line;                   /* the first line that is no setting (0: none) */
	int refused_line;               /* the first line of a variable that is not the host's (0: none) */
	int nset;                       /* the settings used */
};

/* Parse buf (NUL-terminated; changed in place: each name and value is
 * NUL-terminated where it ends).  A setting given twice: the last one.
 * Makes no libc call (the library runs it in every process's start-up). */
ET_HIDDEN void et_hostconf_parse(char *buf, struct et_hostconf *c);
/* May the host's file set the variable of this id? */
ET_HIDDEN bool et_hostconf_settable(int id);
/* Why the library does not trust a file (dir: the directory) of the
 * host-wide preload — the list, the settings, the off switch's directory —
 * given its stat: "not owned by root", "writable by group or others", "not
 * a regular file" / "not a directory"; NULL when it trusts it.  The one
 * rule, for the library and for the command that reports it. */
ET_HIDDEN const char *et_hostwide_untrusted(const struct stat *st, bool dir);

#endif
