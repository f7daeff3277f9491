/*
 * tools/enormoustext/cmd/enable_units.c — `enable UNIT` and `disable UNIT`: a
 * systemd service's drop-in.
 *
 * The drop-in /etc/systemd/system/UNIT.d/enormoustext.conf, whose first
 * line is MARKER (a file there without it is someone else's and is never
 * replaced nor removed): Environment=LD_PRELOAD=<the library `run` uses>,
 * each --env checked with the library's own parser (preload.c's
 * et_tool_options_bad, by enable.c), and with --prime an ExecStartPre=
 * that primes the unit's program and its shared libraries (as its own
 * loader lists them: loader.c).  The unit as the running systemd has it,
 * else (systemd not running, or --root) as its files say; a unit nobody
 * knows draws a warning naming the nearest ones; then
 * `systemctl daemon-reload`.
 *
 * Owns: the unit's name rules, its files read, the drop-in's text, the
 * reload; --list's units.
 * May call: enable_files.c, preload.c (the library), loader.c (a program's
 * libraries), spawn.c (systemctl), core (util: the edit distance), msg.c,
 * common.c.
 * Never: writes or removes a drop-in without MARKER; touches the host-wide
 * files.
 */
#include "enable.h"
#include "loader.h"
#include "preload.h"

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

static bool systemd_running(void)
{
	/* sd_booted(3)'s test */
	struct stat st;
	return lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

static const char *const unit_types[] = { "service", "socket", "target", "device", "mount", "automount",
	                                      "swap", "timer", "path", "slice", "scope" };

/* "mariadb" -> "mariadb.service"; a name systemd would refuse, or a unit
 * that is not a service, is a usage error naming it. */
static int normalise_unit(const char *in, char *out, size_t cap)
{
	const char *dot = strrchr(in, '.');
	bool typed = false;
	if (dot) {
		for (size_t i = 0; i < sizeof unit_types / sizeof *unit_types; i++) {
			if (!strcmp(dot + 1, unit_types[i])) {
				typed = true;
				if (i != 0)
					return et_tool_usage("unit '%s': a %s runs no program of its own: give a service",
					                     in, unit_types[i]);
			}
		}
	}
	if (!*in)
		return et_tool_usage("the unit name is empty");
	snprintf(out, cap, "%s%s", in, typed ? "" : ".service");
	size_t n = strlen(out);
	if (n > 255)   /* UNIT_NAME_MAX - 1 */
		return et_tool_usage("unit '%s': longer than the 255 characters systemd allows", in);
	size_t stem = n - strlen(".service");
	int ats = 0;
	for (size_t i = 0; i < stem; i++) {
		char ch = out[i];
		if (ch == '@') {
			ats++;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      strchr(":-_.\\", ch)))
			return et_tool_usage("unit '%s': systemd does not allow the character '%c' in a unit name",
			                     in, ch);
	}
	if (stem == 0 || out[0] == '@')
		return et_tool_usage("unit '%s': no name before '%s'", in, out[0] == '@' ? "@" : ".service");
	if (ats > 1)
		return et_tool_usage("unit '%s': more than one '@'", in);
	return 0;
}

/* A word for a unit file's Exec line or Environment= value: '%' and '$'
 * doubled (systemd's specifiers and variables), quoted when it holds
 * blanks, quotes or backslashes. */
static void sd_word(FILE *f, const char *s, bool exec)
{
	bool quote = false;
	for (const char *p = s; *p; p++)
		if (strchr(" \t\"'\\", *p))
			quote = true;
	if (quote)
		fputc('"', f);
	for (const char *p = s; *p; p++) {
		if (*p == '%')
			fputs("%%", f);
		else if (exec && *p == '$')
			fputs("$$", f);
		else if (quote && (*p == '"' || *p == '\\'))
			fprintf(f, "\\%c", *p);
		else
			fputc(*p, f);
	}
	if (quote)
		fputc('"', f);
}

static const char *const unit_dirs[] = { "/etc/systemd/system", "/run/systemd/system",
	                                     "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
	                                     "/lib/systemd/system" };
#define N_UNIT_DIRS (sizeof unit_dirs / sizeof *unit_dirs)

