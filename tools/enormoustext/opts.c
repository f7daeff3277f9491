/*
 * tools/enormoustext/opts.c — the command's options as data: the parser
 * every subcommand uses, its `--help`, and what `enormoustext __generate`
 * makes of the tables (the man page's SYNOPSIS, the bash completion, a
 * list for the tests).  See opts.h.
 *
 * The parser is getopt_long's grammar (--name VALUE, --name=VALUE, -X
 * VALUE, -XVALUE, bundled -sa, a unique prefix of a long name, "--" ends
 * the options, "-" is an operand; operands and options mixed unless the
 * table says `in_order`), with two rules getopt lacks: a value is never
 * "--" nor one of the command's own options (getopt made `run --prime --
 * cmd` mean ENORMOUSTEXT_PRIME=--), and a value with a list of choices is
 * one of them.
 *
 * Owns: the grammar of the command line, the layout of every --help, the
 * synopsis (one rule from the table to the usage line, plain and roff),
 * the completion file.
 * May call: msg.c (the usage messages), libc.
 * Never: knows a subcommand's options (their files hold the tables) or
 * checks a value beyond its choices (the subcommand does).
 */
#include "opts.h"
#include "tool.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define HELP_ID (-100)   /* -h, --help: every subcommand's, added here */

static const struct et_opt help_opt = { "help", 'h', NULL, "this help", HELP_ID, ET_OPTF_NOSYN, 0, 0, NULL,
	                                    ET_COMP_NONE };

/* Runs the code given for every option o of s, -h/--help last. */
#define FOR_OPTS(s, o, ...)                                                                       \
	do {                                                                                       \
		for (size_t sec_ = 0; sec_ < ET_SPEC_SECTIONS && (s)->sections[sec_].opts; sec_++) \
			for (const struct et_opt *o = (s)->sections[sec_].opts; o->name; o++) {    \
				__VA_ARGS__                                                         \
			}                                                                           \
		{                                                                                   \
			const struct et_opt *o = &help_opt;                                         \
			__VA_ARGS__                                                                 \
		}                                                                                   \
	} while (0)

/* ------------------------------------------------------------ parser */

void et_args_init(struct et_args *a, const struct et_cmd_spec *spec, int argc, char **argv)
{
	*a = (struct et_args){ .spec = spec, .argc = argc, .argv = argv, .i = 1, .ops = argv + 1 };
}

int et_args_exit(int r)
{
	return r == ET_ARGS_HELP ? ET_EXIT_OK : ET_EXIT_USAGE;
}

static char name_buf[80];

const char *et_args_name(const struct et_args *a)
{
	return name_buf[0] ? name_buf : (a->opt ? a->opt->name : "?");
}

static const struct et_opt *find_long(const struct et_args *a, const char *name, size_t len, int *nmatch,
                                      char *others, size_t ocap)
{
	const struct et_opt *exact = NULL, *pre = NULL;
	char none[1];
	*nmatch = 0;
	if (!ocap) {
		others = none;
		ocap = sizeof none;
	}
	others[0] = '\0';
	FOR_OPTS(a->spec, o, {
		if (!o->name[0])
			continue;   /* a short option alone */
		if (!exact && strlen(o->name) == len && !strncmp(o->name, name, len))
			exact = o;
		else if (!strncmp(o->name, name, len)) {
			pre = o;
			(*nmatch)++;
			size_t l = strlen(others);
			snprintf(others + l, ocap - l, "%s--%s", l ? ", " : "", o->name);
		}
	});
	if (exact) {
		*nmatch = 1;
		return exact;
	}
	return *nmatch == 1 ? pre : NULL;
}

static const struct et_opt *find_short(const struct et_args *a, char c)
{
	FOR_OPTS(a->spec, o, {
		if (o->short_name == c)
			return o;
	});
	return NULL;
}

static bool in_choices(const char *choices, const char *v)
{
	size_t n = strlen(v);
	for (const char *p = choices; *p;) {
		while (*p == ' ')
			p++;
		const char *e = strchr(p, ' ');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l && l == n && !strncmp(p, v, n))
			return true;
		p += l;
	}
	return false;
}

/* "always, madvise or never" */
static void choices_words(const char *choices, char *out, size_t cap)
{
	size_t n = 0, k = 0, total = 0;
	for (const char *p = choices; *p; p++)
		total += (*p != ' ' && (p == choices || p[-1] == ' '));
	out[0] = '\0';
	for (const char *p = choices; *p;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, ' ');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		k++;
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%.*s",
		                      k == 1 ? "" : k == total ? " or " : ", ", (int)l, p);
		if (n >= cap)
			break;
		p += l;
	}
}

