/*
 * tools/enormoustext/cmd/check.c — `enormoustext check`: can a program's or
 * library's text go huge, and how to make all of it (check_elf.c's
 * analysis, file by file).
 *
 * Owns: check's options (its table) and the loop over its files.
 * May call: check_elf.c (the analysis of one file), preload.c (where the
 * linker scripts are), core (options: the pad
 * threshold's default is the library's, from its table; sysinfo: this
 * system's PMD size; json), progress.c (the line on a terminal while
 * several files are checked), msg.c, common.c.
 * Never: holds a default of the library's itself.
 */
#include "check_elf.h"
#include "opts.h"
#include "preload.h"
#include "progress.h"

#include <string.h>
#include <unistd.h>

enum { O_JSON = 1, O_PMD_SIZE, O_PAD_THRESHOLD };

static const struct et_opt options[] = {
	{ "json", 0, NULL, "JSON: one object per file (a list when several)", O_JSON, 0, 0, 0, NULL, 0 },
	{ "pmd-size", 0, "SIZE", "huge page size to plan for", O_PMD_SIZE, 0, 0, 0, NULL, ET_COMP_NONE },
	{ "pad-threshold", 0, "SIZE", "tails larger than this are worth padding", O_PAD_THRESHOLD, 0, 0, 0,
	  NULL, ET_COMP_NONE },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

/* The defaults are this system's PMD size and the library's own pad
 * threshold (its option table's). */
static const char *dflt(int id, char *buf, size_t cap)
{
	char s[16];
	if (id == O_PMD_SIZE) {
		struct et_sysinfo si;
		et_sysinfo_read_pmd(&si, "/");
		snprintf(buf, cap, "%s: this system's", et_tool_size(s, sizeof s, si.pmd_size));
		return buf;
	}
	if (id == O_PAD_THRESHOLD) {
		struct et_options lib;
		et_options_defaults(&lib);
		snprintf(buf, cap, "%s", et_tool_size(s, sizeof s, lib.pad_threshold));
		return buf;
	}
	return NULL;
}

static const struct et_cmd_spec spec = {
	.name = "check",
	.forms = { { NULL, "FILE..." } },
	.about =
	        "Can the text of these programs or libraries go onto huge pages, and what would\n"
	        "put all of it there.  For each ELF file: its LOAD segments and their alignment;\n"
	        "the bytes in whole huge-page windows (what libenormoustext moves) when glibc or\n"
	        "musl loads it (a range when it depends on the load address); head and tail\n"
	        "left over, and what padding the tail would add; whether the file itself can be\n"
	        "mapped huge (address and offset congruent); .text.hot; the GNU build-id; text\n"
	        "relocations; and the advice: with GNU ld or lld, the linker script enormous.ld\n"
	        "alone (-Wl,-T,enormous.ld, named where this installation has it); with gold or\n"
	        "mold, which cannot take it, -z max-page-size (the library then pads the tail at\n"
	        "run time).  What the script's layout costs: the file and (mapped huge) memory\n"
	        "it adds, or for a file already linked with it, how much of the text is\n"
	        "padding.  Under half a huge page of code (1M for 2M pages) it is not worth it,\n"
	        "and the advice says so.\n",
	.sections = { { NULL, options, NULL } },
	.tail = "SIZE takes K/M/G suffixes.\n"
	        "\n"
	        "Exit status: 0; 1 when a file is missing, not ELF, truncated or corrupt (one\n"
	        "line on stderr names it; the other files are still checked); 2 usage error.\n",
	.dflt = dflt,
	.operand = ET_COMP_FILE,
};

const struct et_cmd_spec *et_cmd_check_spec(void)
{
	return &spec;
}

int et_cmd_check(int argc, char **argv)
{
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
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_JSON:
			o.json = true;
			break;
		case O_PMD_SIZE:
			if (et_parse_size(a.val, &o.pmd_size) || o.pmd_size < 65536 ||
			    (o.pmd_size & (o.pmd_size - 1)))
				return et_tool_usage("--pmd-size %s: give a power of two of at least 64K "
				                     "(e.g. 2M)", a.val);
			break;
		case O_PAD_THRESHOLD:
			if (et_parse_size(a.val, &o.pad_threshold))
				return et_tool_usage("--pad-threshold %s: give a size in bytes (K/M/G "
				                     "suffixes)", a.val);
			break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (o.page_size > o.pmd_size)
		o.page_size = o.pmd_size;
	/* the advice names the scripts where this installation has them */
	char s2[4096], s32[4096];
	o.script_2m = et_tool_linker_script("enormous.ld", s2, sizeof s2);
	o.script_32m = et_tool_linker_script("enormous-32m.ld", s32, sizeof s32);
	int nfiles = a.nops;
	if (nfiles == 0)
		return et_tool_usage("no FILE given");
	/* several files: which one, on a terminal (before stdout is taken) */
	struct et_progress line;
	et_progress_start(&line, "check");
	if (nfiles < 2)
		et_progress_end(&line);
	struct et_json j;
	et_json_init(&j, stdout);
	bool list = nfiles > 1, any = false;
	int rc = ET_EXIT_OK;
	if (o.json && list)
		et_json_arr(&j, NULL);
	for (int i = 0; i < a.nops; i++) {
		if (!o.json && any)
			putchar('\n');
		fflush(stdout);
		et_progress_show(&line, true, "file %d of %d, %.1f s: %s", i + 1, nfiles, et_progress_elapsed(&line),
		                 a.ops[i]);
		if (et_check_path(a.ops[i], &o, stdout, &j, stderr) != 0)
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
	/* (after the last write to stdout: the JSON writer holds the stream) */
	et_progress_end(&line);
	return rc;
}