struct unit_facts {
	char exec[PATH_MAX];       /* ExecStart's program, as written */
	bool preload;              /* an Environment= of LD_PRELOAD elsewhere */
	char where[PATH_MAX];      /* the first file that had one */
	char main_file[PATH_MAX];
};

/* One unit file's [Service] ExecStart= and Environment= lines. */
static void parse_unit_file(const char *path, struct unit_facts *u)
{
	char *buf;
	size_t len;
	if (et_tool_slurp(path, &buf, &len) != 0)
		return;
	bool service = false;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '[') {
			service = !strncmp(line, "[Service]", 9);
			continue;
		}
		if (!service)
			continue;
		if (!strncmp(line, "ExecStart=", 10)) {
			const char *v = line + 10;
			while (*v == ' ')
				v++;
			if (!*v) {
				u->exec[0] = '\0';   /* an empty ExecStart= resets the list */
				continue;
			}
			if (u->exec[0])
				continue;            /* oneshot: the first one */
			while (*v && strchr("@-:+!", *v))
				v++;
			char q = (*v == '"' || *v == '\'') ? *v++ : 0;
			size_t n = 0;
			while (v[n] && (q ? v[n] != q : (v[n] != ' ' && v[n] != '\t')) && n + 1 < sizeof u->exec)
				n++;
			memcpy(u->exec, v, n);
			u->exec[n] = '\0';
		} else if (!strncmp(line, "Environment=", 12) && strstr(line, "LD_PRELOAD=") && !u->preload) {
			u->preload = true;
			snprintf(u->where, sizeof u->where, "%s", path);
		}
	}
	free(buf);
}

static int cmp_base(const void *a, const void *b)
{
	return strcmp(strrchr(*(char *const *)a, '/') + 1, strrchr(*(char *const *)b, '/') + 1);
}

/* The unit as its files on disk say (systemd not running, or --root):
 * the unit file first found along the search path (the template's for an
 * instance), then its drop-ins in the order systemd reads them (by file
 * name, a name in an earlier directory hiding the same in a later one). */
static void unit_from_files(const struct ctx *c, const char *unit, struct unit_facts *u)
{
	char names[2][320];
	int nn = 0;
	snprintf(names[nn++], sizeof names[0], "%s", unit);
	const char *at = strchr(unit, '@');
	if (at && at[1] != '.')
		snprintf(names[nn++], sizeof names[0], "%.*s@.service", (int)(at - unit) & 0xff, unit);
	for (int k = 0; k < nn && !u->main_file[0]; k++) {
		for (size_t i = 0; i < N_UNIT_DIRS; i++) {
			char p[PATH_MAX];
			snprintf(p, sizeof p, "%s%s/%s", c->root, unit_dirs[i], names[k]);
			if (access(p, R_OK) == 0) {
				snprintf(u->main_file, sizeof u->main_file, "%s", p);
				break;
			}
		}
	}
	if (u->main_file[0])
		parse_unit_file(u->main_file, u);
	char *drop[256];
	size_t nd = 0;
	for (int k = nn - 1; k >= 0; k--) {
		for (size_t i = 0; i < N_UNIT_DIRS; i++) {
			char d[PATH_MAX];
			snprintf(d, sizeof d, "%s%s/%s.d", c->root, unit_dirs[i], names[k]);
			DIR *dir = opendir(d);
			if (!dir)
				continue;
			struct dirent *de;
			while ((de = readdir(dir)) && nd < 256) {
				size_t l = strlen(de->d_name);
				if (l < 6 || strcmp(de->d_name + l - 5, ".conf") || !strcmp(de->d_name, DROPIN))
					continue;
				bool seen = false;
				for (size_t j = 0; j < nd; j++)
					if (!strcmp(strrchr(drop[j], '/') + 1, de->d_name))
						seen = true;
				if (seen)
					continue;
				char *p = NULL;
				if (asprintf(&p, "%s/%s", d, de->d_name) < 0)
					break;
				drop[nd++] = p;
			}
			closedir(dir);
		}
	}
	/* by file name, whichever directory it is in */
	qsort(drop, nd, sizeof *drop, cmp_base);
	for (size_t i = 0; i < nd; i++) {
		parse_unit_file(drop[i], u);
		free(drop[i]);
	}
}