/* A word taken as a value: never "--", never one of this command's long
 * options (the value was forgotten). */
static int value_ok(struct et_args *a, const char *w)
{
	if (!strcmp(w, "--"))
		return et_tool_usage("option '%s' needs a value before '--'", name_buf);
	if (w[0] == '-' && w[1] == '-' && w[2]) {
		const char *eq = strchr(w + 2, '=');
		size_t len = eq ? (size_t)(eq - (w + 2)) : strlen(w + 2);
		int nm;
		const struct et_opt *o = find_long(a, w + 2, len, &nm, NULL, 0);
		if (o && o->name && strlen(o->name) == len)
			return et_tool_usage("option '%s' needs a value ('%s' is an option)", name_buf, w);
	}
	return 0;
}

static int take(struct et_args *a, const struct et_opt *o, const char *val)
{
	a->opt = o;
	a->val = val;
	if (o->id == HELP_ID) {
		et_spec_help(stdout, a->spec);
		return ET_ARGS_HELP;
	}
	if (val && o->choices && !(o->flags & ET_OPTF_HINTS) && !in_choices(o->choices, val)) {
		char w[256];
		choices_words(o->choices, w, sizeof w);
		et_tool_usage("option '%s' takes %s, not '%s'", name_buf, w, val);
		return ET_ARGS_BAD;
	}
	if (o->group && o->group < 16) {
		const struct et_opt *g = a->in_group[o->group];
		if (g && g != o) {
			et_tool_usage("give --%s or --%s, not both", g->name, o->name);
			return ET_ARGS_BAD;
		}
		a->in_group[o->group] = o;
	}
	return o->id;
}

/* The next word as the value of the option in name_buf. */
static int next_value(struct et_args *a, const char **val)
{
	if (a->i >= a->argc) {
		et_tool_usage("option '%s' needs a value", name_buf);
		return ET_ARGS_BAD;
	}
	const char *w = a->argv[a->i];
	if (value_ok(a, w))
		return ET_ARGS_BAD;
	a->i++;
	*val = w;
	return 0;
}

static int next_short(struct et_args *a)
{
	char c = *a->bundle++;
	snprintf(name_buf, sizeof name_buf, "-%c", c);
	const struct et_opt *o = find_short(a, c);
	if (!o) {
		a->bundle = NULL;
		et_tool_usage("unknown option '-%c'", c);
		return ET_ARGS_BAD;
	}
	const char *val = NULL;
	if (o->arg && !(o->flags & ET_OPTF_OPTVAL)) {
		if (*a->bundle) {
			val = a->bundle;
		} else if (next_value(a, &val)) {
			a->bundle = NULL;
			return ET_ARGS_BAD;
		}
		a->bundle = NULL;
	}
	if (a->bundle && !*a->bundle)
		a->bundle = NULL;
	return take(a, o, val);
}

int et_args_next(struct et_args *a)
{
	a->val = NULL;
	a->opt = NULL;
	name_buf[0] = '\0';
	if (a->bundle)
		return next_short(a);
	while (a->i < a->argc) {
		char *w = a->argv[a->i];
		if (a->done || w[0] != '-' || w[1] == '\0') {
			/* an operand: moved down to the front (its slot is free) */
			a->ops[a->nops++] = w;
			a->i++;
			if (a->spec->in_order)
				a->done = true;
			continue;
		}
		a->i++;
		if (!strcmp(w, "--")) {
			a->done = true;
			continue;
		}
		if (w[1] != '-') {
			a->bundle = w + 1;
			return next_short(a);
		}
		const char *name = w + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		int nm;
		char others[256];
		const struct et_opt *o = find_long(a, name, len, &nm, others, sizeof others);
		snprintf(name_buf, sizeof name_buf, "--%.*s", (int)len, name);
		if (!o) {
			if (nm > 1)
				et_tool_usage("option '%s' is ambiguous: %s", name_buf, others);
			else
				et_tool_usage("unknown option '%s'", name_buf);
			return ET_ARGS_BAD;
		}
		snprintf(name_buf, sizeof name_buf, "--%s", o->name);
		if (!o->arg) {
			if (eq) {
				et_tool_usage("option '%s' takes no value", name_buf);
				return ET_ARGS_BAD;
			}
			return take(a, o, NULL);
		}
		const char *val = NULL;
		if (eq)
			val = eq + 1;
		else if (!(o->flags & ET_OPTF_OPTVAL) && next_value(a, &val))
			return ET_ARGS_BAD;
		return take(a, o, val);
	}
	if (a->nops < a->argc)
		a->ops[a->nops] = NULL;   /* argv's end moved down too: execvp takes a->ops */
	return ET_ARGS_END;
}

