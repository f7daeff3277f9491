/*
 * tools/enormoustext/preload.c — libenormoustext handed to another
 * program: which file (--lib PATH, else $ENORMOUSTEXT_LIB, else — when
 * this is the command of a build tree — that build tree's library, else
 * the one installed beside the command (BINDIR/../LIBDIR), else the one in
 * the configured LIBDIR), checked and made absolute; the LD_PRELOAD value
 * with it first (an existing entry for the same file dropped, so nesting
 * does not load it twice); and the values of its variables, checked by
 * its own parser.  `run`, `record` and `enable` hand it over so.
 *
 * Owns: where the library is looked for (et_tool_default_library,
 * et_tool_library), and its linker scripts (et_tool_linker_script: the
 * same rule, for `check`'s advice), the LD_PRELOAD value (et_tool_preload), the check of
 * the variables' values (et_tool_option_index, et_tool_options_bad); which
 * word of /etc/ld.so.preload is `enable --binary`'s entry
 * (et_tool_preload_entry, for enable and status).
 * May call: core (options: the table and its parser), msg.c.
 * Never: keeps a list of options, a default or an accepted value of its
 * own (the table has them).
 */
#include "preload.h"

#include "core/hostwide.h"
#include "core/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ET_TOOL_REL_LIBDIR
#define ET_TOOL_REL_LIBDIR "../lib"
#endif
#ifndef ET_TOOL_LIB_NAME
#define ET_TOOL_LIB_NAME "libenormoustext.so.0"
#endif

int et_tool_option_index(const char *var)
{
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	for (size_t i = 0; i < n && i < ET_OPT__COUNT; i++)
		if (!strcmp(t[i].name, var))
			return (int)i;
	return -1;
}

static bool exists_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The library this command uses by default, or NULL; `tried` lists where it
 * looked (for the message when nothing is there). */
const char *et_tool_default_library(char *out, size_t cap, char *tried, size_t tcap)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	tried[0] = '\0';
	const char *cand[3];
	char rel[PATH_MAX + 64];
	int k = 0;
#ifdef ET_TOOL_BUILD_EXE
	/* The command of a build tree uses the library of the same tree. */
	if (!strcmp(exe, ET_TOOL_BUILD_EXE))
		cand[k++] = ET_TOOL_BUILD_LIB;
#endif
	if (exe[0]) {
		/* BINDIR/../lib, written without the "..": the directory resolved. */
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		char dir[PATH_MAX + 32], real[PATH_MAX];
		snprintf(dir, sizeof dir, "%s/%s", exe, ET_TOOL_REL_LIBDIR);
		snprintf(rel, sizeof rel, "%s/%s", realpath(dir, real) ? real : dir, ET_TOOL_LIB_NAME);
		cand[k++] = rel;
	}
#ifdef ET_TOOL_INSTALL_LIBDIR
	cand[k++] = ET_TOOL_INSTALL_LIBDIR "/" ET_TOOL_LIB_NAME;
#endif
	for (int i = 0; i < k; i++) {
		if (exists_file(cand[i])) {
			snprintf(out, cap, "%s", cand[i]);
			return out;
		}
		size_t used = strlen(tried);
		snprintf(tried + used, tcap - used, "%s%s", used ? ", " : "", cand[i]);
	}
	return NULL;
}

const char *et_tool_linker_script(const char *name, char *out, size_t cap)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
#if defined(ET_TOOL_BUILD_EXE) && defined(ET_TOOL_SOURCE_SCRIPTS)
	/* The command of a build tree: the scripts of its source tree (the
	 * 32M one is made in the build tree, beside the library) */
	if (!strcmp(exe, ET_TOOL_BUILD_EXE)) {
		snprintf(out, cap, "%s/%s", ET_TOOL_SOURCE_SCRIPTS, name);
		if (exists_file(out))
			return out;
#ifdef ET_TOOL_BUILD_SCRIPTS
		snprintf(out, cap, "%s/%s", ET_TOOL_BUILD_SCRIPTS, name);
		if (exists_file(out))
			return out;
#endif
	}