/* The unit as the running systemd has it. */
static void unit_from_systemd(const char *unit, const char *lib, struct unit_facts *u)
{
	char *out = NULL;
	char *argv[] = { (char *)"/bin/systemctl", (char *)"show", (char *)"-p", (char *)"ExecStart",
		             (char *)"--value", (char *)unit, NULL };
	if (access(argv[0], X_OK) != 0)
		argv[0] = (char *)"/usr/bin/systemctl";
	if (et_tool_capture(argv, NULL, &out, NULL) == 0 && out) {
		/* "{ path=/usr/sbin/mariadbd ; argv[]=... ; ... }" */
		const char *p = strstr(out, "path=");
		if (p) {
			p += 5;
			size_t n = strcspn(p, " ;\n");
			snprintf(u->exec, sizeof u->exec, "%.*s", (int)n, p);
		}
	}
	free(out);
	out = NULL;
	argv[3] = (char *)"Environment";
	const char *pl = NULL;
	size_t ll = strlen(lib);
	if (et_tool_capture(argv, NULL, &out, NULL) == 0 && out && (pl = strstr(out, "LD_PRELOAD=")) &&
	    !(!strncmp(pl + 11, lib, ll) && strchr(" \n", pl[11 + ll]))) {   /* not this drop-in's own */
		u->preload = true;
		snprintf(u->where, sizeof u->where, "systemctl show -p Environment %s", unit);
	}
	free(out);
}

/* Whether the running systemd knows the unit (LoadState not "not-found"). */
static bool systemd_knows(const char *unit)
{
	char *out = NULL;
	char *argv[] = { (char *)"/bin/systemctl", (char *)"show", (char *)"-p", (char *)"LoadState",
		             (char *)"--value", (char *)unit, NULL };
	if (access(argv[0], X_OK) != 0)
		argv[0] = (char *)"/usr/bin/systemctl";
	bool known = true;      /* when systemctl cannot say, no warning */
	if (et_tool_capture(argv, NULL, &out, NULL) == 0 && out)
		known = strncmp(out, "not-found", 9) != 0;
	free(out);
	return known;
}

/* The services of the unit directories (under --root) whose names are
 * nearest to unit (within a third of its length, ".service" left out;
 * 1 for a short one), into out: "a.service,
 * b.service" (at most three), or "". */
static void near_units(const struct ctx *c, const char *unit, char *out, size_t cap)
{
	char best[3][256], stem[320];
	size_t bd[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX };
	/* the names compared without ".service", which every one has */
	snprintf(stem, sizeof stem, "%s", unit);
	size_t sl = strlen(stem);
	if (sl > 8 && !strcmp(stem + sl - 8, ".service"))
		stem[sl -= 8] = '\0';
	size_t limit = sl / 3 ? sl / 3 : 1;
	out[0] = '\0';
	for (size_t i = 0; i < N_UNIT_DIRS; i++) {
		char d[PATH_MAX];
		snprintf(d, sizeof d, "%s%s", c->root, unit_dirs[i]);
		DIR *dir = opendir(d);
		if (!dir)
			continue;
		for (struct dirent *de; (de = readdir(dir));) {
			size_t l = strlen(de->d_name);
			if (l < 9 || l > 255 || strcmp(de->d_name + l - 8, ".service"))
				continue;
			char other[256];
			snprintf(other, sizeof other, "%.*s", (int)(l - 8), de->d_name);
			size_t dist = et_edit_distance(stem, other, false);   /* unit names are case-sensitive */
			if (dist == 0 || dist > limit)
				continue;
			bool dup = false;
			for (int k = 0; k < 3; k++)
				dup |= bd[k] != SIZE_MAX && !strcmp(best[k], de->d_name);
			if (dup)
				continue;
			for (int k = 0; k < 3; k++) {
				if (dist < bd[k]) {
					for (int m = 2; m > k; m--) {
						bd[m] = bd[m - 1];
						memcpy(best[m], best[m - 1], sizeof best[m]);
					}
					bd[k] = dist;
					snprintf(best[k], sizeof best[k], "%s", de->d_name);
					break;
				}
			}
		}
		closedir(dir);
	}
	size_t n = 0;
	for (int k = 0; k < 3 && bd[k] != SIZE_MAX; k++)
		if (n < cap)
			n += (size_t)snprintf(out + n, cap - n, "%s%s", k ? ", " : "", best[k]);
}

