/*
 * tools/enormoustext/main.c — the `enormoustext` command: dispatch to a
 * subcommand, and the top-level help.
 *
 *   enormoustext run [options] [--] CMD [ARGS...]
 *   enormoustext stat [--json] [--summary] [--all | PID...]
 *   enormoustext check [--json] FILE...
 *   enormoustext status [--json]
 *   enormoustext setup [--thp MODE] [--defrag MODE] [--hugetlb-pages N] [--dry-run]
 *   enormoustext perfmap PID
 *   enormoustext prime [--check] [--json] FILE...
 *   enormoustext record -o FILE -- COMMAND...
 *   enormoustext profile show|merge|order|import ...
 *   enormoustext collapse [--jit] [--profile FILE] [--dry-run] [--watch SECONDS] [--json] PID...
 *   enormoustext enable UNIT [--env NAME=VALUE]... [--prime] | --binary PATH [--dry-run] [--root DIR]
 *   enormoustext disable UNIT | --binary PATH [--dry-run] [--root DIR]
 *
 * Owns: the list of subcommands and the top-level help; which subcommand
 * runs (et_tool_cmd, for the messages).
 * May call: each subcommand's et_cmd_*; msg.c (the usage messages).
 * Never: does a subcommand's work; defines anything another file calls
 * (tests/layout/command.sh: main.c dispatches, one file per subcommand,
 * which calls shared files only).
 */
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *what;
} cmds[] = {
	{ "run", et_cmd_run, "run a program with libenormoustext preloaded" },
	{ "stat", et_cmd_stat, "how much of a process's text is on huge pages, per object" },
	{ "check", et_cmd_check, "can a program's or library's text go huge; how to make all of it" },
	{ "status", et_cmd_status, "THP and hugetlb settings, probes, and the backend `auto` picks" },
	{ "setup", et_cmd_setup, "change the THP policy or the hugetlb pool (root)" },
	{ "perfmap", et_cmd_perfmap, "write /tmp/perf-PID.map naming the functions in moved text" },
	{ "prime", et_cmd_prime, "bring text into the page cache as huge folios (zero-copy huge text)" },
	{ "record", et_cmd_record, "run a program and write a profile of where its threads execute" },
	{ "profile", et_cmd_profile, "show|merge|order|import: hot windows, sums, a link order, perf.data/pprof" },
	{ "collapse", et_cmd_collapse, "put running processes' text or JIT code on huge pages, from outside" },
	{ "enable", et_cmd_enable, "turn the library on for a systemd service, or one program host-wide" },
	{ "disable", et_cmd_disable, "undo enable: exactly what it wrote goes, what was there comes back" },
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
	        "  enormoustext --version        the version\n"
	        "\n"
	        "Exit status: 0 done; 1 an input (PID, file, write) was bad; 2 usage error.\n"
	        "`run` exits with the status of the program it runs; `collapse` exits 1 also\n"
	        "when a range stayed small.\n");
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
		for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
			if (!strcmp(argv[2], cmds[i].name)) {
				char *hargv[] = { argv[2], (char *)"--help", NULL };
				et_tool_cmd = cmds[i].name;
				return cmds[i].fn(2, hargv);
			}
		}
		return et_tool_usage("no command '%s'", argv[2]);
	}
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		if (!strcmp(c, cmds[i].name)) {
			et_tool_cmd = cmds[i].name;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	}
	if (c[0] == '-')
		return et_tool_usage("unknown option '%s' (give a command first)", c);
	return et_tool_usage("no command '%s'", c);
}