#endif
#ifdef ET_TOOL_REL_DATADIR
	/* installed: BINDIR/<relative>/DATADIR/enormoustext, resolved */
	char *slash = strrchr(exe, '/');
	if (exe[0] && slash) {
		*slash = '\0';
		char dir[PATH_MAX + 64], real[PATH_MAX];
		snprintf(dir, sizeof dir, "%s/%s/enormoustext", exe, ET_TOOL_REL_DATADIR);
		snprintf(out, cap, "%s/%s", realpath(dir, real) ? real : dir, name);
		if (exists_file(out))
			return out;
	}
#endif
#ifdef ET_TOOL_INSTALL_DATADIR
	snprintf(out, cap, "%s/enormoustext/%s", ET_TOOL_INSTALL_DATADIR, name);
	if (exists_file(out))
		return out;
#endif
	return NULL;
}

static int check_library(const char *what, const char *sep, const char *path, char *abs, size_t cap)
{
	if (!*path) {
		et_tool_err("%s is empty: give the path of libenormoustext.so", what);
		return ET_EXIT_BAD;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		et_tool_err("%s%s%s: %s", what, sep, path, strerror(errno));
		return ET_EXIT_BAD;
	}
	struct stat st;
	unsigned char magic[4] = { 0 };
	bool reg = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	ssize_t r = reg ? read(fd, magic, 4) : 0;
	close(fd);
	if (!reg) {
		et_tool_err("%s%s%s: not a regular file", what, sep, path);
		return ET_EXIT_BAD;
	}
	if (r != 4 || memcmp(magic, "\177ELF", 4) != 0) {
		et_tool_err("%s%s%s: not an ELF shared library", what, sep, path);
		return ET_EXIT_BAD;
	}
	/* The loader resolves a relative LD_PRELOAD entry against the current
	 * directory of each process: make it absolute. */
	if (path[0] == '/') {
		snprintf(abs, cap, "%s", path);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof cwd)) {
			et_tool_err("%s%s%s: cannot make the path absolute: %s", what, sep, path, strerror(errno));
			return ET_EXIT_BAD;
		}
		snprintf(abs, cap, "%s/%s", cwd, path);
	}
	if (strchr(abs, ':') || strchr(abs, ' ')) {
		et_tool_err("%s%s%s: LD_PRELOAD cannot hold a path with ':' or ' ' in it", what, sep, abs);
		return ET_EXIT_BAD;
	}
	return 0;
}

/* LD_PRELOAD with lib first; an existing entry naming the same path goes. */
static char *compose_preload(const char *lib, const char *old)
{
	size_t cap = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	size_t n = (size_t)snprintf(out, cap, "%s", lib);
	const char *p = old ? old : "";
	while (*p) {
		size_t len = strcspn(p, ": ");
		if (len && !(len == strlen(lib) && !strncmp(p, lib, len))) {
			out[n++] = ':';
			memcpy(out + n, p, len);
			n += len;
			out[n] = '\0';
		}
		p += len;
		if (*p)
			p++;
	}
	return out;
}

int et_tool_library(const char *lib_opt, char *abs, size_t cap)
{
	char lib[PATH_MAX], tried[3 * PATH_MAX];
	const char *env_lib = getenv(ET_OPTION_LIB_VAR);
	if (lib_opt)
		return check_library("--lib", " ", lib_opt, abs, cap);
	if (env_lib)
		return check_library(ET_OPTION_LIB_VAR, "=", env_lib, abs, cap);
	if (et_tool_default_library(lib, sizeof lib, tried, sizeof tried))
		return check_library("library", " ", lib, abs, cap);
	et_tool_err("cannot find " ET_TOOL_LIB_NAME " (looked for %s): give --lib PATH or set "
	            ET_OPTION_LIB_VAR, tried);
	return ET_EXIT_BAD;
}

