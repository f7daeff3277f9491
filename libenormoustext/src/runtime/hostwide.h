/*
 * runtime/hostwide.h — the host-wide preload (/etc/ld.so.preload): only the
 * programs listed act (runtime/hostwide.c).
 */
#ifndef ET_RUNTIME_HOSTWIDE_H
#define ET_RUNTIME_HOSTWIDE_H

#include "core/base.h"

/* True when this copy was loaded through the host-wide entry (a directory
 * ending in core/hostwide.h's ET_HOSTWIDE_DIR) and this process's program
 * is not in ET_HOSTWIDE_LIST (by name, or by its ET_HOSTWIDE_ALL line and
 * the settings' program globs), or the list or its directory is not root's
 * alone: then the library stands down entirely.  False
 * for a copy loaded any other way (LD_PRELOAD, linked): the list is not
 * read. */
ET_HIDDEN bool et_hostwide_stands_down(void);
/* Was this copy loaded through the host-wide entry?  (A walk of the
 * loader's list: no system call.) */
ET_HIDDEN bool et_hostwide_loaded(void);
/* The host's value of a variable of the library (name: the table's), from
 * core/hostwide.h's ET_HOSTWIDE_CONF, when this copy was loaded host-wide
 * and the file could be trusted (root's, not writable by group or others,
 * in a directory that is too); NULL otherwise.  Valid after
 * et_hostwide_stands_down returned false. */
ET_HIDDEN const char *et_hostwide_setting(const char *name);
/* Are the host's settings in use in this process (loaded host-wide, the
 * file trusted)? */
ET_HIDDEN bool et_hostwide_settings_used(void);
/* True while core/hostwide.h's ET_HOSTWIDE_OFF exists: the library does
 * nothing in this process, whatever loaded it and whatever the environment
 * says (checked before anything else; one system call; errno kept). */
ET_HIDDEN bool et_hostwide_off(void);

#endif
