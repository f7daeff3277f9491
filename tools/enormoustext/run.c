/*
 * tools/enormoustext/run.c — `enormoustext run [options] [--] CMD
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
 * (the library, LD_PRELOAD, the values checked), msg.c.
 * Never: keeps a list of options, a default or an accepted value of its
 * own (the table has them).
 */
#include "tool.h"
#include "preload.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	OPT_LIB = 1000,
	OPT_DRY_RUN,
	OPT_HELP,
	OPT_PROFILE_MISSING,
	OPT_TABLE = 2000,   /* + index in the option table */
};

struct run_ctx {
	const char *val[ET_OPT__COUNT];
	char *joined[ET_OPT__COUNT];   /* storage for repeated glob options */
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

static void help(FILE *f)
{
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	char name[40], lib[PATH_MAX], tried[3 * PATH_MAX];
	fprintf(f,
	        "usage: enormoustext run [OPTIONS] [--] COMMAND [ARGS...]\n"
	        "\n"
	        "Run COMMAND with libenormoustext preloaded (put first in LD_PRELOAD) and\n"
	        "the options below set as the library's environment variables.  COMMAND\n"
	        "replaces this process (exec), so the exit status is COMMAND's; 127 when it\n"
	        "is not found, 126 when it cannot be executed.  Variables already in the\n"
	        "environment stay unless an option sets them.\n"
	        "\n"
	        "library options (each sets the variable in brackets; a bad value is a\n"
	        "usage error, exit 2):\n");
	for (size_t i = 0; i < n; i++) {
		char left[64];
		long_name(t[i].name, name, sizeof name);
		snprintf(left, sizeof left, i == ET_OPT_TOP_ONLY ? "--%s[=%s]" : "--%s %s", name,
		         metavar(t[i].accepts));
		fprintf(f, "  %-22s [%s] %s\n", left, t[i].name, t[i].help);
		fprintf(f, "  %-22s accepts %s%s; default %s\n", "", t[i].accepts,
		        (i == ET_OPT_INCLUDE || i == ET_OPT_EXCLUDE) ? " (repeat to add more)" : "",
		        t[i].def[0] ? t[i].def : "unset");
	}
	if (!table_has("ENORMOUSTEXT_PROFILE"))
		fprintf(f, "  %-22s not available: this libenormoustext has no profile support\n"
		           "  %-22s (no ENORMOUSTEXT_PROFILE variable); using it is an error\n",
		        "--profile FILE", "");
	const char *def = et_tool_default_library(lib, sizeof lib, tried, sizeof tried);
	fprintf(f,
	        "  %-22s one more --verbose level (repeatable; --verbose wins)\n"
	        "\n"
	        "command options:\n"
	        "  %-22s the libenormoustext.so to preload; default: $ENORMOUSTEXT_LIB, else\n"
	        "  %-22s %s\n"
	        "  %-22s print the environment it would set and the command, run nothing\n"
	        "  %-22s this help\n",
	        "-v", "--lib PATH", "", def ? def : "(none found: give --lib)", "-n, --dry-run",
	        "-h, --help");
}

int et_cmd_run(int argc, char **argv)
{
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	struct option lo[ET_OPT__COUNT + 8];
	static char names[ET_OPT__COUNT][40];
	size_t k = 0;
	for (size_t i = 0; i < n && i < ET_OPT__COUNT; i++) {
		long_name(t[i].name, names[i], sizeof names[i]);
		/* --top-only alone means 1 (a value goes after '=') */
		lo[k++] = (struct option){ names[i], i == ET_OPT_TOP_ONLY ? optional_argument : required_argument,
		                           NULL, OPT_TABLE + (int)i };
	}
	if (!table_has("ENORMOUSTEXT_PROFILE"))
		lo[k++] = (struct option){ "profile", required_argument, NULL, OPT_PROFILE_MISSING };
	lo[k++] = (struct option){ "lib", required_argument, NULL, OPT_LIB };
	lo[k++] = (struct option){ "dry-run", no_argument, NULL, OPT_DRY_RUN };
	lo[k++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	lo[k++] = (struct option){ NULL, 0, NULL, 0 };

	struct run_ctx c = { .val = { NULL } };
	const char *lib_opt = NULL;
	bool dry = false;
	int vcount = 0, rc = ET_EXIT_OK;
	opterr = 0;
	int o;
	while ((o = getopt_long(argc, argv, "+:vnh", lo, NULL)) != -1) {
		if (o == 'h' || o == OPT_HELP) {
			help(stdout);
			goto out;
		} else if (o == 'v') {
			vcount++;
		} else if (o == 'n' || o == OPT_DRY_RUN) {
			dry = true;
		} else if (o == OPT_LIB) {
			lib_opt = optarg;
		} else if (o == OPT_PROFILE_MISSING) {
			rc = et_tool_usage("option '--profile': this libenormoustext has no profile support yet "
			                   "(ENORMOUSTEXT_PROFILE is not one of its variables)");
			goto out;
		} else if (o >= OPT_TABLE && o < OPT_TABLE + ET_OPT__COUNT) {
			int id = o - OPT_TABLE;
			if ((id == ET_OPT_INCLUDE || id == ET_OPT_EXCLUDE) && c.val[id] && *optarg) {
				/* Repeated glob options add up: one colon-separated list. */
				size_t len = strlen(c.val[id]) + strlen(optarg) + 2;
				char *j = malloc(len);
				if (!j) {
					et_tool_err("out of memory");
					rc = ET_EXIT_BAD;
					goto out;
				}
				snprintf(j, len, "%s:%s", c.val[id], optarg);
				free(c.joined[id]);
				c.joined[id] = j;
				c.val[id] = j;
			} else {
				c.val[id] = optarg ? optarg : "1";
			}
		} else {
			rc = et_tool_bad_option(o, argv, optind);
			goto out;
		}
	}
	char vbuf[2] = { (char)('0' + (vcount > 3 ? 3 : vcount)), '\0' };
	if (vcount && !c.val[ET_OPT_VERBOSE])
		c.val[ET_OPT_VERBOSE] = vbuf;
	if (optind >= argc) {
		rc = et_tool_usage("no command to run: give it after the options, e.g. "
		                   "'enormoustext run --verbose 1 -- myprogram'");
		goto out;
	}

	/* Check every value with the library's own parser. */
	const char *accepts = "";
	int bad = et_tool_options_bad(c.val, &accepts);
	if (bad >= 0) {
		char name[40];
		long_name(t[bad].name, name, sizeof name);
		rc = et_tool_usage("option '--%s %s' is not valid: it accepts %s", name, c.val[bad], accepts);
		goto out;
	}
	/* The library only says at exit that it could not write the report:
	 * a directory that does not exist is worth saying now. */
	if (c.val[ET_OPT_REPORT] && *c.val[ET_OPT_REPORT]) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", c.val[ET_OPT_REPORT]);
		char *slash = strrchr(dir, '/');
		if (slash && !strchr(dir, '%')) {   /* %p is the library's to expand */
			if (slash == dir)
				slash[1] = '\0';
			else
				*slash = '\0';
			struct stat st;
			if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
				et_tool_err("--report %s: directory %s does not exist", c.val[ET_OPT_REPORT], dir);
				rc = ET_EXIT_BAD;
				goto out;
			}
		}
	}

