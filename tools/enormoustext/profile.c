/*
 * tools/enormoustext/profile.c — `enormoustext profile show|merge|order|
 * import`: look at a profile (the format of ENORMOUSTEXT_PROFILE, parsed
 * by the library's own parser), combine several, order a file's functions
 * by heat, make one of what other tools recorded.
 *
 *   enormoustext profile show [--window SIZE] [--svg OUT] FILE
 *   enormoustext profile merge -o OUT FILE...
 *   enormoustext profile order --object FILE [--format lld|ld] PROFILE
 *   enormoustext profile import [-o OUT] [--pid PID] [--comm NAME] [--value TYPE] FILE...
 *
 * Owns: the `profile` subcommands' options and output: `show` (windows by
 * heat; the heat map is heatmap.c's), `merge`, `order` (functions by heat,
 * for the linker), `import` (the formats are import.c's).
 * May call: core (profile: the format, parsed and looked up there;
 * sysinfo: the PMD size), profiles.c (load, windows, merge), heatmap.c,
 * import.c and attrib.c (import), elffile.c (`order`: the build-id and
 * the functions), output.c, msg.c, common.c.
 * Never: reads or writes a profile line itself (core/profile.c does).
 */
#include "tool.h"
#include "attrib.h"
#include "elffile.h"
#include "heatmap.h"
#include "import.h"
#include "profiles.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void help(FILE *f)
{
	fprintf(f,
	        "usage: enormoustext profile show [--window SIZE] [--svg OUT] FILE\n"
	        "       enormoustext profile merge -o OUT FILE...\n"
	        "       enormoustext profile order --object FILE [--format lld|ld] PROFILE\n"
	        "       enormoustext profile import [-o OUT] [--pid PID] [--comm NAME] [--value TYPE] FILE...\n"
	        "\n"
	        "show: per object of a profile (from `enormoustext record`), its windows\n"
	        "sorted by heat with the cumulative share of the samples they cover (what\n"
	        "ENORMOUSTEXT_HOT_COVERAGE chooses from); --svg writes a heat map of each\n"
	        "object's text, window by window (as a PNG: rsvg-convert -o OUT.png OUT).\n"
	        "--window: the window size (default: the PMD size, 2M).\n"
	        "merge: add up several profiles (runs, machines) into OUT; objects are\n"
	        "matched by build-id; the profiles must have the same granule.\n"
	        "order: the functions of FILE (matched by build-id) hottest first, for the\n"
	        "linker to pack the hot ones together: lld --symbol-ordering-file (the\n"
	        "default), or --format ld, a GNU ld script for -ffunction-sections builds.\n"
	        "import: perf.data, pprof (gzip'd or not) or `perf script` text made by other\n"
	        "tools, as a profile (see `enormoustext profile import --help`).\n"
	        "\n"
	        "Exit status: 0 done; 1 a FILE cannot be read or is not a valid profile (one\n"
	        "line naming it and the line at fault), or OUT cannot be written; 2 usage.\n");
}

