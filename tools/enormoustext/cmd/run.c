/*
 * tools/enormoustext/cmd/run.c — `enormoustext run [options] [--] CMD
 * [ARGS...]`: exec CMD with libenormoustext preloaded and the options turned
 * into the library's environment variables.
 *
 * The options are not a list of their own: they are made from the library's
 * option table (options.c), one `--NAME VALUE` per variable
 * ENORMOUSTEXT_NAME (`--enable` for ENORMOUSTEXT itself), and the values are
 * checked with the library's own parser (et_options_parse), so the command
 * accepts exactly what the library does and says what it accepts.
 *
 * Which library, and LD_PRELOAD with it first: preload.c (--lib PATH, else
 * $ENORMOUSTEXT_LIB, else this build tree's, beside the command, LIBDIR).
 *
 * Owns: `run`: the options made from the library's table, the environment
 * CMD gets.
 * May call: core (options: the table, its parser, its defaults), preload.c
 * (the library, LD_PRELOAD, the values checked), spawn.c (COMMAND found
 * along PATH), msg.c.
 * Never: keeps a list of options, a default or an accepted value of its
 * own (the table has them).
 */
#include "tool.h"
#include "preload.h"
#include "opts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	OPT_LIB = 1000,
	OPT_DRY_RUN,
	OPT_V,
	OPT_JSON,
	OPT_PROFILE_MISSING,
	OPT_TABLE = 2000,   /* + index in the option table */
};

struct run_ctx {
	const char *val[ET_OPT__COUNT];
	char *joined[ET_OPT__COUNT];   /* storage for repeated glob options */
	const char *lib_opt;           /* --lib, or NULL */
	bool dry, json;                /* --dry-run, --json */
	char vbuf[2];                  /* -v's count as ENORMOUSTEXT_VERBOSE's value */
};

/* "ENORMOUSTEXT_MIN_BYTES" -> "min-bytes"; "ENORMOUSTEXT" -> "enable". */
static void long_name(const char *var, char *out, size_t cap)
{
	const char *p = var + strlen("ENORMOUSTEXT");
	if (*p == '\0') {
		snprintf(out, cap, "enable");
		return;
	}
	if (*p == '_')
		p++;
	size_t n = 0;
	for (; *p && n + 1 < cap; p++)
		out[n++] = *p == '_' ? '-' : (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	out[n] = '\0';
}

/* What the value of a variable looks like, for the help: from what the
 * table says it accepts, so that a variable added to the table gets a
 * sensible name here too. */
static const char *metavar(const char *accepts)
{
	if (strstr(accepts, "1/0") || strstr(accepts, "on/off"))
		return "BOOL";
	if (strstr(accepts, "integer"))
		return "N";
	if (strstr(accepts, "size"))
		return "SIZE";
	if (strstr(accepts, "glob"))
		return "GLOB";
	/* a list of choices first: one of them may be the word "file" */
	if (strchr(accepts, ','))
		return "NAME";
	if (strstr(accepts, "path") || strstr(accepts, "file"))
		return "FILE";
	return "VALUE";
}

static bool table_has(const char *var)
{
	return et_tool_option_index(var) >= 0;
}

/* Shell-quote for display when needed. */
static void put_word(FILE *f, const char *s)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("-_./:=,+%@", *p)))
			plain = false;
	if (plain) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

/* A file the library will write (name: the option) whose directory does
 * not exist: true after one line saying so. */
static bool dir_missing(const char *name, const char *path)
{
	if (!path || !*path)
		return false;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || strchr(dir, '%'))     /* %p is the library's to expand */
		return false;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	struct stat st;
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return false;
	et_tool_err("%s %s: directory %s does not exist", name, path, dir);
	return true;
}

/* The table of `run`: the library's options (one per variable of its
 * table, made here at the first call), then the command's own. */
static struct et_opt lib_opts[ET_OPT__COUNT + 2];
static char lib_names[ET_OPT__COUNT][40];
static char lib_help[ET_OPT__COUNT][200];
static char lib_choices[ET_OPT__COUNT][64];