/* A bare program name in ExecStart=: systemd looks along a fixed path. */
static void exec_path(const char *exec, char *out, size_t cap)
{
	static const char *const dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
		                                "/sbin", "/bin" };
	if (exec[0] == '/' || !exec[0]) {
		snprintf(out, cap, "%s", exec);
		return;
	}
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		if (snprintf(out, cap, "%s/%s", dirs[i], exec) < (int)cap && access(out, X_OK) == 0)
			return;
	}
	snprintf(out, cap, "%s", exec);
}

/* The shared libraries of a program, for `prime`, as its own loader finds
 * them (loader.c): the paths into *libs (malloc'd); a library the loader
 * does not find is said in one line and left out.  0 or ET_EXIT_BAD. */
static int program_libraries(struct ctx *c, const char *prog, char ***libs, size_t *nlibs)
{
	struct elf_facts f;
	const char *why;
	*libs = NULL;
	*nlibs = 0;
	if (et_enable_elf_read(prog, &f, &why) != 0) {
		et_tool_err("--prime: the unit's program %s: %s", prog, why);
		return ET_EXIT_BAD;
	}
	struct et_tool_libs l;
	char msg[1024];
	if (et_tool_libraries(prog, f.interp ? f.interp_path : "", &l, msg, sizeof msg) != 0) {
		et_tool_err("--prime: %s", msg);
		return ET_EXIT_BAD;
	}
	char **v = NULL;
	size_t n = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (!l.v[i].needed)
			continue;   /* the loader itself, ld.so.preload's */
		if (!l.v[i].path) {
			et_enable_warn(c, "--prime: %s: the loader does not find %s: not primed", prog, l.v[i].name);
			continue;
		}
		char **nv = realloc(v, (n + 1) * sizeof *v);
		if (!nv)
			break;
		v = nv;
		v[n++] = strdup(l.v[i].path);
	}
	et_tool_libs_free(&l);
	*libs = v;
	*nlibs = n;
	return 0;
}

static void free_libs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* systemctl daemon-reload when systemd runs this system; else the advice. */
static int reload(struct ctx *c, const char *unit)
{
	if (c->no_reload || c->root[0] || !systemd_running()) {
		et_enable_say(c, "run 'systemctl daemon-reload' for systemd to read it%s\n",
		    c->no_reload ? "" : c->root[0] ? " (--root: not done)" : " (systemd is not running here: not done)");
		c->reload = c->no_reload ? "not done: --no-reload" :
		            c->root[0] ? "not done: --root" : "not done: systemd is not running here";
	} else {
		char *argv[] = { (char *)"/bin/systemctl", (char *)"daemon-reload", NULL };
		if (access(argv[0], X_OK) != 0)
			argv[0] = (char *)"/usr/bin/systemctl";
		int rc = et_tool_capture(argv, NULL, NULL, NULL);
		if (rc != 0) {
			et_tool_err("systemctl daemon-reload failed (exit status %d): run it by hand", rc);
			return ET_EXIT_BAD;
		}
		et_enable_say(c, "systemctl daemon-reload: done\n");
		c->reload = "done";
	}
	et_enable_say(c, "restart the unit for it to take effect: systemctl restart %s\n", unit);
	return 0;
}

