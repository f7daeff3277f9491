/*
 * tools/enormoustext/check.c — `enormoustext check [--json] [--pmd-size SIZE]
 * [--pad-threshold SIZE] FILE...`.
 *
 * Owns: check's options and the loop over its files.
 * May call: check_elf.c (the analysis of one file), core (options: the pad
 * threshold's default is the library's, from its table; sysinfo: this
 * system's PMD size; json), msg.c, common.c.
 * Never: holds a default of the library's itself.
 */
#include "check_elf.h"

#include <getopt.h>
#include <string.h>
#include <unistd.h>

static void help(FILE *f, uint64_t pmd, uint64_t pad)
{
	char a[16], b[16];
	fprintf(f,
	        "usage: enormoustext check [--json] [--pmd-size SIZE] [--pad-threshold SIZE] FILE...\n"
	        "\n"
	        "Can the text of these programs or libraries go onto huge pages, and what would\n"
	        "put all of it there.  For each ELF file: its LOAD segments and their alignment;\n"
	        "the bytes in whole huge-page windows (what libenormoustext moves) when glibc or\n"
	        "musl loads it (a range when it depends on the load address); head and tail\n"
	        "left over, and what padding the tail would add; whether the file itself can be\n"
	        "mapped huge (address and offset congruent); .text.hot; the GNU build-id; text\n"
	        "relocations; and the advice: with GNU ld or lld, linker-scripts/enormous.ld alone\n"
	        "(-Wl,-T,enormous.ld); with gold or mold, which cannot take it, -z max-page-size\n"
	        "(the library then pads the tail at run time).  What the script's layout costs:\n"
	        "the file and (mapped huge) memory it adds, or for a file already linked with\n"
	        "it, how much of the text is padding.  Under half a huge page of code (1M for\n"
	        "2M pages) it is not worth it, and the advice says so.\n"
	        "\n"
	        "options:\n"
	        "  --json                JSON: one object per file (a list when several)\n"
	        "  --pmd-size SIZE       huge page size to plan for (default %s: this system's)\n"
	        "  --pad-threshold SIZE  tails larger than this are worth padding (default %s)\n"
	        "  -h, --help            this help\n"
	        "SIZE takes K/M/G suffixes.\n"
	        "\n"
	        "Exit status: 0; 1 when a file is missing, not ELF, truncated or corrupt (one\n"
	        "line on stderr names it; the other files are still checked); 2 usage error.\n",
	        et_tool_size(a, sizeof a, pmd), et_tool_size(b, sizeof b, pad));
}

int et_cmd_check(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pmd-size", required_argument, NULL, 'H' },
		{ "pad-threshold", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "/");
	long pg = sysconf(_SC_PAGESIZE);
	/* the library's own default (ENORMOUSTEXT_PAD_THRESHOLD), from its table */
	struct et_options lib;
	et_options_defaults(&lib);
	struct et_check_opts o = {
		.pmd_size = si.pmd_size,
		.page_size = pg > 0 ? (uint64_t)pg : 4096,
		.pad_threshold = lib.pad_threshold,
	};
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = true;
			break;
		case 'H':
			if (et_parse_size(optarg, &o.pmd_size) || o.pmd_size < 65536 ||
			    (o.pmd_size & (o.pmd_size - 1)))
				return et_tool_usage("--pmd-size %s: give a power of two of at least 64K "
				                     "(e.g. 2M)", optarg);
			break;
		case 'T':
			if (et_parse_size(optarg, &o.pad_threshold))
				return et_tool_usage("--pad-threshold %s: give a size in bytes (K/M/G "
				                     "suffixes)", optarg);
			break;
		case 'h':
			help(stdout, o.pmd_size, o.pad_threshold);
			return ET_EXIT_OK;
		default:
			return et_tool_bad_option(c, argv, optind);
		}
	}
	if (o.page_size > o.pmd_size)
		o.page_size = o.pmd_size;
	int nfiles = argc - optind;
	if (nfiles == 0)
		return et_tool_usage("no FILE given");
	struct et_json j;
	et_json_init(&j, stdout);
	bool list = nfiles > 1, any = false;
	int rc = ET_EXIT_OK;
	if (o.json && list)
		et_json_arr(&j, NULL);
	for (int i = optind; i < argc; i++) {
		if (!o.json && any)
			putchar('\n');
		fflush(stdout);
		if (et_check_path(argv[i], &o, stdout, &j, stderr) != 0)
			rc = ET_EXIT_BAD;
		else
			any = true;
	}
	if (o.json) {
		if (list)
			et_json_arr_end(&j);
		if (list || any)
			et_json_end(&j);
	}
	fflush(stdout);
	return rc;
}