static int by_heat(const void *a, const void *b)
{
	const struct et_tool_win *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "window", required_argument, NULL, 'w' },
		{ "svg", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "/");
	uint64_t W = si.pmd_size;
	const char *svg = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:w:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (et_parse_size(optarg, &W) != 0 || W < 4096 || (W & (W - 1)))
				return et_tool_usage("--window takes a power of two of at least 4K, not '%s'", optarg);
			break;
		case 's': svg = optarg; break;
		case 'h': help(stdout); return ET_EXIT_OK;
		default: return et_tool_bad_option(c, argv, optind);
		}
	}
	if (optind + 1 != argc)
		return et_tool_usage("give one profile FILE");
	struct et_profile p;
	if (et_tool_profile_load(&p, argv[optind]) != 0)
		return ET_EXIT_BAD;
	char ws[16];
	et_tool_size(ws, sizeof ws, W);
	printf("%s: %zu object%s, granule %llu, windows of %s\n", argv[optind], p.nobjs,
	       et_tool_s(p.nobjs), (unsigned long long)p.granule, ws);
	for (size_t i = 0; i < p.nobjs; i++) {
		const struct et_prof_obj *o = &p.objs[i];
		printf("%s  build-id %s  %llu sample%s\n", et_profile_path(&p, o), o->build_id,
		       (unsigned long long)o->total, et_tool_s(o->total));
		struct et_tool_win *w;
		size_t n = et_tool_profile_windows(&p, o, W, &w);
		if (n)
			qsort(w, n, sizeof *w, by_heat);
		uint64_t cum = 0;
		for (size_t k = 0; k < n; k++) {
			cum += w[k].samples;
			printf("  window 0x%-12llx %10llu %-7s  %5.1f%%  cumulative %5.1f%%\n",
			       (unsigned long long)w[k].start, (unsigned long long)w[k].samples,
			       w[k].samples == 1 ? "sample" : "samples",
			       o->total ? 100.0 * (double)w[k].samples / (double)o->total : 0.0,
			       o->total ? 100.0 * (double)cum / (double)o->total : 0.0);
		}
		free(w);
	}
	int rc = ET_EXIT_OK;
	if (svg) {
		struct et_tool_out *t = malloc(sizeof *t);
		FILE *f = t ? et_tool_out_open(t, svg) : NULL;
		if (!t)
			et_tool_err("out of memory");
		if (!f) {
			rc = ET_EXIT_BAD;
		} else {
			et_tool_heatmap_svg(f, &p, W);
			if (et_tool_out_close(t) != 0)
				rc = ET_EXIT_BAD;
		}
		free(t);
	}
	et_profile_free(&p);
	return rc;
}

static int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'h': help(stdout); return ET_EXIT_OK;
		default: return et_tool_bad_option(c, argv, optind);
		}
	}
	if (!out)
		return et_tool_usage("give the profile to write: -o OUT");
	if (optind >= argc)
		return et_tool_usage("give the profiles to merge");
	return et_tool_profile_merge(out, argv + optind, (size_t)(argc - optind));
}

/* ---- order: a function order for the linker, hottest first ----------- */

struct fn {
	char *name;
	uint64_t addr, size;
	double heat;
};

/* The functions of the object, each with its heat: its share of each
 * granule it overlaps. */
struct order {
	const struct et_profile *p;
	const struct et_prof_obj *obj;
	struct fn *fns;
	size_t nf, cap;
};