/* ---------------------------------------------------------- synopsis */

/* The synopsis of a form as items ("[--json | --prometheus]", "[-o FILE]",
 * "PID..."), each written by put(). */
typedef void (*item_fn)(void *ctx, const char *item);

static void opt_word(char *out, size_t cap, const struct et_opt *o, bool for_list)
{
	size_t n;
	if (!o->name[0] || (!for_list && o->short_name && (o->flags & ET_OPTF_SHORT)))
		n = (size_t)snprintf(out, cap, "-%c", o->short_name);
	else
		n = (size_t)snprintf(out, cap, "--%s", o->name);
	if (o->arg && n < cap)
		snprintf(out + n, cap - n, (o->flags & ET_OPTF_OPTVAL) ? "[=%s]" : " %s", o->arg);
}

static bool in_form(const struct et_opt *o, unsigned form)
{
	return !(o->flags & ET_OPTF_NOSYN) && (!o->forms || (o->forms & (1u << form)));
}

static void form_items(const struct et_cmd_spec *s, unsigned form, item_fn put, void *ctx)
{
	char item[512];
	const struct et_form *fm = &s->forms[form];
	if (fm->lead)
		put(ctx, fm->lead);
	bool group_done[256] = { false };
	for (size_t sec = 0; sec < ET_SPEC_SECTIONS && s->sections[sec].opts; sec++) {
		if (s->sections[sec].synopsis) {
			put(ctx, s->sections[sec].synopsis);
			continue;
		}
		for (const struct et_opt *o = s->sections[sec].opts; o->name; o++) {
			if (!in_form(o, form))
				continue;
			if (o->group) {
				if (group_done[o->group])
					continue;
				group_done[o->group] = true;
				bool req = false;
				char alt[480];
				size_t n = 0;
				alt[0] = '\0';
				for (size_t s2 = sec; s2 < ET_SPEC_SECTIONS && s->sections[s2].opts; s2++)
					for (const struct et_opt *p = s2 == sec ? o : s->sections[s2].opts; p->name; p++) {
						if (p->group != o->group || !in_form(p, form))
							continue;
						char w[128];
						opt_word(w, sizeof w, p, false);
						n += (size_t)snprintf(alt + n, n < sizeof alt ? sizeof alt - n : 0, "%s%s",
						                      n ? " | " : "", w);
						req |= (p->flags & ET_OPTF_REQUIRED) != 0;
					}
				snprintf(item, sizeof item, req ? "%s" : "[%s]", alt);
				put(ctx, item);
				continue;
			}
			char w[128];
			opt_word(w, sizeof w, o, false);
			snprintf(item, sizeof item, (o->flags & ET_OPTF_REQUIRED) ? "%s%s" : "[%s]%s", w,
			         (o->flags & ET_OPTF_REPEAT) ? "..." : "");
			put(ctx, item);
		}
	}
	if (fm->operands)
		put(ctx, fm->operands);
}

/* A form is there when it has operands or options of its own. */
static size_t nforms(const struct et_cmd_spec *s)
{
	size_t n = 0;
	for (size_t k = 0; k < ET_SPEC_FORMS; k++) {
		bool used = s->forms[k].lead || s->forms[k].operands;
		for (size_t sec = 0; !used && sec < ET_SPEC_SECTIONS && s->sections[sec].opts; sec++)
			for (const struct et_opt *o = s->sections[sec].opts; o->name && !used; o++)
				used = (o->forms >> k) & 1;
		if (used)
			n = k + 1;
	}
	return n ? n : 1;   /* a command with no operand has one form all the same */
}

struct wrap {
	FILE *f;
	size_t col, indent;
};

static void wrap_put(void *ctx, const char *item)
{
	struct wrap *w = ctx;
	size_t len = strlen(item);
	if (w->col + 1 + len > 79 && w->col > w->indent) {
		fprintf(w->f, "\n%*s", (int)w->indent, "");
		w->col = w->indent;
	} else {
		fputc(' ', w->f);
		w->col++;
	}
	fprintf(w->f, "%.*s", (int)len, item);
	w->col += len;
}

