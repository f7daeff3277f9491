/*
 * core/hostwide.h — the names the host-wide preload is made of, shared by
 * the library (runtime/hostwide.c reads them) and the command (`enormoustext
 * enable --binary` writes them).  Pure: names only.
 *
 * /etc/ld.so.preload names the library through a path of its own,
 * LIBDIR/enormoustext/preload/libenormoustext.so (a symbolic link to the
 * library): a copy loaded through a path whose directory ends in
 * ET_HOSTWIDE_DIR acts only in the programs listed in ET_HOSTWIDE_LIST.
 */
#ifndef ET_CORE_HOSTWIDE_H
#define ET_CORE_HOSTWIDE_H

/* The directory of the entry, under the library's own directory. */
#define ET_HOSTWIDE_DIR "enormoustext/preload"
/* One absolute path (as the kernel names the executable: symbolic links
 * resolved) per line; blank lines and lines starting with '#' are skipped;
 * spaces and tabs around a path are not part of it. */
#define ET_HOSTWIDE_LIST "/etc/enormoustext/binaries"
/* The loader's list of libraries loaded into every program. */
#define ET_HOSTWIDE_PRELOAD "/etc/ld.so.preload"

#endif