int et_enable_unit(struct ctx *c, const char *unit_arg)
{
	char unit[300];
	int rc = normalise_unit(unit_arg, unit, sizeof unit);
	if (rc)
		return rc;
	snprintf(c->unit, sizeof c->unit, "%s", unit);
	char lib[PATH_MAX + 8];
	if (et_tool_library(c->lib_opt, lib, sizeof lib))
		return ET_EXIT_BAD;
	if (et_enable_check_lib(lib))
		return ET_EXIT_BAD;
	snprintf(c->lib, sizeof c->lib, "%s", lib);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/etc/systemd/system/%s.d/" DROPIN, c->root, unit);

	struct unit_facts u = { .exec = "" };
	bool live = !c->root[0] && systemd_running();
	if (live)
		unit_from_systemd(unit, lib, &u);
	else
		unit_from_files(c, unit, &u);
	/* a unit nobody knows (a typo?): said, with the names nearest to it;
	 * the drop-in is written all the same (a unit installed later, an
	 * image being built) */
	if (live ? !systemd_knows(unit) : !u.main_file[0]) {
		char near[800];
		near_units(c, unit, near, sizeof near);
		et_enable_warn(c, "%s: %s%s%s%s", unit,
		     live ? "systemd does not know this unit" :
		     "no unit file of that name in the unit directories (/etc/systemd/system, "
		     "/usr/lib/systemd/system, ...)",
		     near[0] ? "; did you mean " : "", near, near[0] ? "?" : "; the drop-in is written all the same");
	}

	char **libs = NULL;
	size_t nlibs = 0;
	char prog[PATH_MAX] = "", self[PATH_MAX] = "";
	if (c->prime) {
		if (!u.exec[0]) {
			et_tool_err("--prime: %s: no ExecStart= found (%s)", unit,
			            live ? "systemctl show -p ExecStart" :
			            u.main_file[0] ? u.main_file : "no unit file in the unit directories");
			return ET_EXIT_BAD;
		}
		exec_path(u.exec, prog, sizeof prog);
		if (program_libraries(c, prog, &libs, &nlibs))
			return ET_EXIT_BAD;
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		self[n > 0 ? n : 0] = '\0';
		c->prime_files = calloc(nlibs + 1, sizeof *c->prime_files);
		if (c->prime_files) {
			c->prime_files[c->nprime++] = strdup(prog);
			for (size_t i = 0; i < nlibs; i++)
				c->prime_files[c->nprime++] = strdup(libs[i]);
		}
	}

	/* the file */
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	if (!f) {
		free_libs(libs, nlibs);
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	fprintf(f, MARKER " written by enormoustext %s; 'enormoustext disable %s' removes it\n"
	           "# libenormoustext in this service; restart the service after a change.\n"
	           "[Service]\n", ENORMOUSTEXT_VERSION_STRING, unit);
	fputs("Environment=", f);
	char kv[PATH_MAX + 16];
	snprintf(kv, sizeof kv, "LD_PRELOAD=%s", lib);
	sd_word(f, kv, false);
	fputc('\n', f);
	size_t nt;
	const struct et_option_desc *t = et_option_table(&nt);
	for (size_t i = 0; i < nt && i < ET_OPT__COUNT; i++) {
		if (!c->env[i])
			continue;
		char *a = NULL;
		if (asprintf(&a, "%s=%s", t[i].name, c->env[i]) < 0)
			continue;
		fputs("Environment=", f);
		sd_word(f, a, false);
		fputc('\n', f);
		free(a);
	}
	if (c->prime) {
		fprintf(f, "# before the start: %s and its libraries (as its own loader finds them:\n"
		           "# 'ld.so --list') into the page cache as huge pages; '-': a failure never\n"
		           "# stops the start\n",
		        prog);
		fputs("ExecStartPre=-", f);
		sd_word(f, self, true);
		fputs(" prime ", f);
		sd_word(f, prog, true);
		for (size_t i = 0; i < nlibs; i++) {
			fputc(' ', f);
			sd_word(f, libs[i], true);
		}
		fputc('\n', f);
	}
	fclose(f);
	free_libs(libs, nlibs);

	if (u.preload)
		et_enable_warn(c, "%s already sets LD_PRELOAD (%s): this drop-in's Environment=LD_PRELOAD= "
		     "replaces that value", unit, u.where);

	/* what is there now */
	struct stat st;
	if (lstat(path, &st) == 0) {
		char *old;
		size_t olen;
		int e = S_ISREG(st.st_mode) ? et_tool_slurp(path, &old, &olen) : -EINVAL;
		if (e) {
			et_tool_err("%s: %s: not replaced", path, e == -EINVAL ? "not a regular file" : strerror(-e));
			free(text);
			return ET_EXIT_BAD;
		}
		bool ours = et_enable_has_marker(old);
		free(old);
		if (!ours) {
			et_tool_err("%s exists and was not written by 'enormoustext enable' (no '%s' first line): "
			            "not replaced", path, MARKER);
			free(text);
			return ET_EXIT_BAD;
		}
	}
	if (c->dry) {
		et_enable_say(c, "would write %s:\n%s", path, text);
		et_enable_event(c, "would write", path, NULL, NULL);
		free(text);
		return 0;
	}
	rc = et_tool_make_parents(path);
	if (!rc)
		rc = et_tool_write_atomic(path, text, tlen, 0644);
	free(text);
	if (rc)
		return rc;
	et_enable_say(c, "wrote %s\n", path);
	et_enable_event(c, "write", path, NULL, NULL);
	return reload(c, unit);
}

int et_disable_unit(struct ctx *c, const char *unit_arg)
{
	char unit[300];
	int rc = normalise_unit(unit_arg, unit, sizeof unit);
	if (rc)
		return rc;
	snprintf(c->unit, sizeof c->unit, "%s", unit);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/etc/systemd/system/%s.d/" DROPIN, c->root, unit);
	char *old;
	size_t olen;
	int e = et_tool_slurp(path, &old, &olen);
	if (e == -ENOENT) {
		et_tool_err("%s: no such file: %s is not enabled", path, unit);
		return ET_EXIT_BAD;
	}
	if (e) {
		et_tool_err("%s: %s: not removed", path, e == -EINVAL ? "not a regular file" : strerror(-e));
		return ET_EXIT_BAD;
	}
	bool ours = et_enable_has_marker(old);
	free(old);
	if (!ours) {
		et_tool_err("%s was not written by 'enormoustext enable' (no '%s' first line): not removed", path,
		            MARKER);
		return ET_EXIT_BAD;
	}
	if (et_enable_remove_file(c, path))
		return ET_EXIT_BAD;
	if (c->dry)
		return 0;
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s", path);
	*strrchr(d, '/') = '\0';
	if (rmdir(d) == 0) {
		et_enable_say(c, "removed %s (empty)\n", d);
		et_enable_event(c, "remove", d, NULL, NULL);
	}
	return reload(c, unit);
}


/* --list: the drop-ins enable wrote (MARKER first) under
 * ROOT/etc/systemd/system, as lines, or into j's array (NULL without
 * --json); how many. */
size_t et_enable_list_units(const struct ctx *c, struct et_json *j)
{
	char dir[PATH_MAX];
	et_enable_rooted(c, dir, sizeof dir, "/etc/systemd/system");
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort);
	size_t nunits = 0;
	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		size_t dl = strlen(d);
		char path[PATH_MAX + 300], *buf = NULL;
		size_t len;
		if (dl > 2 && !strcmp(d + dl - 2, ".d") &&
		    snprintf(path, sizeof path, "%s/%s/" DROPIN, dir, d) < (int)sizeof path &&
		    et_tool_slurp(path, &buf, &len) == 0 && et_enable_has_marker(buf)) {
			char unit[300];
			snprintf(unit, sizeof unit, "%.*s", (int)(dl - 2), d);
			if (c->json) {
				et_json_obj(j, NULL);
				et_json_str(j, "unit", unit);
				et_json_str(j, "dropin", path);
				et_json_arr(j, "environment");
			} else {
				printf("unit %s: %s\n", unit, path);
			}
			for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
				if (strncmp(l, "Environment=", 12) && strncmp(l, "ExecStartPre=", 13))
					continue;
				if (c->json && !strncmp(l, "Environment=", 12))
					et_json_str(j, NULL, l + 12);
				else if (!c->json)
					printf("  %s\n", l);
			}
			if (c->json) {
				et_json_arr_end(j);
				et_json_obj_end(j);
			}
			nunits++;
		}
		free(buf);
		free(ents[i]);
	}
	free(ents);
	return nunits;
}