static void usage_of(FILE *f, const struct et_cmd_spec *s, bool *first)
{
	for (size_t k = 0; k < nforms(s); k++) {
		const char *pre = *first ? "usage:" : "      ";
		*first = false;
		fprintf(f, "%s enormoustext %s", pre, s->name);
		struct wrap w = { f, strlen(pre) + strlen(" enormoustext ") + strlen(s->name), 0 };
		w.indent = w.col + 1;
		form_items(s, (unsigned)k, wrap_put, &w);
		fputc('\n', f);
	}
}

void et_spec_usage(FILE *f, const struct et_cmd_spec *s, bool first)
{
	bool fst = first;
	if (s->subs[0]) {
		for (size_t i = 0; i < ET_SPEC_SUBS && s->subs[i]; i++)
			usage_of(f, s->subs[i], &fst);
		return;
	}
	usage_of(f, s, &fst);
}

/* ------------------------------------------------------------- help */

static size_t left_len(const struct et_opt *o)
{
	char w[128];
	opt_word(w, sizeof w, o, true);
	return 2 + 4 + strlen(w);
}

static void help_line(FILE *f, const struct et_cmd_spec *s, const struct et_opt *o, size_t col)
{
	char w[128], left[160];
	opt_word(w, sizeof w, o, true);
	if (!o->name[0])
		snprintf(left, sizeof left, "  %s", w);   /* a short option alone */
	else if (o->short_name)
		snprintf(left, sizeof left, "  -%c, %s", o->short_name, w);
	else
		snprintf(left, sizeof left, "      %s", w);
	fputs(left, f);
	size_t at = strlen(left);
	if (at + 2 > col) {
		fputc('\n', f);
		at = 0;
	}
	char d[200], text[2048];
	const char *dv = s->dflt && o->id != HELP_ID ? s->dflt(o->id, d, sizeof d) : NULL;
	snprintf(text, sizeof text, "%s%s%s%s", o->help ? o->help : "", dv ? " (default " : "", dv ? dv : "",
	         dv ? ")" : "");
	/* the text flows: its newlines are spaces, its lines as wide as fits */
	for (char *q = text; *q; q++)
		if (*q == '\n')
			*q = ' ';
	size_t width = col < 50 ? 79 - col : 29;
	const char *p = text;
	do {
		size_t l = strlen(p);
		if (l > width) {
			size_t k = width;
			while (k > 0 && p[k] != ' ')
				k--;
			if (k == 0)    /* a word longer than the line: whole, up to the next space */
				for (k = width; p[k] && p[k] != ' '; k++)
					;
			l = k;
		}
		fprintf(f, "%*s%.*s\n", (int)(col - at), "", (int)l, p);
		at = 0;
		p += l;
		while (*p == ' ')
			p++;
	} while (*p);
}

void et_spec_help(FILE *f, const struct et_cmd_spec *s)
{
	et_spec_usage(f, s, true);
	if (s->about_fn) {
		fputc('\n', f);
		s->about_fn(f);
	} else if (s->about) {
		fprintf(f, "\n%s", s->about);
	}
	size_t col = 0;
	FOR_OPTS(s, o, {
		size_t l = left_len(o) + 2;
		if (l <= 26 && l > col)
			col = l;
	});
	size_t nsec = 0;
	while (nsec < ET_SPEC_SECTIONS && s->sections[nsec].opts)
		nsec++;
	for (size_t i = 0; i < nsec; i++) {
		fprintf(f, "\n%s\n", s->sections[i].title ? s->sections[i].title : "options:");
		for (const struct et_opt *o = s->sections[i].opts; o->name; o++)
			help_line(f, s, o, col);
	}
	if (!nsec)
		fputc('\n', f);
	help_line(f, s, &help_opt, col);
	if (s->tail)
		fprintf(f, "\n%s", s->tail);
}

/* ------------------------------------------------------- __generate */

static void list_options(const struct et_cmd_spec *s)
{
	FOR_OPTS(s, o, {
		char sh[3] = { '-', o->short_name, '\0' };
		printf("%s\t%s%s\t%s\t%s\n", s->name, o->name[0] ? "--" : "", o->name, o->short_name ? sh : "",
		       o->arg ? o->arg : "");
	});
}

