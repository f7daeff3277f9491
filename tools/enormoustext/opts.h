/*
 * opts.h — the command's options as data (opts.c): one table per
 * subcommand, and from it the parser, `--help` (the usage lines and the
 * list of options), the man page's SYNOPSIS and the bash completion file
 * (`enormoustext __generate`, which main.c runs), so that they cannot
 * disagree.  git's parse_options, with the synopsis made from the table
 * too.
 *
 * A subcommand's file holds its table (struct et_cmd_spec) and gives it
 * to main.c through et_cmd_NAME_spec(); its prose (what it does, the exit
 * statuses) stays beside the table, the options' help in it.  `run`
 * builds its table at run time from the library's option table
 * (core/options.c): one option per variable.
 */
#ifndef ET_TOOL_OPTS_H
#define ET_TOOL_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What completes a value (an option's or an operand): for the bash
 * completion only. */
enum et_comp {
	ET_COMP_NONE = 0,   /* nothing to offer (a number, a name) */
	ET_COMP_FILE,       /* file names */
	ET_COMP_DIR,        /* directory names */
	ET_COMP_PID,        /* process ids (/proc) */
	ET_COMP_COMMAND,    /* a command line: a command, then its arguments */
	ET_COMP_UNIT,       /* a systemd service */
	ET_COMP_COMMANDS,   /* one of the subcommands (`help`) */
};

enum {
	ET_OPTF_REQUIRED = 1u << 0,  /* not optional in its forms: no brackets in the synopsis */
	ET_OPTF_REPEAT = 1u << 1,    /* may be given more than once: "..." after it */
	ET_OPTF_SHORT = 1u << 2,     /* the synopsis shows -X VALUE rather than --NAME VALUE */
	ET_OPTF_NOSYN = 1u << 3,     /* in the list of options, not in the synopsis */
	ET_OPTF_OPTVAL = 1u << 4,    /* the value is optional and goes after '=' (--top-only[=BOOL]) */
	ET_OPTF_HINTS = 1u << 5,     /* its choices are offered by the completion, not checked here
	                              * (`run`: the library's parser checks them) */
};

struct et_opt {
	const char *name;        /* the long name, without "--"; NULL ends a table */
	char short_name;         /* -X; 0: none */
	const char *arg;         /* the value's name (FILE, PID, ...); NULL: takes none */
	const char *help;        /* its lines, '\n' between them (longer ones are wrapped) */
	int id;                  /* what et_args_next returns for it (> 0) */
	unsigned flags;          /* ET_OPTF_* */
	unsigned char group;     /* options of one nonzero group (< 16) exclude each other:
	                          * [--a | --b] in the synopsis, an error from the parser */
	unsigned char forms;     /* which usage forms show it: bit 0 the first (0: every form) */
	const char *choices;     /* the values it takes, space-separated (NULL: any): the parser
	                          * refuses others, the completion offers them */
	enum et_comp comp;       /* what completes its value */
};

/* One usage form: "enormoustext NAME LEAD [options of the form] OPERANDS". */
struct et_form {
	const char *lead;        /* operands before the options (enable UNIT ...), or NULL */
	const char *operands;    /* after them ("PID...", "[--] COMMAND [ARGS...]"), or NULL */
};

struct et_opt_section {
	const char *title;       /* "options:", "library options (...):" */
	const struct et_opt *opts;   /* NULL ends the sections */
	const char *synopsis;    /* the synopsis shows this instead of its options, or NULL */
};

#define ET_SPEC_FORMS 4
#define ET_SPEC_SECTIONS 4
#define ET_SPEC_SUBS 8

struct et_cmd_spec {
	const char *name;        /* "stat", "profile show" */
	struct et_form forms[ET_SPEC_FORMS];   /* lead and operands NULL in every one: the end */
	const char *about;       /* printed after the usage lines (a paragraph or more) */
	void (*about_fn)(FILE *f);   /* or this, for a text with figures known at build time only */
	struct et_opt_section sections[ET_SPEC_SECTIONS];
	const char *tail;        /* printed after the options (exit status, notes), or NULL */
	/* A default to add to an option's help, known at run time only (this
	 * system's PMD size): written into buf, or NULL for none. */
	const char *(*dflt)(int id, char *buf, size_t cap);
	enum et_comp operand;    /* what completes an operand */
	bool in_order;           /* options end at the first operand (COMMAND follows) */
	/* The subcommands of a command that has them (`profile`), NULL-ended:
	 * each has its own table; this one's forms are not used. */
	const struct et_cmd_spec *subs[ET_SPEC_SUBS];
};

/* ------------------------------------------------------------ parser */

enum {
	ET_ARGS_END = 0,         /* no more options: the operands are a.ops[0..a.nops) */
	ET_ARGS_HELP = -1,       /* -h or --help: the help was printed (exit 0) */
	ET_ARGS_BAD = -2,        /* a usage error: one line said what (exit 2) */
};

struct et_args {
	const struct et_cmd_spec *spec;
	int argc;
	char **argv;
	int i;                   /* the next word */
	const char *bundle;      /* the rest of a word of short options (-sa) */
	const char *val;         /* the value of the option just returned, NULL for none */
	const struct et_opt *opt;    /* the option just returned */
	bool done;               /* "--", or in order and an operand seen */
	const struct et_opt *in_group[16];   /* the option given of each group */
	char **ops;              /* the operands (in argv itself, moved to its front) */
	int nops;
};

/* argv[0] is the subcommand's name (skipped). */
void et_args_init(struct et_args *a, const struct et_cmd_spec *spec, int argc, char **argv);
/* The id of the next option (a->val its value), or ET_ARGS_END / ET_ARGS_HELP
 * / ET_ARGS_BAD.  A value is never "--" nor another option of this command
 * (`run --prime -- cmd` is an error, not --prime=--); one with choices is
 * one of them. */
int et_args_next(struct et_args *a);
/* What a subcommand returns for ET_ARGS_HELP or ET_ARGS_BAD: 0 or 2. */
int et_args_exit(int r);
/* The option's name as the user gave it ("--output" or "-o"), for messages. */
const char *et_args_name(const struct et_args *a);

/* ------------------------------------------------------------ output */

/* The help: usage lines, about, the options, the tail. */
void et_spec_help(FILE *f, const struct et_cmd_spec *s);
/* The usage lines alone: "usage: enormoustext ..." first when `first`,
 * every line aligned under it. */
void et_spec_usage(FILE *f, const struct et_cmd_spec *s, bool first);

/* `enormoustext __generate WHAT`, for the build and the tests (not in the
 * help): "options" (one line per option: COMMAND TAB --NAME TAB -X TAB
 * VALUE), "synopsis" (the usage lines, plain), "man-synopsis" (the man
 * page's SYNOPSIS, roff), "bash-completion" (the completion file).  cmds:
 * the subcommands' tables, NULL-ended. */
int et_spec_generate(const char *what, const struct et_cmd_spec *const *cmds);

#endif
