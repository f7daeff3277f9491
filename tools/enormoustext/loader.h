/*
 * loader.h — which shared libraries a program loads (loader.c): the one
 * answer `status --explain PROGRAM` and `enable --prime` both use, asked
 * of the program's own loader.
 */
#ifndef ET_TOOL_LOADER_H
#define ET_TOOL_LOADER_H

#include "tool.h"

struct et_tool_lib {
	char *name;     /* as the object that needs it names it (DT_NEEDED); the
	                 * path itself for one loaded by its path */
	char *path;     /* where the loader finds it; NULL: it does not */
	bool needed;    /* named by a DT_NEEDED (else: the loader itself, or an
	                 * entry of /etc/ld.so.preload) */
};

struct et_tool_libs {
	struct et_tool_lib *v;
	size_t n;
};

/*
 * The shared libraries prog loads when it starts (DT_NEEDED, transitively,
 * each once; not what it opens later with dlopen), in the loader's order,
 * as its own loader finds them: `INTERP --list PROG` (what ldd does; glibc's
 * and musl's loaders both take it), in an empty environment.  interp is
 * prog's PT_INTERP; a program without one is static and loads nothing,
 * except a shared library (DT_NEEDED and no PT_INTERP), which is asked of
 * this command's own loader.  The loader runs only when it is an absolute
 * path to an ELF file of no interpreter of its own, owned by root and
 * writable by nobody else; it maps the libraries and runs none of their
 * code.  0 with *l filled (the vdso left out), or -1 with why ("its loader X is not ...", "X --list PROG failed (exit
 * status N): what it said").
 */
int et_tool_libraries(const char *prog, const char *interp, struct et_tool_libs *l, char *why, size_t cap);
void et_tool_libs_free(struct et_tool_libs *l);

#endif
