/*
 * core/hostwide.h — the names the host-wide preload is made of, shared by
 * the library (runtime/hostwide.c reads them) and the command (`enormoustext
 * enable --binary` writes them).  Pure: names only.
 *
 * /etc/ld.so.preload names the library through a path of its own,
 * ET_HOSTWIDE_LINKDIR/libenormoustext.so.0 (a symbolic link to the
 * library, in /etc: a read-only /usr is never written): a copy loaded
 * through a path whose directory ends in ET_HOSTWIDE_DIR acts only in the
 * programs listed in ET_HOSTWIDE_LIST.  (Earlier versions made the link
 * LIBDIR/enormoustext/preload/NAME; the library and `disable` still know
 * such an entry by the same directory name.)
 */
#ifndef ET_CORE_HOSTWIDE_H
#define ET_CORE_HOSTWIDE_H

/* The last two names of the entry's directory. */
#define ET_HOSTWIDE_DIR "enormoustext/preload"
/* The entry's directory. */
#define ET_HOSTWIDE_LINKDIR "/etc/" ET_HOSTWIDE_DIR
/* One absolute path (as the kernel names the executable: symbolic links
 * resolved) per line; blank lines and lines starting with '#' are skipped;
 * spaces and tabs around a path are not part of it. */
#define ET_HOSTWIDE_LIST "/etc/enormoustext/binaries"
/* The list's line that means every program (`enormoustext enable --all`):
 * each acts by ET_HOSTWIDE_CONF's settings (core/hostconf.h), unless the
 * settings exclude it. */
#define ET_HOSTWIDE_ALL "*"
/* The host's settings for every program (core/hostconf.h). */
#define ET_HOSTWIDE_CONF "/etc/enormoustext/enormoustext.conf"
/* The directory of the list, the settings and the off switch: the library
 * trusts none of them unless it, and each file, is root's and not
 * writable by group or others. */
#define ET_HOSTWIDE_ETC "/etc/enormoustext"
/* What `enormoustext enable --all` did for the daemon (its unit, enabled
 * or not): there while --all wants the daemon; the library never reads it. */
#define ET_HOSTWIDE_DAEMON_NOTE "/etc/enormoustext/daemon"
/* The loader's list of libraries loaded into every program. */
#define ET_HOSTWIDE_PRELOAD "/etc/ld.so.preload"
/* The off switch: while this path exists (`: > /etc/enormoustext/off`, a
 * shell builtin's work, for a host in trouble), every copy of the library,
 * however loaded, does nothing and says nothing. */
#define ET_HOSTWIDE_OFF "/etc/enormoustext/off"

#endif