static const struct et_opt cmd_opts[] = {
	{ "", 'v', NULL, "one more --verbose level (repeatable; --verbose wins)", OPT_V,
	  ET_OPTF_NOSYN, 0, 0, NULL, 0 },
	{ "lib", 0, "PATH", "the libenormoustext.so to preload", OPT_LIB, 0, 0, 0, NULL, ET_COMP_FILE },
	{ "dry-run", 'n', NULL, "print the environment it would set and the command, run\nnothing",
	  OPT_DRY_RUN, 0, 0, 0, NULL, 0 },
	{ "json", 0, NULL,
	  "with --dry-run: the same as one JSON object of two\n"
	  "keys: \"environment\" (LD_PRELOAD, the library, first;\n"
	  "then each variable it sets) and \"command\" (its words)",
	  OPT_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const char *dflt(int id, char *buf, size_t cap)
{
	if (id != OPT_LIB)
		return NULL;
	char lib[PATH_MAX], tried[3 * PATH_MAX];
	const char *def = et_tool_default_library(lib, sizeof lib, tried, sizeof tried);
	snprintf(buf, cap, "$ENORMOUSTEXT_LIB, else %s", def ? def : "(none found: give --lib)");
	return buf;
}

static struct et_cmd_spec spec = {
	.name = "run",
	.forms = { { NULL, "[--] COMMAND [ARGS...]" } },
	.about = "Run COMMAND with libenormoustext preloaded (put first in LD_PRELOAD) and\n"
	         "the options below set as the library's environment variables.  COMMAND\n"
	         "replaces this process (exec), so the exit status is COMMAND's; 127 when it\n"
	         "is not found, 126 when it cannot be executed.  Variables already in the\n"
	         "environment stay unless an option sets them.  A file the library reads\n"
	         "(--profile) must be readable, and the directory of one it writes (--report,\n"
	         "--record) must exist: both are checked before COMMAND runs.\n",
	.sections = { { "library options (each sets the variable in brackets; a bad value is a\n"
	                "usage error, exit 2):",
	                lib_opts, "[LIBRARY-OPTION VALUE]..." },
	              { "command options:", cmd_opts, NULL } },
	.dflt = dflt,
	.operand = ET_COMP_COMMAND,
	.in_order = true,
};

/* "auto, file, thp, collapse, hugetlb" -> "auto file thp collapse hugetlb"
 * for the completion; "" when what it accepts is not such a list. */
static void choices_of(const char *accepts, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
	for (const char *p = accepts; *p; p++) {
		if (*p == ',' || *p == ' ') {
			if (n && out[n - 1] != ' ' && n + 1 < cap)
				out[n++] = ' ';
			continue;
		}
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '+') || n + 1 >= cap) {
			out[0] = '\0';
			return;
		}
		out[n++] = *p;
	}
	out[n] = '\0';
}

const struct et_cmd_spec *et_cmd_run_spec(void)
{
	if (lib_opts[0].name)
		return &spec;
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	size_t k = 0;
	for (size_t i = 0; i < n && i < ET_OPT__COUNT; i++) {
		long_name(t[i].name, lib_names[i], sizeof lib_names[i]);
		bool repeat = i == ET_OPT_INCLUDE || i == ET_OPT_EXCLUDE;
		snprintf(lib_help[i], sizeof lib_help[i], "[%s] %s; accepts %s%s; default %s", t[i].name, t[i].help,
		         t[i].accepts, repeat ? " (repeat to add more)" : "", t[i].def[0] ? t[i].def : "unset");
		choices_of(t[i].accepts, lib_choices[i], sizeof lib_choices[i]);
		const char *mv = metavar(t[i].accepts);
		lib_opts[k++] = (struct et_opt){
			.name = lib_names[i],
			.arg = mv,
			.help = lib_help[i],
			.id = OPT_TABLE + (int)i,
			.flags = (i == ET_OPT_TOP_ONLY ? ET_OPTF_OPTVAL : 0u) | (repeat ? ET_OPTF_REPEAT : 0u) |
			         ET_OPTF_HINTS,
			.choices = lib_choices[i][0] ? lib_choices[i] : NULL,
			.comp = !strcmp(mv, "FILE") ? ET_COMP_FILE : ET_COMP_NONE,
		};
	}
	if (!table_has("ENORMOUSTEXT_PROFILE"))
		lib_opts[k++] = (struct et_opt){
			.name = "profile",
			.arg = "FILE",
			.help = "not available: this libenormoustext has no profile\n"
			        "support (no ENORMOUSTEXT_PROFILE variable); using it is\n"
			        "an error",
			.id = OPT_PROFILE_MISSING,
		};
	lib_opts[k] = (struct et_opt){ .name = NULL };
	return &spec;
}