/* roff: an item of the synopsis, each word by its kind: an option or a
 * literal value bold, a VALUE's name italic and in lower case, the
 * brackets, bars and dots roman. */
static void roff_put(void *ctx, const char *item)
{
	(void)ctx;
	size_t len = strlen(item);
	if (item[0] == '.')
		fputs("\\&", stdout);   /* not a request */
	for (size_t i = 0; i < len;) {
		char c = item[i];
		if (c == '-' || islower((unsigned char)c) || isupper((unsigned char)c)) {
			size_t j = i;
			bool upper = isupper((unsigned char)c) != 0;
			while (j < len && (isalnum((unsigned char)item[j]) || item[j] == '-' || item[j] == '_' ||
			                   item[j] == '+' || (upper && item[j] == '=')))
				j++;
			fputs(upper ? "\\fI" : "\\fB", stdout);
			for (size_t k = i; k < j; k++) {
				if (item[k] == '-')
					fputs("\\-", stdout);
				else
					putchar(upper ? tolower((unsigned char)item[k]) : item[k]);
			}
			fputs("\\fR", stdout);
			i = j;
		} else {
			putchar(c);
			i++;
		}
	}
	putchar('\n');
}

static void man_synopsis_of(const struct et_cmd_spec *s)
{
	for (size_t k = 0; k < nforms(s); k++) {
		printf(".B enormoustext %s\n", s->name);
		form_items(s, (unsigned)k, roff_put, NULL);
		printf(".br\n");
	}
}

static const char *comp_word(enum et_comp c)
{
	switch (c) {
	case ET_COMP_FILE: return "file";
	case ET_COMP_DIR: return "dir";
	case ET_COMP_PID: return "pid";
	case ET_COMP_COMMAND: return "command";
	case ET_COMP_UNIT: return "unit";
	case ET_COMP_COMMANDS: return "commands";
	default: return "none";
	}
}

static void bash_spec(const struct et_cmd_spec *s)
{
	printf("\t'%s')\n\t\topts='", s->name);
	bool sp = false;
	FOR_OPTS(s, o, {
		if (o->name[0]) {
			printf("%s--%s", sp ? " " : "", o->name);
			sp = true;
		}
		if (o->short_name) {
			printf("%s-%c", sp ? " " : "", o->short_name);
			sp = true;
		}
	});
	printf("'\n\t\tvals='");
	sp = false;
	FOR_OPTS(s, o, {
		if (o->arg && !(o->flags & ET_OPTF_OPTVAL)) {
			if (o->name[0]) {
				printf("%s--%s", sp ? " " : "", o->name);
				sp = true;
			}
			if (o->short_name) {
				printf("%s-%c", sp ? " " : "", o->short_name);
				sp = true;
			}
		}
	});
	printf("'\n\t\toperand=%s order=%d ;;\n", comp_word(s->operand), s->in_order ? 1 : 0);
}

static void bash_values(const struct et_cmd_spec *s)
{
	FOR_OPTS(s, o, {
		if (!o->arg)
			continue;
		if (o->name[0])
			printf("\t'%s --%s'", s->name, o->name);
		if (o->short_name)
			printf("%s'%s -%c'", o->name[0] ? " | " : "\t", s->name, o->short_name);
		if (o->choices)
			printf(") _enormoustext_words '%s' ;;\n", o->choices);
		else
			printf(") _enormoustext_complete %s ;;\n", comp_word(o->comp));
	});
}

static void each_spec(const struct et_cmd_spec *const *cmds, void (*fn)(const struct et_cmd_spec *))
{
	for (size_t i = 0; cmds[i]; i++) {
		if (cmds[i]->subs[0]) {
			for (size_t k = 0; k < ET_SPEC_SUBS && cmds[i]->subs[k]; k++)
				fn(cmds[i]->subs[k]);
		} else {
			fn(cmds[i]);
		}
	}
}

