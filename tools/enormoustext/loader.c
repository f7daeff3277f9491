/*
 * tools/enormoustext/loader.c — which shared libraries a program loads,
 * asked of the program's own loader (see loader.h).
 *
 * Why the loader and not a search of our own: its search has the cache
 * (/etc/ld.so.cache, with its hwcaps entries), the glibc-hwcaps
 * subdirectories, DT_RUNPATH against DT_RPATH (and which of them a
 * library inherits), $ORIGIN, $LIB and $PLATFORM, ld.so.conf's
 * directories and the default ones, and only the loader itself gets all
 * of them right, on every system, for glibc and musl alike.  `--list`
 * maps the libraries and runs none of their code (nor the program's);
 * LD_TRACE_LOADED_OBJECTS, ldd's other way, is not used: musl's loader
 * ignores it and runs the program.
 *
 * Owns: et_tool_libraries (the loader vetted, run, its list read).
 * May call: spawn.c (et_tool_capture), elffile.c (the loader's and the
 * program's own facts), common.c.
 * Never: runs a loader that is not root's, or is not one; runs the
 * program; passes on this process's environment.
 */
#include "loader.h"
#include "elffile.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void count_needed(void *ctx, const char *name)
{
	(void)name;
	++*(size_t *)ctx;
}

/* The loader that lists path's libraries: interp, or for a shared library
 * of no interpreter this command's own; "" when it loads none. */
static void loader_of(const char *prog, const char *interp, char *out, size_t cap)
{
	out[0] = '\0';
	if (interp && interp[0]) {
		snprintf(out, cap, "%s", interp);
		return;
	}
	struct et_tool_elf x;
	unsigned type, machine, cls;
	size_t needed = 0;
	if (et_tool_elf_open(&x, prog, ET_TOOL_ELF_REGULAR) != 0)
		return;
	bool dso = et_tool_elf_header(&x, &type, &machine, &cls) && type == ET_DYN;
	if (dso)
		et_tool_elf_needed(&x, count_needed, &needed);
	et_tool_elf_close(&x);
	if (!dso || !needed)
		return;         /* static: an ET_EXEC or a static PIE loads nothing */
	if (et_tool_elf_open(&x, "/proc/self/exe", 0) == 0) {
		et_tool_elf_interp(&x, out, cap);
		et_tool_elf_close(&x);
	}
}

/* A loader worth running: an absolute path to root's file that nobody
 * else may write, an ELF file with no interpreter of its own. */
static const char *unfit(const char *ld)
{
	struct stat st;
	if (ld[0] != '/' || stat(ld, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return "is not a root-owned file writable by root only";
	struct et_tool_elf x;
	char sub[8];
	if (et_tool_elf_open(&x, ld, ET_TOOL_ELF_REGULAR) != 0)
		return "is not a loader (not an ELF file)";
	bool interp = et_tool_elf_interp(&x, sub, sizeof sub);
	et_tool_elf_close(&x);
	return interp ? "is not a loader (it has an interpreter of its own)" : NULL;
}

static int add(struct et_tool_libs *l, const char *name, size_t nlen, const char *path, bool needed)
{
	struct et_tool_lib *v = realloc(l->v, (l->n + 1) * sizeof *v);
	if (!v)
		return -1;
	l->v = v;
	v[l->n].name = strndup(name, nlen);
	v[l->n].path = path ? strdup(path) : NULL;
	v[l->n].needed = needed;
	if (!v[l->n].name || (path && !v[l->n].path)) {
		free(v[l->n].name);
		free(v[l->n].path);
		return -1;
	}
	l->n++;
	return 0;
}

int et_tool_libraries(const char *prog, const char *interp, struct et_tool_libs *l, char *why, size_t cap)
{
	memset(l, 0, sizeof *l);
	char ld[PATH_MAX];
	loader_of(prog, interp, ld, sizeof ld);
	if (!ld[0])
		return 0;
	const char *bad = unfit(ld);
	if (bad) {
		snprintf(why, cap, "%s: its loader %s %s: not run to find its libraries", prog, ld, bad);
		return -1;
	}
	char *out = NULL, *err = NULL;
	char *argv[] = { ld, (char *)"--list", (char *)prog, NULL };
	char *envp[] = { NULL };
	int rc = et_tool_capture(argv, envp, &out, &err);
	if (rc != 0 || !out) {
		char *said = err ? et_tool_trim(err) : NULL;
		if (said)
			said += strspn(said, " \t\n");
		if (said && strchr(said, '\n'))
			*strchr(said, '\n') = '\0';
		snprintf(why, cap, "%s --list %s failed (exit status %d)%s%.300s", ld, prog, rc,
		         said && *said ? ": " : "", said ? said : "");
		free(out);
		free(err);
		return -1;
	}
	free(err);
	int res = 0;
	/* "\tNAME => PATH (0xADDR)", "\tNAME => not found"; "\tPATH (0xADDR)"
	 * for the loader itself and what /etc/ld.so.preload names; the vdso's
	 * line has no path */
	for (char *save = NULL, *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *arrow = strstr(line, " => ");
		const char *name = line + strspn(line, " \t");
		char *p = arrow ? arrow + 4 : (char *)name;
		if (arrow && !strncmp(p, "not found", 9)) {
			res = add(l, name, (size_t)(arrow - name), NULL, true);
		} else {
			char *end = strstr(p, " (0x");
			if (end)
				*end = '\0';
			if (p[0] != '/')
				continue;
			res = add(l, arrow ? name : p, arrow ? (size_t)(arrow - name) : strlen(p), p, arrow != NULL);
		}
		if (res) {
			snprintf(why, cap, "out of memory");
			et_tool_libs_free(l);
			break;
		}
	}
	free(out);
	return res;
}

void et_tool_libs_free(struct et_tool_libs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].path);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