static int add_fn(void *ctx, const char *name, uint64_t addr, uint64_t size)
{
	struct order *o = ctx;
	if (o->nf == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 1024;
		struct fn *q = realloc(o->fns, cap * sizeof *q);
		if (!q)
			return -1;
		o->fns = q;
		o->cap = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return -1;
	double h = 0;
	uint64_t G = o->p->granule;
	for (uint64_t g = addr & ~(G - 1); g < addr + size; g += G) {
		uint64_t lo = g > addr ? g : addr;
		uint64_t hi = g + G < addr + size ? g + G : addr + size;
		uint64_t cnt = et_profile_heat(o->p, o->obj, g, g + G);
		if (cnt)
			h += (double)cnt * (double)(hi - lo) / (double)G;
	}
	o->fns[o->nf++] = (struct fn){ copy, addr, size, h };
	return 0;
}

static int by_fn_heat(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	if (x->heat != y->heat)
		return x->heat > y->heat ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmd_order(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "object", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *objpath = NULL, *format = "lld";
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:b:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': objpath = optarg; break;
		case 'f':
			if (strcmp(optarg, "lld") && strcmp(optarg, "ld"))
				return et_tool_usage("--format takes lld or ld, not '%s'", optarg);
			format = optarg;
			break;
		case 'h': help(stdout); return ET_EXIT_OK;
		default: return et_tool_bad_option(c, argv, optind);
		}
	}
	if (!objpath)
		return et_tool_usage("give the object to order: --object FILE");
	if (optind + 1 != argc)
		return et_tool_usage("give one profile FILE");
	struct et_profile p;
	if (et_tool_profile_load(&p, argv[optind]) != 0)
		return ET_EXIT_BAD;
	int rc = ET_EXIT_BAD;
	struct order o = { .p = &p };
	struct et_tool_elf x;
	if (et_tool_elf_open(&x, objpath, 0) != 0) {
		et_tool_err("%s: %s", objpath, x.why);
		et_profile_free(&p);
		return ET_EXIT_BAD;
	}
	char bid[41];
	et_tool_elf_build_id_key(&x, bid);
	o.obj = et_profile_find(&p, bid);
	if (!o.obj) {
		et_tool_err("%s: the profile has no samples for this file (build-id %s)", objpath,
		            bid[0] ? bid : "none");
		goto out;
	}
	/* its functions: .symtab, else .dynsym */
	if (et_tool_elf_functions(&x, add_fn, &o) < 0) {
		et_tool_err("out of memory");
		goto out;
	}
	struct fn *fns = o.fns;
	size_t nf = o.nf;
	if (nf)
		qsort(fns, nf, sizeof *fns, by_fn_heat);
	if (!strcmp(format, "ld"))
		printf("/* hot functions first: link with -ffunction-sections and -Wl,-T,THIS_FILE */\n"
		       "SECTIONS\n{\n  .text.enormous_order :\n  {\n");
	for (size_t i = 0; i < nf && fns[i].heat > 0; i++) {
		if (i && fns[i].addr == fns[i - 1].addr)
			continue;                 /* an alias */
		if (!strcmp(format, "ld"))
			printf("    *(.text.%s .text.hot.%s .text.unlikely.%s .text.startup.%s)\n", fns[i].name,
			       fns[i].name, fns[i].name, fns[i].name);
		else
			printf("%s\n", fns[i].name);
	}
	if (!strcmp(format, "ld"))
		printf("  }\n}\nINSERT BEFORE .text;\n");
	rc = ET_EXIT_OK;
out:
	for (size_t i = 0; i < o.nf; i++)
		free(o.fns[i].name);
	free(o.fns);
	et_tool_elf_close(&x);
	et_profile_free(&p);
	return rc;
}

/* ---- import: what other tools recorded, as a profile -------------------- */

static void help_import(FILE *f)
{
	fprintf(f,
	        "usage: enormoustext profile import [-o OUT] [--pid PID] [--comm NAME] [--value TYPE] FILE...\n"
	        "\n"
	        "Read profiles recorded by other tools and write them as one profile (for\n"
	        "ENORMOUSTEXT_PROFILE, profile show|merge|order): per object, by build-id,\n"
	        "samples per %u bytes of its text.  Each FILE (- for standard input) is told\n"
	        "by its content:\n"
	        "  perf.data        perf record's output (a file, or -o - to a pipe)\n"
	        "  pprof            profile.proto, gzip'd or not (Go's pprof, perf_to_profile,\n"
	        "                   continuous profilers' exports)%s\n"
	        "  perf script      the text of `perf script -F pid,ip --show-mmap-events`\n"
	        "Samples are mapped to (object, file offset) by the mappings the FILE\n"
	        "records and placed by the object's program headers: the object is read\n"
	        "where it was mapped, or, when that file has another build-id now, from\n"
	        "perf's build-id cache ($PERF_BUILDID_DIR, else ~/.debug); samples of\n"
	        "objects found in neither are left out (one line each says so).  Several\n"
	        "FILEs are added up.\n"
	        "\n"
	        "  -o, --output OUT   the profile to write (default: standard output)\n"
	        "      --pid PID      only the samples of process PID\n"
	        "      --comm NAME    only the samples of threads named NAME (perf.data: the\n"
	        "                     thread's comm; pprof: the \"comm\" label)\n"
	        "      --value TYPE   pprof: the sample type to count (default: the first\n"
	        "                     whose unit is \"count\")\n"
	        "  -h, --help         this help\n"
	        "\n"
	        "Exit status: 0 written; 1 a FILE cannot be read, is truncated or corrupt, or\n"
	        "has no samples (one line naming it), or OUT cannot be written (nothing is\n"
	        "written then); 2 usage.\n",
	        ET_PROFILE_RECORD_GRANULE,
#ifdef ET_TOOL_PPROF
	        ""
#else
	        "\n                   (not in this build: it was made without protobuf-c and zlib)"
#endif
	);
}

