/*
 * tools/enormoustext/cmd/enable.c — `enormoustext enable` and `disable`: turn
 * the library on for a systemd service, or for one program host-wide, or
 * for every one, persistently, and off again leaving exactly what was
 * there before.  This file is the command's front: its options (the tables
 * enable_spec and disable_spec below), which form is asked for, the
 * checks of the values given, --json's report, --list; the work is
 * enable_units.c's (UNIT) and enable_hostwide.c's (--binary, --all), on
 * enable_files.c's small files (enable.h).
 *
 * Every file is written beside and renamed in (core/outfile.c), made
 * 0644, fsync'ed, and its directory too.  --root DIR puts DIR before every
 * path written and every unit file read (tests, image building); the
 * program, its libraries and the library are taken as this system has
 * them.
 *
 * Owns: `enable`, `disable`: their options and usage errors, the --env
 * values checked (by the library's own parser: preload.c), --json's report
 * (each file with what was done to it, gathered as it is done, and the
 * warnings), --list's output.
 * May call: enable_units.c, enable_hostwide.c, enable_files.c, preload.c
 * (the options' check), opts.c, core (options, hostconf, json), output.c,
 * msg.c, common.c.
 * Never: writes a file itself (the parts do); writes a file it did not
 * write (no MARKER), or the loader's list without first running a program
 * with the library loaded through the new path.
 */
#include "enable.h"
#include "opts.h"
#include "preload.h"

#include "core/hostconf.h"
#include "core/hostwide.h"

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

enum { OPT_ENV = 1, OPT_PRIME, OPT_LIB, OPT_DRY, OPT_NO_RELOAD, OPT_ROOT, OPT_BINARY, OPT_JSON, OPT_ALL, OPT_LIST,
       OPT_MODE, OPT_PAD, OPT_PROGRAMS, OPT_EXCLUDE, OPT_PRELOAD };


/* ------------------------------------------------------------- options */

