/*
 * tools/enormoustext/cmd/profile.c — `enormoustext profile show|merge|order|
 * import`: look at a profile (the format of ENORMOUSTEXT_PROFILE, parsed
 * by the library's own parser), combine several, order a file's functions
 * by heat, make one of what other tools recorded.
 *
 *   enormoustext profile show [--window SIZE] [--svg OUT] FILE
 *   enormoustext profile merge -o OUT [--json] FILE...
 *   enormoustext profile order --object FILE [--format lld|ld] [-o OUT] [--json] PROFILE
 *   enormoustext profile import [-o OUT] [--pid PID] [--comm NAME] [--value TYPE] [--json] FILE...
 *
 * --json says what was written, on stdout: only where the profile (or the
 * order) goes to a file, so it never shares stdout with it.
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
#include "opts.h"
#include "profiles.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int by_heat(const void *a, const void *b)
{
	const struct et_tool_win *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

enum { O_WINDOW = 1, O_SVG, O_JSON, O_OUTPUT, O_OBJECT, O_FORMAT, O_PID, O_COMM, O_VALUE };

static const struct et_opt show_opts[] = {
	{ "window", 'w', "SIZE", "the window size (default: the PMD size, 2M)", O_WINDOW, 0, 0, 0, NULL,
	  ET_COMP_NONE },
	{ "svg", 0, "OUT",
	  "also write a heat map of each object's text, window\n"
	  "by window (as a PNG: rsvg-convert -o OUT.png OUT)",
	  O_SVG, 0, 0, 0, NULL, ET_COMP_FILE },
	{ "json", 0, NULL,
	  "JSON instead of text: file, granule, window, objects\n"
	  "(path, build_id, samples, windows: start, samples,\n"
	  "share, cumulative; hottest first)",
	  O_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec show_spec = {
	.name = "profile show",
	.forms = { { NULL, "FILE" } },
	.about = "Per object of a profile (from `enormoustext record`), its windows sorted by\n"
	         "heat with the cumulative share of the samples they cover (what\n"
	         "ENORMOUSTEXT_HOT_COVERAGE chooses from).\n",
	.sections = { { NULL, show_opts, NULL } },
	.tail = "Exit status: 0 done; 1 FILE cannot be read or is not a valid profile (one line\n"
	        "naming it and the line at fault), or OUT cannot be written; 2 usage error.\n",
	.operand = ET_COMP_FILE,
};

static const struct et_opt merge_opts[] = {
	{ "output", 'o', "OUT", "the profile to write (required)", O_OUTPUT, ET_OPTF_REQUIRED | ET_OPTF_SHORT, 0,
	  0, NULL, ET_COMP_FILE },
	{ "json", 0, NULL,
	  "JSON on stdout of what was written: output, granule,\n"
	  "inputs (file, objects, samples), objects, samples",
	  O_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec merge_spec = {
	.name = "profile merge",
	.forms = { { NULL, "FILE..." } },
	.about = "Add up several profiles (runs, machines) into OUT; objects are matched by\n"
	         "build-id; the profiles must have the same granule.\n",
	.sections = { { NULL, merge_opts, NULL } },
	.tail = "Exit status: 0 written; 1 a FILE cannot be read or is not a valid profile, or\n"
	        "OUT cannot be written (nothing is written then); 2 usage error.\n",
	.operand = ET_COMP_FILE,
};

static const struct et_opt order_opts[] = {
	{ "object", 'b', "FILE", "the object whose functions to order (required)", O_OBJECT, ET_OPTF_REQUIRED, 0,
	  0, NULL, ET_COMP_FILE },
	{ "format", 'f', "lld|ld",
	  "lld: a --symbol-ordering-file (the default); ld: a\n"
	  "GNU ld script for -ffunction-sections builds",
	  O_FORMAT, 0, 0, 0, "lld ld", 0 },
	{ "output", 'o', "OUT", "write the order to OUT (default: standard output)", O_OUTPUT, ET_OPTF_SHORT, 0, 0,
	  NULL, ET_COMP_FILE },
	{ "json", 0, NULL,
	  "with -o: JSON on stdout of what was written: profile,\n"
	  "object, build_id, samples (the object's), functions\n"
	  "(the object's), ordered (those written), format,\n"
	  "output",
	  O_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec order_spec = {
	.name = "profile order",
	.forms = { { NULL, "PROFILE" } },
	.about = "The functions of the object FILE (matched by build-id) hottest first, for\n"
	         "the linker to pack the hot ones together.\n",
	.sections = { { NULL, order_opts, NULL } },
	.tail = "Exit status: 0 done; 1 PROFILE or FILE cannot be read, the profile has no\n"
	        "samples for FILE, or OUT cannot be written (nothing is written then); 2 usage\n"
	        "error (--json without -o: the order itself is on standard output).\n",
	.operand = ET_COMP_FILE,
};

static const struct et_opt import_opts[] = {
	{ "output", 'o', "OUT", "the profile to write (default: standard output)", O_OUTPUT, ET_OPTF_SHORT, 0, 0,
	  NULL, ET_COMP_FILE },
	{ "pid", 0, "PID", "only the samples of process PID", O_PID, 0, 0, 0, NULL, ET_COMP_NONE },
	{ "comm", 0, "NAME",
	  "only the samples of threads named NAME (perf.data:\n"
	  "the thread's comm; pprof: the \"comm\" label)",
	  O_COMM, 0, 0, 0, NULL, ET_COMP_NONE },
	{ "value", 0, "TYPE",
	  "pprof: the sample type to count (default: the first\n"
	  "whose unit is \"count\")",
	  O_VALUE, 0, 0, 0, NULL, ET_COMP_NONE },
	{ "json", 0, NULL,
	  "with -o: JSON on stdout of what was imported: output,\n"
	  "files (file, kind, samples), samples, outside,\n"
	  "left_out, lost, not_selected, objects",
	  O_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static void import_about(FILE *f)
{
	fprintf(f,
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
	        "FILEs are added up.\n",
	        ET_PROFILE_RECORD_GRANULE,
#ifdef ET_TOOL_PPROF
	        ""
#else
	        "\n                   (not in this build: it was made without protobuf-c and zlib)"
#endif
	);
}

static const struct et_cmd_spec import_spec = {
	.name = "profile import",
	.forms = { { NULL, "FILE..." } },
	.about_fn = import_about,
	.sections = { { NULL, import_opts, NULL } },
	.tail = "Exit status: 0 written; 1 a FILE cannot be read, is truncated or corrupt, or\n"
	        "has no samples (one line naming it), or OUT cannot be written (nothing is\n"
	        "written then); 2 usage (--json without -o: the profile itself is on standard\n"
	        "output).\n",
	.operand = ET_COMP_FILE,
};

static const struct et_cmd_spec profile_spec = {
	.name = "profile",
	.about = "show: a profile's windows by heat (and a heat map).  merge: several profiles\n"
	         "added up.  order: an object's functions hottest first, for the linker.\n"
	         "import: perf.data, pprof or `perf script` text made by other tools, as a\n"
	         "profile.  Each has its own help: enormoustext profile SUBCOMMAND --help (or\n"
	         "enormoustext help profile SUBCOMMAND).\n",
	.tail = "Exit status: 0 done; 1 a FILE cannot be read or is not a valid profile (one\n"
	        "line naming it and the line at fault), or OUT cannot be written; 2 usage.\n",
	.subs = { &show_spec, &merge_spec, &order_spec, &import_spec },
};

const struct et_cmd_spec *et_cmd_profile_spec(void)
{
	return &profile_spec;
}

static int cmd_show(int argc, char **argv)
{
	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "/");
	uint64_t W = si.pmd_size;
	const char *svg = NULL;
	bool json = false;
	struct et_args a;
	et_args_init(&a, &show_spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_WINDOW:
			if (et_parse_size(a.val, &W) != 0 || W < 4096 || (W & (W - 1)))
				return et_tool_usage("--window takes a power of two of at least 4K, not '%s'", a.val);
			break;
		case O_SVG: svg = a.val; break;
		case O_JSON: json = true; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (a.nops != 1)
		return et_tool_usage("give one profile FILE");
	const char *file = a.ops[0];
	struct et_profile p;
	if (et_tool_profile_load(&p, file) != 0)
		return ET_EXIT_BAD;
	char ws[16];
	et_tool_size(ws, sizeof ws, W);
	struct et_json j;
	if (json) {
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_str(&j, "file", file);
		et_json_u64(&j, "granule", p.granule);
		et_json_u64(&j, "window", W);
		et_json_arr(&j, "objects");
	} else {
		printf("%s: %zu object%s, granule %llu, windows of %s\n", file, p.nobjs, et_tool_s(p.nobjs),
		       (unsigned long long)p.granule, ws);
	}
	for (size_t i = 0; i < p.nobjs; i++) {
		const struct et_prof_obj *o = &p.objs[i];
		if (json) {
			et_json_obj(&j, NULL);
			et_json_str(&j, "path", et_profile_path(&p, o));
			et_json_str(&j, "build_id", o->build_id);
			et_json_u64(&j, "samples", o->total);
			et_json_arr(&j, "windows");
		} else {
			printf("%s  build-id %s  %llu sample%s\n", et_profile_path(&p, o), o->build_id,
			       (unsigned long long)o->total, et_tool_s(o->total));
		}
		struct et_tool_win *w;
		size_t n = et_tool_profile_windows(&p, o, W, &w);
		if (n)
			qsort(w, n, sizeof *w, by_heat);
		uint64_t cum = 0;
		for (size_t k = 0; k < n; k++) {
			cum += w[k].samples;
			double share = o->total ? 100.0 * (double)w[k].samples / (double)o->total : 0.0;
			double cshare = o->total ? 100.0 * (double)cum / (double)o->total : 0.0;
			if (json) {
				/* the shares in tenths of a percent, as the text rounds them */
				et_json_obj_flat(&j, NULL);
				et_json_hex(&j, "start", w[k].start);
				et_json_u64(&j, "samples", w[k].samples);
				et_json_u64(&j, "share_permille", (uint64_t)(share * 10 + 0.5));
				et_json_u64(&j, "cumulative_permille", (uint64_t)(cshare * 10 + 0.5));
				et_json_obj_end(&j);
			} else {
				printf("  window 0x%-12llx %10llu %-7s  %5.1f%%  cumulative %5.1f%%\n",
				       (unsigned long long)w[k].start, (unsigned long long)w[k].samples,
				       w[k].samples == 1 ? "sample" : "samples", share, cshare);
			}
		}
		if (json) {
			et_json_arr_end(&j);
			et_json_obj_end(&j);
		}
		free(w);
	}
	if (json) {
		et_json_arr_end(&j);
		et_json_obj_end(&j);
		et_json_end(&j);
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

/* --json's refusal when OUT is standard output itself (0: fine). */
static int json_out_ok(bool json, const char *out, const char *what)
{
	if (!json)
		return 0;
	if (!out)
		return et_tool_usage("--json goes with -o OUT: without it the %s is written on standard output, "
		                     "where the JSON would go", what);
	if (et_tool_out_is_stdout(out))
		return et_tool_usage("--json: -o %s is standard output, where the JSON goes: give another OUT",
		                     out);
	return 0;
}

static int cmd_merge(int argc, char **argv)
{
	const char *out = NULL;
	bool json = false;
	struct et_args a;
	et_args_init(&a, &merge_spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		if (c == O_OUTPUT)
			out = a.val;
		else if (c == O_JSON)
			json = true;
	}
	if (c < 0)
		return et_args_exit(c);
	if (!out)
		return et_tool_usage("give the profile to write: -o OUT");
	if (!a.nops)
		return et_tool_usage("give the profiles to merge");
	int rc = json_out_ok(json, out, "profile");
	if (rc)
		return rc;
	struct et_tool_merge_stats st = { 0 };
	rc = et_tool_profile_merge_stats(NULL, out, a.ops, (size_t)a.nops, &st);
	if (rc != ET_EXIT_OK || !json) {
		et_tool_merge_stats_free(&st);
		return rc;
	}
	struct et_json j;
	et_json_init(&j, stdout);
	et_json_obj(&j, NULL);
	et_json_str(&j, "output", out);
	et_json_u64(&j, "granule", st.granule);
	et_json_arr(&j, "inputs");
	for (size_t i = 0; i < st.n; i++) {
		et_json_obj_flat(&j, NULL);
		et_json_str(&j, "file", a.ops[i]);
		et_json_u64(&j, "objects", st.inputs[i].objects);
		et_json_u64(&j, "samples", st.inputs[i].samples);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_u64(&j, "objects", st.objects);
	et_json_u64(&j, "samples", st.samples);
	et_json_obj_end(&j);
	et_json_end(&j);
	et_tool_merge_stats_free(&st);
	return ET_EXIT_OK;
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
	const char *objpath = NULL, *format = "lld", *out = NULL;
	bool json = false;
	struct et_args a;
	et_args_init(&a, &order_spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_OBJECT: objpath = a.val; break;
		case O_FORMAT: format = a.val; break;
		case O_OUTPUT: out = a.val; break;
		case O_JSON: json = true; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (!objpath)
		return et_tool_usage("give the object to order: --object FILE");
	if (a.nops != 1)
		return et_tool_usage("give one profile FILE");
	int jrc = json_out_ok(json, out, "order");
	if (jrc)
		return jrc;
	struct et_profile p;
	if (et_tool_profile_load(&p, a.ops[0]) != 0)
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
	size_t nf = o.nf, ordered = 0;
	if (nf)
		qsort(fns, nf, sizeof *fns, by_fn_heat);
	struct et_tool_out t;
	FILE *f = out ? et_tool_out_open(&t, out) : stdout;
	if (!f)
		goto out;
	if (!strcmp(format, "ld"))
		fprintf(f, "/* hot functions first: link with -ffunction-sections and -Wl,-T,THIS_FILE */\n"
		           "SECTIONS\n{\n  .text.enormous_order :\n  {\n");
	for (size_t i = 0; i < nf && fns[i].heat > 0; i++) {
		if (i && fns[i].addr == fns[i - 1].addr)
			continue;                 /* an alias */
		ordered++;
		if (!strcmp(format, "ld"))
			fprintf(f, "    *(.text.%s .text.hot.%s .text.unlikely.%s .text.startup.%s)\n", fns[i].name,
			        fns[i].name, fns[i].name, fns[i].name);
		else
			fprintf(f, "%s\n", fns[i].name);
	}
	if (!strcmp(format, "ld"))
		fprintf(f, "  }\n}\nINSERT BEFORE .text;\n");
	if (out && et_tool_out_close(&t) != 0)
		goto out;
	rc = ET_EXIT_OK;
	if (json) {
		/* the object's functions counted once (aliases: one address) */
		size_t distinct = 0;
		for (size_t i = 0; i < nf; i++) {
			bool alias = false;
			for (size_t k = i; k-- > 0 && !alias && fns[k].heat == fns[i].heat;)
				alias = fns[k].addr == fns[i].addr;
			distinct += !alias;
		}
		struct et_json j;
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_str(&j, "profile", a.ops[0]);
		et_json_str(&j, "object", objpath);
		et_json_str(&j, "build_id", bid);
		et_json_u64(&j, "samples", o.obj->total);
		et_json_u64(&j, "functions", distinct);
		et_json_u64(&j, "ordered", ordered);
		et_json_str(&j, "format", format);
		et_json_str(&j, "output", out);
		et_json_obj_end(&j);
		et_json_end(&j);
	}
out:
	for (size_t i = 0; i < o.nf; i++)
		free(o.fns[i].name);
	free(o.fns);
	et_tool_elf_close(&x);
	et_profile_free(&p);
	return rc;
}

/* ---- import: what other tools recorded, as a profile -------------------- */

static int cmd_import(int argc, char **argv)
{
	const char *out = NULL;
	bool json = false;
	struct et_import_filter f = { 0 };
	struct et_args a;
	et_args_init(&a, &import_spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_OUTPUT: out = a.val; break;
		case O_PID: {
			long pid;
			if (et_tool_parse_pid(a.val, &pid) != 0)
				return et_tool_usage("--pid takes a process id, not '%s'", a.val);
			f.pid_set = true;
			f.pid = (uint32_t)pid;
			break;
		}
		case O_COMM:
			if (!a.val[0])
				return et_tool_usage("--comm takes a command name");
			f.comm = a.val;
			break;
		case O_VALUE: f.value = a.val; break;
		case O_JSON: json = true; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (!a.nops)
		return et_tool_usage("give the FILEs to import (perf.data, pprof, perf script text)");
	int jrc = json_out_ok(json, out, "profile");
	if (jrc)
		return jrc;
	char **files = a.ops;
	int nf = a.nops;
	int nstdin = 0;
	for (int i = 0; i < nf; i++)
		nstdin += !strcmp(files[i], "-");
	if (nstdin > 1)
		return et_tool_usage("standard input (-) can be read once");
	et_attr_init(false);
	uint64_t lost = 0;
	size_t nfiles = nf > 0 ? (size_t)nf : 1;
	/* kept for the command's life (static: reachable on every way out) */
	static const char **kinds;
	static uint64_t *per;
	kinds = calloc(nfiles, sizeof *kinds);
	per = calloc(nfiles, sizeof *per);
	if (!kinds || !per) {
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	for (int i = 0; i < nf; i++) {
		struct et_attr_totals before;
		et_attr_totals(&before);
		f.kind = NULL;
		if (et_tool_import_file(files[i], &f, &lost) != 0)
			return ET_EXIT_BAD;
		struct et_attr_totals after;
		et_attr_totals(&after);
		kinds[i] = f.kind;
		per[i] = after.samples - before.samples;
	}
	struct et_attr_totals tot;
	et_attr_totals(&tot);
	if (tot.samples == 0) {
		char sel[128] = "";
		if (f.pid_set || f.comm)
			snprintf(sel, sizeof sel, " of %s%.0u%s%s%.40s (%llu other sample%s)", f.pid_set ? "pid " : "",
			         f.pid_set ? f.pid : 0, f.pid_set && f.comm ? " and " : "", f.comm ? "comm " : "",
			         f.comm ? f.comm : "", (unsigned long long)f.dropped, et_tool_s(f.dropped));
		if (nf == 1)
			et_tool_err("%s: no samples%s", files[0], sel);
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
		fprintf(stderr, "enormoustext %s: %s from %s", et_tool_cmd, sum, files[0]);
	else
		fprintf(stderr, "enormoustext %s: %s from %d files", et_tool_cmd, sum, nf);
	if (lost)
		fprintf(stderr, " (%llu more lost by the kernel while recording)", (unsigned long long)lost);
	if (f.dropped)
		fprintf(stderr, " (%llu other sample%s not selected)", (unsigned long long)f.dropped,
		        et_tool_s(f.dropped));
	fprintf(stderr, " written to %s\n", out ? out : "standard output");
	if (json) {
		et_attr_totals(&tot);
		struct et_json j;
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_str(&j, "output", out);
		et_json_arr(&j, "files");
		for (int i = 0; i < nf; i++) {
			et_json_obj_flat(&j, NULL);
			et_json_str(&j, "file", files[i]);
			et_json_str(&j, "kind", kinds[i]);
			et_json_u64(&j, "samples", per[i]);
			et_json_obj_end(&j);
		}
		et_json_arr_end(&j);
		et_json_u64(&j, "samples", tot.samples);
		et_json_u64(&j, "outside", tot.outside);
		et_json_u64(&j, "left_out", tot.unfound + tot.unplaced);
		et_json_u64(&j, "lost", lost);
		et_json_u64(&j, "not_selected", f.dropped);
		et_json_u64(&j, "objects", tot.objects);
		et_json_obj_end(&j);
		et_json_end(&j);
	}
	free(kinds);
	free(per);
	return ET_EXIT_OK;
}

int et_cmd_profile(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		et_spec_help(argc < 2 ? stderr : stdout, &profile_spec);
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