static int cmd_import(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, 'c' },
		{ "value", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	struct et_import_filter f = { 0 };
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'p': {
			long pid;
			if (et_tool_parse_pid(optarg, &pid) != 0)
				return et_tool_usage("--pid takes a process id, not '%s'", optarg);
			f.pid_set = true;
			f.pid = (uint32_t)pid;
			break;
		}
		case 'c':
			if (!optarg[0])
				return et_tool_usage("--comm takes a command name");
			f.comm = optarg;
			break;
		case 'v': f.value = optarg; break;
		case 'h': help_import(stdout); return ET_EXIT_OK;
		default: return et_tool_bad_option(c, argv, optind);
		}
	}
	if (optind >= argc)
		return et_tool_usage("give the FILEs to import (perf.data, pprof, perf script text)");
	int nstdin = 0;
	for (int i = optind; i < argc; i++)
		nstdin += !strcmp(argv[i], "-");
	if (nstdin > 1)
		return et_tool_usage("standard input (-) can be read once");
	et_attr_init(false);
	uint64_t lost = 0;
	for (int i = optind; i < argc; i++)
		if (et_tool_import_file(argv[i], &f, &lost) != 0)
			return ET_EXIT_BAD;
	struct et_attr_totals tot;
	et_attr_totals(&tot);
	int nf = argc - optind;
	if (tot.samples == 0) {
		char sel[128] = "";
		if (f.pid_set || f.comm)
			snprintf(sel, sizeof sel, " of %s%.0u%s%s%.40s (%llu other sample%s)", f.pid_set ? "pid " : "",
			         f.pid_set ? f.pid : 0, f.pid_set && f.comm ? " and " : "", f.comm ? "comm " : "",
			         f.comm ? f.comm : "", (unsigned long long)f.dropped, et_tool_s(f.dropped));
		if (nf == 1)
			et_tool_err("%s: no samples%s", argv[optind], sel);
		else
			et_tool_err("no samples%s in the %d files", sel, nf);
		return ET_EXIT_BAD;
	}
	char sum[160], comment[256];
	et_attr_summary(sum, sizeof sum);
	snprintf(comment, sizeof comment, "imported by enormoustext profile import from %d file%s: %s", nf,
	         et_tool_s(nf), sum);
	if (et_attr_write(NULL, out, comment) != 0)
		return ET_EXIT_BAD;
	et_attr_say_unfound();
	if (nf == 1)
		fprintf(stderr, "enormoustext %s: %s from %s", et_tool_cmd, sum, argv[optind]);
	else
		fprintf(stderr, "enormoustext %s: %s from %d files", et_tool_cmd, sum, nf);
	if (lost)
		fprintf(stderr, " (%llu more lost by the kernel while recording)", (unsigned long long)lost);
	if (f.dropped)
		fprintf(stderr, " (%llu other sample%s not selected)", (unsigned long long)f.dropped,
		        et_tool_s(f.dropped));
	fprintf(stderr, " written to %s\n", out ? out : "standard output");
	return ET_EXIT_OK;
}

int et_cmd_profile(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		help(argc < 2 ? stderr : stdout);
		return argc < 2 ? ET_EXIT_USAGE : ET_EXIT_OK;
	}
	if (!strcmp(argv[1], "show"))
		return cmd_show(argc - 1, argv + 1);
	if (!strcmp(argv[1], "merge"))
		return cmd_merge(argc - 1, argv + 1);
	if (!strcmp(argv[1], "order"))
		return cmd_order(argc - 1, argv + 1);
	if (!strcmp(argv[1], "import"))
		return cmd_import(argc - 1, argv + 1);
	return et_tool_usage("no profile subcommand '%s' (show, merge, order, import)", argv[1]);
}