static void bash_completion(const struct et_cmd_spec *const *cmds)
{
	printf("# bash completion for enormoustext(1)                          -*- shell-script -*-\n"
	       "#\n"
	       "# Made from the command's option tables by `enormoustext __generate\n"
	       "# bash-completion` (tools/enormoustext/opts.c): do not edit it, make it again.\n"
	       "# tests/tools/help.sh checks that it is the command's.  Installed as\n"
	       "# share/bash-completion/completions/enormoustext.\n"
	       "\n"
	       "# shellcheck shell=bash\n"
	       "_enormoustext_words()\n"
	       "{\n"
	       "\tlocal IFS=$' \\t\\n'\n"
	       "\t# shellcheck disable=SC2207\n"
	       "\tCOMPREPLY+=($(compgen -W \"$1\" -- \"$cur\"))\n"
	       "}\n"
	       "\n"
	       "_enormoustext_complete()\n"
	       "{\n"
	       "\tlocal IFS=$'\\n'\n"
	       "\tcase $1 in\n"
	       "\tfile)\n"
	       "\t\tcompopt -o filenames 2>/dev/null\n"
	       "\t\t# shellcheck disable=SC2207\n"
	       "\t\tCOMPREPLY+=($(compgen -f -- \"$cur\")) ;;\n"
	       "\tdir)\n"
	       "\t\tcompopt -o filenames 2>/dev/null\n"
	       "\t\t# shellcheck disable=SC2207\n"
	       "\t\tCOMPREPLY+=($(compgen -d -- \"$cur\")) ;;\n"
	       "\tpid)\n"
	       "\t\t# not a kernel thread's (PF_KTHREAD in its flags): stat refuses those\n"
	       "\t\tlocal p s w=()\n"
	       "\t\tfor p in /proc/[0-9]*; do\n"
	       "\t\t\tread -r s 2>/dev/null <\"$p/stat\" || continue\n"
	       "\t\t\tIFS=' ' read -ra s <<<\"${s##*) }\"\n"
	       "\t\t\t(( ${s[6]:-0} & 0x200000 )) || w+=(\"${p#/proc/}\")\n"
	       "\t\tdone\n"
	       "\t\t_enormoustext_words \"${w[*]}\" ;;\n"
	       "\tunit)\n"
	       "\t\t_enormoustext_words \"$(systemctl list-unit-files --type=service --no-legend --plain 2>/dev/null |\n"
	       "\t\t\tsed -n 's/^\\([^ @]*\\)\\.service .*/\\1/p')\" ;;\n"
	       "\tcommand)\n"
	       "\t\t# shellcheck disable=SC2207\n"
	       "\t\tCOMPREPLY+=($(compgen -c -- \"$cur\")) ;;\n"
	       "\tcommands)\n"
	       "\t\t_enormoustext_words \"$_enormoustext_commands\" ;;\n"
	       "\tesac\n"
	       "}\n"
	       "\n"
	       "_enormoustext_commands='");
	for (size_t i = 0; cmds[i]; i++)
		printf("%s%s", i ? " " : "", cmds[i]->name);
	printf("'\n"
	       "\n"
	       "# The table of a (sub)command: its options, those that take a value,\n"
	       "# what its operands are, whether its options end at the first operand.\n"
	       "_enormoustext_spec()\n"
	       "{\n"
	       "\tcase $1 in\n");
	for (size_t i = 0; cmds[i]; i++)
		if (cmds[i]->subs[0]) {
			printf("\t'%s')\n\t\topts='", cmds[i]->name);
			for (size_t k = 0; k < ET_SPEC_SUBS && cmds[i]->subs[k]; k++)
				printf("%s ", cmds[i]->subs[k]->name + strlen(cmds[i]->name) + 1);
			printf("--help -h'\n\t\tvals=''\n\t\toperand=none order=0 ;;\n");
		}
	each_spec(cmds, bash_spec);
	printf("\t*) return 1 ;;\n"
	       "\tesac\n"
	       "}\n"
	       "\n"
	       "# The value of an option: $1 the (sub)command, $2 the option.\n"
	       "_enormoustext_value()\n"
	       "{\n"
	       "\tcase \"$1 $2\" in\n");
	each_spec(cmds, bash_values);
	printf("\tesac\n"
	       "}\n"
	       "\n"
	       "_enormoustext()\n"
	       "{\n"
	       "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev='' key first=2 i w o='' opts vals operand order\n"
	       "\tCOMPREPLY=()\n"
	       "\t[ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
	       "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	       "\t\tif [[ $cur == -* ]]; then _enormoustext_words '--help -h --version -V'\n"
	       "\t\telse _enormoustext_words \"$_enormoustext_commands help\"; fi\n"
	       "\t\treturn\n"
	       "\tfi\n"
	       "\tkey=${COMP_WORDS[1]}\n"
	       "\tif [ \"$key\" = help ]; then\n"
	       "\t\t[ \"$COMP_CWORD\" -eq 2 ] && _enormoustext_complete commands\n"
	       "\t\treturn\n"
	       "\tfi\n"
	       "\t_enormoustext_spec \"$key\" || return\n"
	       "\tif [ \"$COMP_CWORD\" -gt 2 ] && _enormoustext_spec \"$key ${COMP_WORDS[2]}\"; then\n"
	       "\t\tkey=\"$key ${COMP_WORDS[2]}\"\n"
	       "\t\tfirst=3\n"
	       "\tfi\n"
	       "\t# --name=VALUE: bash splits it at the '='\n"
	       "\tif [ \"$cur\" = = ]; then\n"
	       "\t\to=$prev\n"
	       "\t\tcur=''\n"
	       "\telif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -gt 2 ]; then\n"
	       "\t\to=${COMP_WORDS[COMP_CWORD - 2]}\n"
	       "\telif [[ \" $vals \" == *\" $prev \"* ]]; then\n"
	       "\t\to=$prev\n"
	       "\tfi\n"
	       "\tif [ \"$order\" = 1 ]; then\n"
	       "\t\t# options end at the first operand: the COMMAND and its arguments\n"
	       "\t\tfor ((i = first; i < COMP_CWORD; i++)); do\n"
	       "\t\t\tw=${COMP_WORDS[i]}\n"
	       "\t\t\tif [ \"$w\" = -- ]; then i=$((i + 1)); break; fi\n"
	       "\t\t\tif [[ \" $vals \" == *\" $w \"* ]]; then i=$((i + 1)); continue; fi\n"
	       "\t\t\t[[ $w == -* || $w == = ]] && continue\n"
	       "\t\t\t[ \"${COMP_WORDS[i - 1]}\" = = ] && continue\n"
	       "\t\t\tbreak\n"
	       "\t\tdone\n"
	       "\t\tif [ \"$i\" -lt \"$COMP_CWORD\" ] || [ \"$prev\" = -- ]; then\n"
	       "\t\t\t[ \"$prev\" = -- ] && i=$COMP_CWORD\n"
	       "\t\t\tif declare -F _command_offset >/dev/null; then\n"
	       "\t\t\t\t_command_offset \"$i\"\n"
	       "\t\t\telif [ \"$i\" -eq \"$COMP_CWORD\" ]; then\n"
	       "\t\t\t\t_enormoustext_complete command\n"
	       "\t\t\telse\n"
	       "\t\t\t\t_enormoustext_complete file\n"
	       "\t\t\tfi\n"
	       "\t\t\treturn\n"
	       "\t\tfi\n"
	       "\tfi\n"
	       "\tif [ -n \"$o\" ]; then\n"
	       "\t\t_enormoustext_value \"$key\" \"$o\"\n"
	       "\t\treturn\n"
	       "\tfi\n"
	       "\tif [[ $cur == -* ]]; then\n"
	       "\t\t_enormoustext_words \"$opts\"\n"
	       "\t\treturn\n"
	       "\tfi\n"
	       "\tif [ \"$first\" = 2 ] && [ \"$COMP_CWORD\" -eq 2 ] && [ \"$key\" = profile ]; then\n"
	       "\t\t_enormoustext_words \"$opts\"\n"
	       "\t\treturn\n"
	       "\tfi\n"
	       "\t_enormoustext_complete \"$operand\"\n"
	       "}\n"
	       "complete -F _enormoustext enormoustext\n");
}

static void synopsis_plain(const struct et_cmd_spec *s)
{
	bool first = false;
	usage_of(stdout, s, &first);
}

int et_spec_generate(const char *what, const struct et_cmd_spec *const *cmds)
{
	if (!strcmp(what, "options")) {
		each_spec(cmds, list_options);
	} else if (!strcmp(what, "synopsis")) {
		each_spec(cmds, synopsis_plain);
	} else if (!strcmp(what, "man-synopsis")) {
		each_spec(cmds, man_synopsis_of);
		printf(".B enormoustext\n[\\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR]\n"
		       ".br\n.B enormoustext help\n\\fIcommand\\fR\n");
	} else if (!strcmp(what, "bash-completion")) {
		bash_completion(cmds);
	} else {
		return et_tool_usage("__generate: options, synopsis, man-synopsis or bash-completion, not '%s'",
		                     what);
	}
	return fflush(stdout) == 0 ? ET_EXIT_OK : ET_EXIT_BAD;
}