/* One library option's value: a repeated glob option adds to the list,
 * any other replaces; false (said) when out of memory. */
static bool set_value(struct run_ctx *c, int id, const char *v)
{
	if ((id == ET_OPT_INCLUDE || id == ET_OPT_EXCLUDE) && c->val[id] && *v) {
		/* Repeated glob options add up: one colon-separated list. */
		size_t len = strlen(c->val[id]) + strlen(v) + 2;
		char *j = malloc(len);
		if (!j) {
			et_tool_err("out of memory");
			return false;
		}
		snprintf(j, len, "%s:%s", c->val[id], v);
		free(c->joined[id]);
		c->joined[id] = j;
		c->val[id] = j;
	} else {
		c->val[id] = v ? v : "1";
	}
	return true;
}

/* parse: the options into c (the library's values, the command's own)
 * and a's operands (COMMAND), then the checks that need nothing but them;
 * false with *rc the exit status when the command stops here. */
static bool parse(int argc, char **argv, struct run_ctx *c, struct et_args *a, int *rc)
{
	et_args_init(a, et_cmd_run_spec(), argc, argv);
	int vcount = 0;
	int o;
	while ((o = et_args_next(a)) > 0) {
		if (o == OPT_V) {
			vcount++;
		} else if (o == OPT_DRY_RUN) {
			c->dry = true;
		} else if (o == OPT_JSON) {
			c->json = true;
		} else if (o == OPT_LIB) {
			c->lib_opt = a->val;
		} else if (o == OPT_PROFILE_MISSING) {
			*rc = et_tool_usage("option '--profile': this libenormoustext has no profile support yet "
			                    "(ENORMOUSTEXT_PROFILE is not one of its variables)");
			return false;
		} else if (o >= OPT_TABLE && o < OPT_TABLE + ET_OPT__COUNT) {
			if (!set_value(c, o - OPT_TABLE, a->val)) {
				*rc = ET_EXIT_BAD;
				return false;
			}
		}
	}
	if (o < 0) {
		*rc = et_args_exit(o);
		return false;
	}
	c->vbuf[0] = (char)('0' + (vcount > 3 ? 3 : vcount));
	c->vbuf[1] = '\0';
	if (vcount && !c->val[ET_OPT_VERBOSE])
		c->val[ET_OPT_VERBOSE] = c->vbuf;
	if (!a->nops) {
		*rc = et_tool_usage("no command to run: give it after the options, e.g. "
		                    "'enormoustext run --verbose 1 -- myprogram'");
		return false;
	}
	if (c->json && !c->dry) {
		*rc = et_tool_usage("--json goes with --dry-run (a command that runs reports nothing here)");
		return false;
	}
	return true;
}

/* The values as the library will take them, and the files it will use:
 * true when COMMAND may run; *rc the exit status when not. */
static bool check_values(const struct run_ctx *c, const struct et_option_desc *t, int *rc)
{
	/* Check every value with the library's own parser. */
	const char *accepts = "";
	int bad = et_tool_options_bad(c->val, &accepts);
	if (bad >= 0) {
		char name[40];
		long_name(t[bad].name, name, sizeof name);
		*rc = et_tool_usage("option '--%s %s' is not valid: it accepts %s", name, c->val[bad], accepts);
		return false;
	}
	/* The library only says at exit that it could not write the report
	 * or the recording, and only with a warning that it could not read the
	 * profile: worth saying now, before COMMAND runs. */
	if (dir_missing("--report", c->val[ET_OPT_REPORT]) || dir_missing("--record", c->val[ET_OPT_RECORD])) {
		*rc = ET_EXIT_BAD;
		return false;
	}
	if (c->val[ET_OPT_PROFILE] && *c->val[ET_OPT_PROFILE]) {
		const char *pf = c->val[ET_OPT_PROFILE];
		struct stat st;
		if (access(pf, R_OK) != 0 || stat(pf, &st) != 0) {
			et_tool_err("--profile %s: %s", pf, strerror(errno));
			*rc = ET_EXIT_BAD;
			return false;
		}
		if (!S_ISREG(st.st_mode)) {
			et_tool_err("--profile %s: not a regular file", pf);
			*rc = ET_EXIT_BAD;
			return false;
		}
	}
	return true;
}

