/*
 * sofile.h — is a shared object on disk whole (sofile.c): what the loader
 * needs of a library it maps, checked from the file's own headers, so
 * that a file cut short or half written is caught before it is named in
 * /etc/ld.so.preload (`enable`) and while it is named there (`status`,
 * and a daemon that watches the host the same way).
 */
#ifndef ET_TOOL_SOFILE_H
#define ET_TOOL_SOFILE_H

#include <stdbool.h>
#include <stddef.h>

/* The file at path (a link followed) is a complete ELF shared object of
 * this host: a regular file; an ELF header of this host's class, byte
 * order and machine, of type ET_DYN; its program headers, every PT_LOAD's
 * bytes (p_offset + p_filesz) and its section headers within the file's
 * size.  0, or -1 with why (one clause, no path: "No such file or
 * directory", "not a regular file", "not an ELF file", "ends at 50000
 * bytes, its loadable segments need 2134016", "not a shared object (an
 * executable)", "built for another architecture (machine 183) than this
 * system's (62)", ...). */
int et_tool_so_check(const char *path, char *why, size_t cap);

#endif