	char *preload = et_tool_preload(lib_opt);
	if (!preload) {
		rc = ET_EXIT_BAD;
		goto out;
	}
	if (dry) {
		printf("LD_PRELOAD=");
		put_word(stdout, preload);
		putchar('\n');
		for (size_t i = 0; i < n && i < ET_OPT__COUNT; i++) {
			if (!c.val[i])
				continue;
			printf("%s=", t[i].name);
			put_word(stdout, c.val[i]);
			putchar('\n');
		}
		printf("exec");
		for (int i = optind; i < argc; i++) {
			putchar(' ');
			put_word(stdout, argv[i]);
		}
		putchar('\n');
		free(preload);
		goto out;
	}
	if (setenv("LD_PRELOAD", preload, 1) != 0) {
		et_tool_err("cannot set LD_PRELOAD: %s", strerror(errno));
		free(preload);
		rc = ET_EXIT_BAD;
		goto out;
	}
	free(preload);
	for (size_t i = 0; i < n && i < ET_OPT__COUNT; i++) {
		if (c.val[i] && setenv(t[i].name, c.val[i], 1) != 0) {
			et_tool_err("cannot set %s: %s", t[i].name, strerror(errno));
			rc = ET_EXIT_BAD;
			goto out;
		}
	}
	fflush(stdout);
	execvp(argv[optind], argv + optind);
	int e = errno;
	et_tool_err("%s: %s", argv[optind], e == ENOENT ? "command not found" : strerror(e));
	rc = e == ENOENT ? 127 : 126;
out:
	for (int i = 0; i < ET_OPT__COUNT; i++)
		free(c.joined[i]);
	return rc;
}