static const struct et_opt unit_opts[] = {
	{ "env", 0, "NAME=VALUE",
	  "a variable of the library (ENORMOUSTEXT_VERBOSE=1, or\n"
	  "VERBOSE=1), checked as 'enormoustext run' checks it\n"
	  "(with --all: a setting of every program)",
	  OPT_ENV, ET_OPTF_REPEAT, 0, 1 | 4, NULL, ET_COMP_NONE },
	{ "prime", 0, NULL,
	  "ExecStartPre=-enormoustext prime <the unit's program\n"
	  "and its shared libraries> (from ExecStart=)",
	  OPT_PRIME, 0, 0, 1, NULL, 0 },
	{ "no-reload", 0, NULL, "do not run 'systemctl daemon-reload'", OPT_NO_RELOAD, 0, 0, 1, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_opt binary_opts[] = {
	{ "binary", 0, "PATH", "the program (instead of a UNIT)", OPT_BINARY, ET_OPTF_REQUIRED, 0, 2, NULL,
	  ET_COMP_FILE },
	{ "all", 0, NULL,
	  "every program of the host: the daemon (no code in any\n"
	  "process), and the host's settings",
	  OPT_ALL, ET_OPTF_REQUIRED, 0, 4, NULL, 0 },
	{ "preload", 0, NULL,
	  "with --all: and the library in every dynamically\n"
	  "linked program, for the copies the daemon cannot give",
	  OPT_PRELOAD, 0, 0, 4, NULL, 0 },
	{ "mode", 0, "N",
	  "with --all: 1 text, 2 JIT code only, 3 both\n"
	  "(ENORMOUSTEXT_MODE)",
	  OPT_MODE, 0, 0, 4, "1 2 3", 0 },
	{ "pad-threshold", 0, "BYTES",
	  "with --all: pad a partial last window with more text\n"
	  "than this (ENORMOUSTEXT_PAD_THRESHOLD)",
	  OPT_PAD, 0, 0, 4, NULL, 0 },
	{ "programs", 0, "GLOBS",
	  "with --all: only programs whose path or name matches\n"
	  "one of these colon-separated globs act",
	  OPT_PROGRAMS, 0, 0, 4, NULL, 0 },
	{ "exclude-programs", 0, "GLOBS",
	  "with --all: programs matching one of these never act\n"
	  "(they still load the library: it stands down)",
	  OPT_EXCLUDE, 0, 0, 4, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_opt both_opts[] = {
	{ "list", 0, NULL,
	  "list what enable wrote: the units' drop-ins, the\n"
	  "programs of " ET_HOSTWIDE_LIST ", --all's settings",
	  OPT_LIST, ET_OPTF_REQUIRED, 0, 8, NULL, 0 },
	{ "lib", 0, "PATH", "the library (default: as 'enormoustext run' finds it)", OPT_LIB, 0, 0, 1 | 2 | 4,
	  NULL, ET_COMP_FILE },
	{ "dry-run", 'n', NULL, "print what would be written and where; write nothing", OPT_DRY, 0, 0, 1 | 2 | 4,
	  NULL, 0 },
	{ "root", 0, "DIR",
	  "put DIR before every path written or read under /etc\n"
	  "(and the unit directories, the link): for tests and\n"
	  "image building; the program and the library are this\n"
	  "system's",
	  OPT_ROOT, 0, 0, 0, NULL, ET_COMP_DIR },
	{ "json", 0, NULL,
	  "JSON on stdout instead of the lines: dry_run, root,\n"
	  "unit or binary, library, environment (a unit's\n"
	  "variables), prime (the files primed), entry (the\n"
	  "path /etc/ld.so.preload names), all, settings and\n"
	  "note, preload and daemon (--all), files (path,\n"
	  "action, and target, in or\n"
	  "entry), reload, restart, warnings; with --list: units,\n"
	  "preload_entry, programs, all, settings, daemon",
	  OPT_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec enable_spec = {
	.name = "enable",
	.forms = { { "UNIT", NULL }, { NULL, NULL } },
	.about =
	        "Turn libenormoustext on, persistently.\n"
	        "\n"
	        "UNIT (a systemd service; 'mariadb' means mariadb.service): writes the drop-in\n"
	        "/etc/systemd/system/UNIT.d/" DROPIN "\n"
	        "with Environment=LD_PRELOAD=<the library>, then runs 'systemctl daemon-reload'\n"
	        "when systemd runs this system.  The service must be restarted for it to take\n"
	        "effect.  A unit that systemd (or, with --root, the unit directories) does not\n"
	        "know draws a warning naming the units nearest to it (a typo?); the drop-in is\n"
	        "written all the same (a unit installed later).  Root is needed (not with\n"
	        "--dry-run or --root).\n"
	        "\n"
	        "--binary PATH (a dynamically linked program, no wrapper, no unit): the\n"
	        "library goes into /etc/ld.so.preload through a path of its own\n"
	        "(" ET_HOSTWIDE_LINKDIR "/, a symbolic link) and PATH, resolved, into\n"
	        ET_HOSTWIDE_LIST ": every other program loads the library and it does\n"
	        "nothing there.  The ld.so.preload there before is kept byte for byte and put\n"
	        "back by 'disable --binary' when no program is left.  Before writing, a\n"
	        "program is run with the library loaded through the new path.\n"
	        "\n"
	        "--all: every program of the host, with no code in any process: 'enormoustext\n"
	        "daemon' keeps their text in the page cache as huge folios and the kernel maps\n"
	        "it huge (congruent files: shared libraries of 2 MiB or more, static, non-PIE\n"
	        "and enormous.ld programs).  Writes the settings,\n"
	        ET_HOSTWIDE_CONF ", then the daemon's unit when none is\n"
	        "installed, and enables it: 'systemctl enable --now' where systemd runs, else\n"
	        "'systemctl --root' and a line saying how to start it.\n"
	        "--preload adds the --binary entry for every program: each acts by the host's\n"
	        "settings (--mode, --pad-threshold, --env; a process's own environment wins,\n"
	        "ENORMOUSTEXT=0 turns it off; a setuid program never acts), the programs\n"
	        "--programs names (default: all) and not those of --exclude-programs; the\n"
	        "library trusts the list, the settings and the off switch only while they and\n"
	        ET_HOSTWIDE_ETC " are root's and not writable by group or others.  --all\n"
	        "without --preload takes out the entry an earlier --preload made.  --binary\n"
	        "programs act beside it, whatever its globs say.\n"
	        "\n"
	        "--list: what this command wrote, and nothing is changed.\n",
	.sections = { { "for a UNIT:", unit_opts, NULL }, { "host-wide (a program, or every one):", binary_opts, NULL },
	              { "all forms:", both_opts, NULL } },
	.tail = "A file there that this command did not write (no\n"
	        "'" MARKER "' first line) is never replaced.  Exit status: 0 done;\n"
	        "1 a bad input or a failed write (nothing changed); 2 usage error.\n",
	.operand = ET_COMP_UNIT,
};

static const struct et_opt disable_unit_opts[] = {
	{ "no-reload", 0, NULL, "do not run 'systemctl daemon-reload'", OPT_NO_RELOAD, 0, 0, 1, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_opt disable_binary_opts[] = {
	{ "binary", 0, "PATH", "the program enable --binary named", OPT_BINARY, ET_OPTF_REQUIRED, 0, 2, NULL,
	  ET_COMP_FILE },
	{ "all", 0, NULL, "undo enable --all", OPT_ALL, ET_OPTF_REQUIRED, 0, 4, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_opt disable_both_opts[] = {
	{ "dry-run", 'n', NULL, "print what would be removed; change nothing", OPT_DRY, 0, 0, 0, NULL, 0 },
	{ "root", 0, "DIR", "as for enable (tests, image building)", OPT_ROOT, 0, 0, 0, NULL, ET_COMP_DIR },
	{ "json", 0, NULL,
	  "JSON on stdout instead of the lines: dry_run, root,\n"
	  "unit or binary, library, entry, programs_left\n"
	  "(--binary), files (path, action, and from or\n"
	  "entry), reload, restart, warnings",
	  OPT_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec disable_spec = {
	.name = "disable",
	.forms = { { "UNIT", NULL }, { NULL, NULL } },
	.about =
	        "Undo 'enormoustext enable'.\n"
	        "\n"
	        "UNIT: removes /etc/systemd/system/UNIT.d/" DROPIN " (only when 'enable'\n"
	        "wrote it) and UNIT.d when it is left empty, then 'systemctl daemon-reload'\n"
	        "(unless --no-reload, or systemd does not run here).  Restart the service.\n"
	        "\n"
	        "--binary PATH: takes PATH out of " ET_HOSTWIDE_LIST "; when no program is\n"
	        "left, puts /etc/ld.so.preload back byte for byte as it was before 'enable'\n"
	        "(or removes it when there was none), and removes the list and the link.\n"
	        "\n"
	        "--all: disables the daemon's unit where enable enabled it (and stops it; a\n"
	        "daemon started by hand is stopped too), removes the unit enable wrote, takes\n"
	        "every program (the list's '" ET_HOSTWIDE_ALL "' line, --preload) out the same way\n"
	        "as --binary, and removes " ET_HOSTWIDE_CONF ";\n"
	        "programs of --binary stay.\n",
	.sections = { { "for a UNIT:", disable_unit_opts, NULL }, { "host-wide:", disable_binary_opts, NULL },
	              { "both:", disable_both_opts, NULL } },
	.tail = "Exit status: 0 done; 1 nothing of enable's there, or a failed change; 2\n"
	        "usage error.\n",
	.operand = ET_COMP_UNIT,
};

const struct et_cmd_spec *et_cmd_enable_spec(void)
{
	return &enable_spec;
}

const struct et_cmd_spec *et_cmd_disable_spec(void)
{
	return &disable_spec;
}

/* The variables given (--env, --mode, --pad-threshold), as NAME: VALUE. */
static void json_env(struct et_json *j, const struct ctx *c)
{
	size_t nt;
	const struct et_option_desc *t = et_option_table(&nt);
	for (size_t i = 0; i < nt && i < ET_OPT__COUNT; i++)
		if (c->env[i])
			et_json_str(j, t[i].name, c->env[i]);
}

/* --json: the report gathered in c (after a success). */
static void report_json(const struct ctx *c)
{
	struct et_json j;
	et_json_init(&j, stdout);
	et_json_obj(&j, NULL);
	et_json_str(&j, "command", c->enable ? "enable" : "disable");
	et_json_bool(&j, "dry_run", c->dry);
	et_json_str(&j, "root", c->root);
	if (c->unit[0])
		et_json_str(&j, "unit", c->unit);
	else
		et_json_null(&j, "unit");
	if (c->binary[0])
		et_json_str(&j, "binary", c->binary);
	else
		et_json_null(&j, "binary");
	if (c->lib[0])
		et_json_str(&j, "library", c->lib);
	else
		et_json_null(&j, "library");
	if (c->unit[0] && c->enable) {
		et_json_obj(&j, "environment");
		et_json_str(&j, "LD_PRELOAD", c->lib);
		json_env(&j, c);
		et_json_obj_end(&j);
		et_json_arr(&j, "prime");
		for (size_t i = 0; i < c->nprime; i++)
			et_json_str(&j, NULL, c->prime_files[i]);
		et_json_arr_end(&j);
	}
	et_json_bool(&j, "all", c->all);
	if (c->all && c->enable) {
		et_json_obj(&j, "settings");
		if (c->programs)
			et_json_str(&j, ET_HOSTCONF_PROGRAMS, c->programs);
		if (c->exclude)
			et_json_str(&j, ET_HOSTCONF_EXCLUDE, c->exclude);
		json_env(&j, c);
		et_json_obj_end(&j);
		et_json_str(&j, "note", c->asan_note ? et_enable_asan_note : NULL);
		et_json_bool(&j, "preload", c->preload);
		et_json_str(&j, "daemon", c->daemon);
	}
	if (c->binary[0] || c->all) {
		if (c->entry[0])
			et_json_str(&j, "entry", c->entry);
		else
			et_json_null(&j, "entry");
		if (!c->enable) {
			if (c->programs_left >= 0)
				et_json_i64(&j, "programs_left", c->programs_left);
			else
				et_json_null(&j, "programs_left");
		}
	}
	et_json_arr(&j, "files");
	for (size_t i = 0; i < c->nev; i++) {
		et_json_obj_flat(&j, NULL);
		et_json_str(&j, "path", c->ev[i].path);
		et_json_str(&j, "action", c->ev[i].action);
		if (c->ev[i].key)
			et_json_str(&j, c->ev[i].key, c->ev[i].value);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	if (c->unit[0]) {
		if (c->reload) {
			et_json_str(&j, "reload", c->reload);
			char cmd[340];
			snprintf(cmd, sizeof cmd, "systemctl restart %s", c->unit);
			et_json_str(&j, "restart", cmd);
		} else {
			et_json_null(&j, "reload");
		}
	}
	et_json_arr(&j, "warnings");
	for (size_t i = 0; i < c->nwarn; i++)
		et_json_str(&j, NULL, c->warn[i]);
	et_json_arr_end(&j);
	et_json_obj_end(&j);
	et_json_end(&j);
}

static void ctx_free(struct ctx *c)
{
	for (size_t i = 0; i < c->nev; i++) {
		free(c->ev[i].path);
		free(c->ev[i].value);
	}
	for (size_t i = 0; i < c->nwarn; i++)
		free(c->warn[i]);
	for (size_t i = 0; i < c->nprime; i++)
		free(c->prime_files[i]);
	free(c->prime_files);
}

/* --env NAME=VALUE: NAME is a variable of the table (the prefix may be
 * left out); usage error otherwise. */
static int take_env(struct ctx *c, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return et_tool_usage("--env '%s': give NAME=VALUE", arg);
	char name[64];
	size_t n = (size_t)(eq - arg);
	bool prefixed = n >= 12 && !strncmp(arg, "ENORMOUSTEXT", 12);
	if (n >= sizeof name - 16)
		return et_tool_usage("--env '%s': no such variable", arg);
	snprintf(name, sizeof name, "%s%.*s", prefixed ? "" : "ENORMOUSTEXT_", (int)n, arg);
	int id = et_tool_option_index(name);
	if (id < 0) {
		const char *near = et_option_nearest(name);
		if (near)
			return et_tool_usage("--env '%s': %s is not a variable of libenormoustext (did you mean %s?)",
			                     arg, name, near);
		return et_tool_usage("--env '%s': %s is not a variable of libenormoustext", arg, name);
	}
	if (strchr(eq + 1, '\n'))
		return et_tool_usage("--env '%s': a value cannot hold a newline", name);
	if (c->env[id])
		return et_tool_usage("--env '%s': %s is given twice", arg, name);
	c->env[id] = eq + 1;
	return 0;
}

/* Options, then the work; what was done is gathered in *c (--json). */
/* --list: the drop-ins enable wrote (MARKER first) under
 * ROOT/etc/systemd/system, the programs of the host-wide list, and --all's
 * settings: as lines, or JSON. */
static int list_enabled(struct ctx *c)
{
	struct et_json j;
	if (c->json) {
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_str(&j, "command", "enable");
		et_json_bool(&j, "list", true);
		et_json_str(&j, "root", c->root);
		et_json_arr(&j, "units");
	}
	size_t nunits = et_enable_list_units(c, c->json ? &j : NULL);
	if (c->json)
		et_json_arr_end(&j);
	bool any = false;
	int rc = et_enable_list_hostwide(c, c->json ? &j : NULL, &any);
	et_enable_list_daemon(c, c->json ? &j : NULL, &any);
	if (c->json) {
		et_json_obj_end(&j);
		et_json_end(&j);
	} else if (!nunits && !any) {
		char dir[PATH_MAX], list[PATH_MAX];
		et_enable_rooted(c, dir, sizeof dir, "/etc/systemd/system");
		et_enable_rooted(c, list, sizeof list, ET_HOSTWIDE_LIST);
		printf("nothing: no drop-in of enable in %s, no program in %s\n", dir, list);
	}
	return rc;
}

/* What the options said beyond *c: the form asked for and what came
 * with it. */
struct seen {
	const char *binary, *host_opt;   /* --binary PATH; a setting of --all given */
	bool any_env, list;              /* a variable given; --list */
};

/* The options into *c and *s: true to go on; false with *rc the exit
 * status (a usage error, --help). */
static bool parse_options(struct ctx *c, struct et_args *a, struct seen *s, int *rc)
{
	int o;
	while ((o = et_args_next(a)) > 0) {
		switch (o) {
		case OPT_DRY:
			c->dry = true;
			break;
		case OPT_ENV:
			if ((*rc = take_env(c, a->val)) != 0)
				return false;
			s->any_env = true;
			break;
		case OPT_PRIME:
			c->prime = true;
			break;
		case OPT_LIB:
			c->lib_opt = a->val;
			break;
		case OPT_NO_RELOAD:
			c->no_reload = true;
			break;
		case OPT_ROOT:
			c->root = a->val;
			break;
		case OPT_BINARY:
			s->binary = a->val;
			break;
		case OPT_ALL:
			c->all = true;
			break;
		case OPT_PRELOAD:
			c->preload = true;
			break;
		case OPT_LIST:
			s->list = true;
			break;
		case OPT_MODE:
		case OPT_PAD: {
			int id = o == OPT_MODE ? ET_OPT_MODE : ET_OPT_PAD_THRESHOLD;
			if (c->env[id]) {
				*rc = et_tool_usage("%s: ENORMOUSTEXT_%s is given twice", et_args_name(a),
				                    o == OPT_MODE ? "MODE" : "PAD_THRESHOLD");
				return false;
			}
			c->env[id] = a->val;
			s->any_env = true;
			s->host_opt = o == OPT_MODE ? "--mode" : "--pad-threshold";
			break;
		}
		case OPT_PROGRAMS:
		case OPT_EXCLUDE:
			if (!a->val[0] || strchr(a->val, '\n')) {
				*rc = et_tool_usage("%s '%s': give colon-separated globs, on one line", et_args_name(a),
				                    a->val);
				return false;
			}
			*(o == OPT_PROGRAMS ? &c->programs : &c->exclude) = a->val;
			s->host_opt = o == OPT_PROGRAMS ? "--programs" : "--exclude-programs";
			break;
		case OPT_JSON:
			c->json = true;
			break;
		}
	}
	if (o < 0) {
		*rc = et_args_exit(o);
		return false;
	}
	return true;
}

static int main_common(struct ctx *c, int argc, char **argv)
{
	bool enable = c->enable;
	struct seen s = { NULL, NULL, false, false };
	struct et_args a;
	et_args_init(&a, enable ? &enable_spec : &disable_spec, argc, argv);
	int rc;
	if (!parse_options(c, &a, &s, &rc))
		return rc;
	static char root[PATH_MAX];   /* c->root, read by the report after this returns */
	root[0] = '\0';
	if (c->root[0]) {
		struct stat st;
		if (stat(c->root, &st) != 0 || !S_ISDIR(st.st_mode) || !realpath(c->root, root)) {
			et_tool_err("--root %s: not a directory", c->root);
			return ET_EXIT_BAD;
		}
		if (!strcmp(root, "/"))
			root[0] = '\0';
		c->root = root;
	}
	/* what is written under /etc is root's: said before anything is read
	 * or tried (a user gets one line, not a failed write halfway) */
	if (s.list) {
		if (a.nops || s.binary || c->all || c->preload || s.any_env || s.host_opt || c->prime)
			return et_tool_usage("--list takes no UNIT and no other option but --root and --json");
		c->listed = true;
		return list_enabled(c);
	}
	if (s.host_opt && !c->all)
		return et_tool_usage("%s is a setting of --all", s.host_opt);
	if (c->preload && !c->all)
		return et_tool_usage("--preload goes with --all");
	if (c->all && (s.binary || a.nops))
		return et_tool_usage("give one of UNIT, --binary PATH and --all");
	if (!c->root[0] && !c->dry && geteuid() != 0) {
		const char *dir = s.binary || c->all ? "/etc" : "/etc/systemd/system";
		if (access(dir, W_OK) != 0) {
			et_tool_err("%s %s needs root: it writes %s; run it as root (sudo), or see what it "
			            "would %s with --dry-run", enable ? "enable" : "disable",
			            c->all ? "--all" : s.binary ? "--binary" : "UNIT",
			            c->all ? ET_HOSTWIDE_CONF " and the daemon's unit" :
			            s.binary ? "/etc/ld.so.preload and " ET_HOSTWIDE_LIST :
			            "/etc/systemd/system/UNIT.d/" DROPIN,
			            enable ? "write" : "remove");
			return ET_EXIT_BAD;
		}
	}
	if (c->all) {
		if (c->prime)
			return et_tool_usage("--prime is for a unit");
		if (enable && s.any_env) {
			size_t nt;
			const struct et_option_desc *t = et_option_table(&nt);
			for (int i = 0; i < ET_OPT__COUNT; i++)
				if (c->env[i] && !et_hostconf_settable(i))
					return et_tool_usage("--env %s: not a setting for every program (%s)", t[i].name,
					                     i == ET_OPT_TOP_ONLY ? "it is about LD_PRELOAD, which --all does not use" :
					                     "it names a file each process would write");
			const char *accepts = "";
			int bad = et_tool_options_bad(c->env, &accepts);
			if (bad >= 0)
				return et_tool_usage("--env '%s=%s' is not valid: it accepts %s", t[bad].name,
				                     c->env[bad], accepts);
			/* host-wide, nobody asked the programs to speak */
			char why[PATH_MAX + 256];
			if (et_tool_options_speak(c->env, why, sizeof why))
				return et_tool_usage("not a setting for every program: %s", why);
		}
		return enable ? et_enable_all(c) : et_disable_all(c);
	}
	if (s.binary) {
		if (a.nops)
			return et_tool_usage("give either UNIT or --binary PATH, not both ('%s')", a.ops[0]);
		if (s.any_env || c->prime)
			return et_tool_usage("--env and --prime are for a unit: with --binary the program's own "
			                     "environment applies");
		if (!*s.binary)
			return et_tool_usage("--binary: the path is empty");
		return enable ? et_enable_binary(c, s.binary) : et_disable_binary(c, s.binary);
	}
	if (!a.nops)
		return et_tool_usage("give a UNIT (a systemd service), --binary PATH or --all");
	if (a.nops > 1)
		return et_tool_usage("one UNIT at a time ('%s' is one too many)", a.ops[1]);
	if (enable && s.any_env) {
		const char *accepts = "";
		int bad = et_tool_options_bad(c->env, &accepts);
		if (bad >= 0) {
			size_t n;
			const struct et_option_desc *t = et_option_table(&n);
			return et_tool_usage("--env '%s=%s' is not valid: it accepts %s", t[bad].name, c->env[bad],
			                     accepts);
		}
	}
	return enable ? et_enable_unit(c, a.ops[0]) : et_disable_unit(c, a.ops[0]);
}

static int enable_or_disable(int argc, char **argv, bool enable)
{
	static struct ctx c;   /* large: not on the stack */
	c = (struct ctx){ .enable = enable, .root = "", .programs_left = -1 };
	int rc = main_common(&c, argc, argv);
	if (rc == ET_EXIT_OK && c.json && !c.listed)
		report_json(&c);
	ctx_free(&c);
	return rc;
}

int et_cmd_enable(int argc, char **argv)
{
	return enable_or_disable(argc, argv, true);
}

int et_cmd_disable(int argc, char **argv)
{
	return enable_or_disable(argc, argv, false);
}

