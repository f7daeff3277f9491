/*
 * tools/enormoustext/main.c — the `enormoustext` command: dispatch to a
 * subcommand, and the top-level help.
 *
 * The subcommands' synopses are not written here: each subcommand's file
 * holds its options as a table (opts.h), and its usage lines, --help, the
 * man page's SYNOPSIS (`enormoustext __generate man-synopsis`) and the bash
 * completion (`__generate bash-completion`) are made from it.
 *
 * Owns: the list of subcommands and the top-level help; which subcommand
 * runs (et_tool_cmd, for the messages); `help COMMAND [SUBCOMMAND]`; the
 * hidden `__generate` (what opts.c makes of every table); the "did you
 * mean" of a mistyped command (by core/util.c's et_edit_distance).
 * May call: each subcommand's et_cmd_* and et_cmd_*_spec; opts.c; msg.c
 * (the usage messages).
 * Never: does a subcommand's work; defines anything another file calls
 * (tests/layout/command.sh: main.c dispatches, one file per subcommand,
 * which calls shared files only).
 */
#include "tool.h"
#include "opts.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const struct et_cmd_spec *(*spec)(void);
	const char *what;
} cmds[] = {
	{ "run", et_cmd_run, et_cmd_run_spec, "run a program with libenormoustext preloaded" },
	{ "stat", et_cmd_stat, et_cmd_stat_spec, "how much of a process's text is on huge pages, per object" },
	{ "check", et_cmd_check, et_cmd_check_spec, "can a program's or library's text go huge; how to make all of it" },
	{ "status", et_cmd_status, et_cmd_status_spec, "THP and hugetlb settings, probes, and the backend `auto` picks" },
	{ "setup", et_cmd_setup, et_cmd_setup_spec, "change the THP policy or the hugetlb pool (root)" },
	{ "perfmap", et_cmd_perfmap, et_cmd_perfmap_spec, "write /tmp/perf-PID.map naming the functions in moved text" },
	{ "prime", et_cmd_prime, et_cmd_prime_spec, "bring text into the page cache as huge folios (zero-copy huge text)" },
	{ "daemon", et_cmd_daemon, et_cmd_daemon_spec, "keep every running program's text huge in the page cache: no code in any process" },
	{ "align", et_cmd_align, et_cmd_align_spec, "opt a PIE executable in: its text 2 MiB-aligned, huge from the page cache (undoable)" },
	{ "oci-hook", et_cmd_oci_hook, et_cmd_oci_hook_spec, "an OCI runtime hook: prime a container's text before its first process runs" },
	{ "record", et_cmd_record, et_cmd_record_spec, "run a program and write a profile of where its threads execute" },
	{ "profile", et_cmd_profile, et_cmd_profile_spec, "show|merge|order|import: hot windows, sums, a link order, perf.data/pprof" },
	{ "collapse", et_cmd_collapse, et_cmd_collapse_spec, "put running processes' text or JIT code on huge pages, from outside" },
	{ "enable", et_cmd_enable, et_cmd_enable_spec, "turn the library on for a systemd service, or one program host-wide" },
	{ "disable", et_cmd_disable, et_cmd_disable_spec, "undo enable: exactly what it wrote goes, what was there comes back" },
	{ "compare", et_cmd_compare, et_cmd_compare_spec, "run a program plain and with the library, alternated: is it worth it here" },
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: enormoustext COMMAND [OPTIONS] [ARGS]\n"
	        "\n"
	        "Put program text on 2 MiB huge pages with libenormoustext, and see what is.\n"
	        "\n"
	        "commands:\n");
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].what);
	fprintf(f,
	        "\n"
	        "  enormoustext COMMAND --help   (or: enormoustext help COMMAND) for its options\n"
	        "  enormoustext help profile SUBCOMMAND   the same for `profile show` and the others\n"
	        "  enormoustext --version        the version\n"
	        "\n"
	        "Exit status: 0 done; 1 an input (PID, file, write) was bad; 2 usage error.\n"
	        "`run` exits with the status of the program it runs; `collapse` exits 1 also\n"
	        "when a range stayed small.\n");
}

/* A word that is no command: one line, with the nearest command when one
 * is near (a third of the word's letters off at most, 1 for a short one;
 * a swap of two letters counts 1: core/util.c's et_edit_distance, the one
 * the library's variables use); ET_EXIT_USAGE. */
static int not_a_command(const char *word)
{
	size_t limit = strlen(word) / 3 ? strlen(word) / 3 : 1;
	unsigned bd = UINT_MAX;
	const char *best = NULL;
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		unsigned d = et_edit_distance(word, cmds[i].name, false);
		if (d < bd) {
			bd = d;
			best = cmds[i].name;
		}
	}
	if (best && bd <= limit) {
		et_tool_err("'%s' is not a command; did you mean '%s'?", word, best);
		return ET_EXIT_USAGE;
	}
	return et_tool_usage("'%s' is not a command", word);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return ET_EXIT_USAGE;
	}
	const char *c = argv[1];
	if (!strcmp(c, "-h") || !strcmp(c, "--help")) {
		usage(stdout);
		return ET_EXIT_OK;
	}
	if (!strcmp(c, "--version") || !strcmp(c, "-V")) {
		printf("enormoustext %s\n", ENORMOUSTEXT_VERSION_STRING);
		return ET_EXIT_OK;
	}
	if (!strcmp(c, "help")) {
		if (argc < 3) {
			usage(stdout);
			return ET_EXIT_OK;
		}
		if (argc > 4)
			return et_tool_usage("help takes a COMMAND (and a subcommand of `profile`), not '%s'",
			                     argv[4]);
		for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
			if (!strcmp(argv[2], cmds[i].name)) {
				/* `help profile import`: the subcommand's own help */
				char *hargv[] = { argv[2], argc > 3 ? argv[3] : (char *)"--help",
					          argc > 3 ? (char *)"--help" : NULL, NULL };
				et_tool_cmd = cmds[i].name;
				return cmds[i].fn(argc > 3 ? 3 : 2, hargv);
			}
		}
		return not_a_command(argv[2]);
	}
	if (!strcmp(c, "__generate")) {
		/* for the build and the tests: not in the help */
		const struct et_cmd_spec *specs[sizeof cmds / sizeof *cmds + 1];
		for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
			specs[i] = cmds[i].spec();
		specs[sizeof cmds / sizeof *cmds] = NULL;
		if (argc != 3)
			return et_tool_usage("__generate takes one of options, synopsis, man-synopsis, "
			                     "bash-completion");
		return et_spec_generate(argv[2], specs);
	}
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		if (!strcmp(c, cmds[i].name)) {
			et_tool_cmd = cmds[i].name;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	}
	if (c[0] == '-')
		return et_tool_usage("unknown option '%s' (give a command first)", c);
	return not_a_command(c);
}