/* --dry-run --json: the environment and the command as one object. */
static void print_json(const struct run_ctx *c, const struct et_option_desc *t, size_t n, const char *preload,
                       const struct et_args *a)
{
	struct et_json j;
	et_json_init(&j, stdout);
	et_json_obj(&j, NULL);
	et_json_obj(&j, "environment");
	et_json_str(&j, "LD_PRELOAD", preload);
	for (size_t i = 0; i < n && i < ET_OPT__COUNT; i++)
		if (c->val[i])
			et_json_str(&j, t[i].name, c->val[i]);
	et_json_obj_end(&j);
	et_json_arr(&j, "command");
	for (int i = 0; i < a->nops; i++)
		et_json_str(&j, NULL, a->ops[i]);
	et_json_arr_end(&j);
	et_json_obj_end(&j);
	et_json_end(&j);
}

/* --dry-run: the environment and the command as a shell would take them. */
static void print_text(const struct run_ctx *c, const struct et_option_desc *t, size_t n, const char *preload,
                       const struct et_args *a)
{
	printf("LD_PRELOAD=");
	put_word(stdout, preload);
	putchar('\n');
	for (size_t i = 0; i < n && i < ET_OPT__COUNT; i++) {
		if (!c->val[i])
			continue;
		printf("%s=", t[i].name);
		put_word(stdout, c->val[i]);
		putchar('\n');
	}
	printf("exec");
	for (int i = 0; i < a->nops; i++) {
		putchar(' ');
		put_word(stdout, a->ops[i]);
	}
	putchar('\n');
}

/* The environment set (LD_PRELOAD, then each value), then COMMAND in
 * this process's place: returns only when it could not, with the exit
 * status (1 for the environment, 127 not found, 126 not executable). */
static int exec_command(const struct run_ctx *c, const struct et_option_desc *t, size_t n, const char *preload,
                        const struct et_args *a)
{
	if (setenv("LD_PRELOAD", preload, 1) != 0) {
		et_tool_err("cannot set LD_PRELOAD: %s", strerror(errno));
		return ET_EXIT_BAD;
	}
	for (size_t i = 0; i < n && i < ET_OPT__COUNT; i++) {
		if (c->val[i] && setenv(t[i].name, c->val[i], 1) != 0) {
			et_tool_err("cannot set %s: %s", t[i].name, strerror(errno));
			return ET_EXIT_BAD;
		}
	}
	fflush(stdout);
	/* found along PATH as execvp would (spawn.c's et_tool_which, which
	 * status --explain uses too), then run as execvp runs it: a file the
	 * kernel cannot execute (no #! line) by /bin/sh */
	char file[PATH_MAX];
	int e = et_tool_which(a->ops[0], file, sizeof file);
	if (e == 0) {
		execv(file, a->ops);
		e = errno;
		if (e == ENOEXEC) {
			char **sh = calloc((size_t)a->nops + 2, sizeof *sh);
			if (sh) {
				sh[0] = (char *)"/bin/sh";
				sh[1] = file;
				for (int i = 1; i < a->nops; i++)
					sh[i + 1] = a->ops[i];
				execv(sh[0], sh);
				e = errno;
				free(sh);
			}
		}
	}
	et_tool_err("%s: %s", a->ops[0], e == ENOENT ? "command not found" : strerror(e));
	return e == ENOENT ? 127 : 126;
}

/* parse -> check -> print (--dry-run) or exec COMMAND. */
int et_cmd_run(int argc, char **argv)
{
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	struct run_ctx c = { .val = { NULL } };
	struct et_args a;
	int rc = ET_EXIT_OK;
	if (parse(argc, argv, &c, &a, &rc) && check_values(&c, t, &rc)) {
		char *preload = et_tool_preload(c.lib_opt);
		if (!preload)
			rc = ET_EXIT_BAD;
		else if (c.dry && c.json)
			print_json(&c, t, n, preload, &a);
		else if (c.dry)
			print_text(&c, t, n, preload, &a);
		else
			rc = exec_command(&c, t, n, preload, &a);
		free(preload);
	}
	for (int i = 0; i < ET_OPT__COUNT; i++)
		free(c.joined[i]);
	return rc;
}