char *et_tool_preload(const char *lib_opt)
{
	char abs[PATH_MAX + 8];
	if (et_tool_library(lib_opt, abs, sizeof abs))
		return NULL;
	char *preload = compose_preload(abs, getenv("LD_PRELOAD"));
	if (!preload)
		et_tool_err("out of memory");
	return preload;
}

struct check_ctx {
	const char *const *val;
	int bad_id;
	const char *bad_value, *bad_accepts;
};

static const char *check_get(const char *name, void *vctx)
{
	struct check_ctx *c = vctx;
	int i = et_tool_option_index(name);
	return i >= 0 ? c->val[i] : NULL;
}

static void check_warn(const char *name, const char *value, const char *accepts, void *vctx)
{
	struct check_ctx *c = vctx;
	if (c->bad_id >= 0)
		return;
	c->bad_id = et_tool_option_index(name);
	c->bad_value = value;
	c->bad_accepts = accepts;
}

int et_tool_options_bad(const char *const val[ET_OPT__COUNT], const char **accepts)
{
	struct check_ctx c = { .val = val, .bad_id = -1 };
	struct et_options parsed;
	et_options_parse(&parsed, check_get, check_warn, &c);
	if (c.bad_id >= 0 && accepts)
		*accepts = c.bad_accepts;
	return c.bad_id;
}

const char *et_tool_options_speak(const char *const val[ET_OPT__COUNT], char *why, size_t cap)
{
	struct check_ctx c = { .val = val, .bad_id = -1 };
	struct et_options o;
	et_options_parse(&o, check_get, check_warn, &c);
	if (!o.enabled)
		return NULL;
	if (o.perfmap) {
		snprintf(why, cap, "ENORMOUSTEXT_PERFMAP on for every program: each process whose text moves would "
		         "write a /tmp/perf-PID.map, left there after it ends (and say so where /tmp cannot be "
		         "written); give it to the programs you profile, in their environment");
		return why;
	}
	if (o.defer_rate && !o.defer_ns) {
		snprintf(why, cap, "ENORMOUSTEXT_DEFER_RATE with ENORMOUSTEXT_DEFER=0: the rate paces the deferred "
		         "worker, and there would be none; every process with text to move would say so");
		return why;
	}
	if (o.hot_auto && !o.defer_ns) {
		snprintf(why, cap, "ENORMOUSTEXT_HOT=auto with ENORMOUSTEXT_DEFER=0: it samples during the deferral, "
		         "and there would be none; every process with text to move would say so");
		return why;
	}
	if (o.profile) {
		struct et_profile p;
		if (et_profile_load(&p, o.profile) != 0) {
			snprintf(why, cap, "ENORMOUSTEXT_PROFILE=%s: %s: every process with text to move would say so",
			         o.profile, p.err);
			return why;
		}
		et_profile_free(&p);
	}
	return NULL;
}

/* The word of ld.so.preload that is a host-wide entry of ours, into out. */
bool et_tool_preload_entry(const char *buf, char *out, size_t cap)
{
	static const char dir[] = "/" ET_HOSTWIDE_DIR "/";
	for (const char *p = buf; *p;) {
		if (*p == '#') {
			p += strcspn(p, "\n");
			continue;
		}
		size_t w = strcspn(p, " \t\n:");
		if (w && w < cap) {
			char word[PATH_MAX + 64];
			snprintf(word, sizeof word, "%.*s", (int)w, p);
			const char *s = strrchr(word, '/');
			if (s && (size_t)(s - word) + 1 >= sizeof dir - 1 &&
			    !strncmp(s + 1 - (sizeof dir - 1), dir, sizeof dir - 1)) {
				snprintf(out, cap, "%s", word);
				return true;
			}
		}
		p += w ? w : 1;
	}
	return false;
}
