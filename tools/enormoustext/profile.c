/*
 * tools/enormoustext/profile.c — `enormoustext profile show|merge|order`:
 * look at a profile (the format of ENORMOUSTEXT_PROFILE, parsed by the
 * library's own parser), combine several, order a file's functions by
 * heat.
 *
 *   enormoustext profile show [--window SIZE] [--svg OUT] FILE
 *   enormoustext profile merge -o OUT FILE...
 *   enormoustext profile order --object FILE [--format lld|ld] PROFILE
 *   enormoustext profile import [-o OUT] [--pid PID] [--comm NAME] FILE...  (import.c)
 *
 * Owns: `profile show` (windows by heat, the SVG heat map),
 * `profile merge` (et_tool_profile_merge: also `record`'s), `profile
 * order` (functions by heat, for the linker).
 * May call: core (profile: the format, parsed, written and merged there;
 * sysinfo: the PMD size), output.c, libelf (for `order`).
 * Never: reads or writes a profile line itself (core/profile.c does).
 */
#include "import.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
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

static int load(struct et_profile *p, const char *path)
{
	if (et_profile_load(p, path) != 0) {
		et_tool_err("%s: %s", path, p->err);
		return -1;
	}
	return 0;
}

struct win {
	uint64_t start, samples;
};

static int by_heat(const void *a, const void *b)
{
	const struct win *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The windows of object o that have samples, in address order. */
static size_t windows_of(const struct et_profile *p, const struct et_prof_obj *o, uint64_t W, struct win **out)
{
	struct win *w = calloc(o->n ? o->n : 1, sizeof *w);
	size_t n = 0;
	if (!w) {
		et_tool_err("out of memory");
		exit(ET_EXIT_BAD);
	}
	for (uint32_t i = 0; i < o->n; i++) {
		const struct et_prof_ent *e = &p->ents[o->first + i];
		uint64_t s = e->vaddr & ~(W - 1);
		if (n && w[n - 1].start == s) {
			w[n - 1].samples += e->count;
		} else {
			w[n].start = s;
			w[n].samples = e->count;
			n++;
		}
	}
	*out = w;
	return n;
}

/* ---- the heat map: SVG ------------------------------------------------- */

/* One row an object: its name, its samples, its hottest window and that
 * window's share on the first line; its windows below, one cell each from
 * the first with samples to the last (at most 400), red shaded from pale
 * (cold) to dark (its hottest, framed in black), each with a tooltip of its
 * address and samples; the addresses the row spans on the line under it.
 * Everything a picture needs is written in it, so a converted PNG
 * (rsvg-convert -o OUT.png OUT.svg, Inkscape, a browser) says as much as
 * the SVG. */
enum {
	CELL = 12,              /* a window's width */
	LEFT = 10,
	TOP = 40,               /* the first object's row */
	ROWH = 60,              /* an object: its name, its windows, the addresses */
	CELLS_Y = 16,           /* the windows, below the row's top */
	CELL_H = 20,
	MAX_CELLS = 400,
	CHAR_W = 6,             /* about a character of 11-pixel sans-serif */
};

/* Cells in a row: the widest object's span of windows, from its first
 * window with samples to its last, at most MAX_CELLS. */
static size_t heat_columns(const struct et_profile *p, uint64_t W)
{
	size_t maxcells = 1;
	for (size_t i = 0; i < p->nobjs; i++) {
		const struct et_prof_obj *o = &p->objs[i];
		if (!o->n)
			continue;
		uint64_t lo = p->ents[o->first].vaddr & ~(W - 1);
		uint64_t hi = p->ents[o->first + o->n - 1].vaddr & ~(W - 1);
		size_t c = (size_t)((hi - lo) / W) + 1;
		if (c > maxcells)
			maxcells = c;
	}
	return maxcells > MAX_CELLS ? MAX_CELLS : maxcells;
}

/* The green and blue of a window's red (255): from near 235 for the coldest
 * down to 35 for the object's hottest window. */
static int heat_shade(uint64_t samples, uint64_t max)
{
	return 255 - (int)(200.0 * (double)samples / (double)max) - 20;
}

static void put_text(FILE *f, const char *s)
{
	for (const char *c = s; *c; c++) {
		if (*c == '<')
			fputs("&lt;", f);
		else if (*c == '>')
			fputs("&gt;", f);
		else if (*c == '&')
			fputs("&amp;", f);
		else
			fputc(*c, f);
	}
}

/* An object's row: its windows, the hottest, and its two lines of text. */
struct row {
	struct win *ws;
	size_t n, hot, cells;   /* windows with samples, the hottest, cells drawn */
	uint64_t lo, span;      /* the first window, windows from it to the last */
	char head[160], range[160];
};

static void row_make(struct row *r, const struct et_profile *p, const struct et_prof_obj *o, uint64_t W,
                     size_t maxcells)
{
	r->n = windows_of(p, o, W, &r->ws);
	r->hot = 0;
	for (size_t k = 1; k < r->n; k++)
		if (r->ws[k].samples > r->ws[r->hot].samples)
			r->hot = k;
	r->range[0] = '\0';
	r->cells = 0;
	r->lo = r->n ? r->ws[0].start : 0;
	if (!r->n || !o->total) {
		snprintf(r->head, sizeof r->head, " (%llu sample%s)", (unsigned long long)o->total, et_tool_s(o->total));
		return;
	}
	const struct win *hot = &r->ws[r->hot];
	snprintf(r->head, sizeof r->head, " (%llu sample%s; the hottest window 0x%llx has %.1f%%)",
	         (unsigned long long)o->total, et_tool_s(o->total), (unsigned long long)hot->start,
	         100.0 * (double)hot->samples / (double)o->total);
	r->span = (r->ws[r->n - 1].start - r->lo) / W + 1;
	r->cells = r->span < maxcells ? (size_t)r->span : maxcells;
	char sz[16];
	et_tool_size(sz, sizeof sz, W);
	int len = snprintf(r->range, sizeof r->range, "0x%llx - 0x%llx: %llu window%s of %s, %zu with samples",
	                   (unsigned long long)r->lo, (unsigned long long)(r->lo + r->span * W),
	                   (unsigned long long)r->span, et_tool_s(r->span), sz, r->n);
	if (r->cells < r->span && len > 0 && (size_t)len < sizeof r->range)
		snprintf(r->range + len, sizeof r->range - (size_t)len, " (the first %zu drawn)", r->cells);
}

static void svg_heatmap(FILE *f, const struct et_profile *p, uint64_t W)
{
	size_t maxcells = heat_columns(p, W), chars = 0;
	struct row r;
	for (size_t i = 0; i < p->nobjs; i++) {
		row_make(&r, p, &p->objs[i], W, maxcells);
		size_t c = strlen(et_profile_path(p, &p->objs[i])) + strlen(r.head);
		chars = c > chars ? c : chars;
		chars = strlen(r.range) > chars ? strlen(r.range) : chars;
		free(r.ws);
	}
	int w = LEFT * 2 + (int)maxcells * CELL + 200, h = TOP + (int)p->nobjs * ROWH + 20;
	if (w < LEFT * 2 + (int)chars * CHAR_W)
		w = LEFT * 2 + (int)chars * CHAR_W;
	if (w < 640)
		w = 640;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
	           "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", w, h);
	fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"13\">samples per %llu KiB window of each object's text "
	           "(darker: hotter; framed: the hottest)</text>\n", LEFT, (unsigned long long)(W >> 10));
	for (size_t i = 0; i < p->nobjs; i++) {
		const struct et_prof_obj *o = &p->objs[i];
		int y = TOP + (int)i * ROWH;
		row_make(&r, p, o, W, maxcells);
		fprintf(f, "<text x=\"%d\" y=\"%d\">", LEFT, y + 10);
		put_text(f, et_profile_path(p, o));
		fprintf(f, "%s</text>\n", r.head);
		uint64_t max = r.n && r.ws[r.hot].samples ? r.ws[r.hot].samples : 1;
		/* the hottest last, so that its frame is drawn over its neighbours' */
		for (size_t j = 0; j < r.n; j++) {
			size_t k = j == r.n - 1 ? r.hot : j >= r.hot ? j + 1 : j;
			size_t c = (size_t)((r.ws[k].start - r.lo) / W);
			if (c >= r.cells)
				continue;
			int shade = heat_shade(r.ws[k].samples, max);
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(255,%d,%d)\" "
			           "stroke=\"%s\"><title>0x%llx: %llu sample%s</title></rect>\n",
			        LEFT + (int)c * CELL, y + CELLS_Y, CELL, CELL_H, shade, shade,
			        k == r.hot ? "black" : "#ccc", (unsigned long long)r.ws[k].start,
			        (unsigned long long)r.ws[k].samples, et_tool_s(r.ws[k].samples));
		}
		if (r.range[0]) {
			fprintf(f, "<text x=\"%d\" y=\"%d\">", LEFT, y + CELLS_Y + CELL_H + 13);
			put_text(f, r.range);
			fputs("</text>\n", f);
		}
		free(r.ws);
	}
	fputs("</svg>\n", f);
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
	if (load(&p, argv[optind]) != 0)
		return ET_EXIT_BAD;
	char ws[16];
	et_tool_size(ws, sizeof ws, W);
	printf("%s: %zu object%s, granule %llu, windows of %s\n", argv[optind], p.nobjs,
	       et_tool_s(p.nobjs), (unsigned long long)p.granule, ws);
	for (size_t i = 0; i < p.nobjs; i++) {
		const struct et_prof_obj *o = &p.objs[i];
		printf("%s  build-id %s  %llu sample%s\n", et_profile_path(&p, o), o->build_id,
		       (unsigned long long)o->total, et_tool_s(o->total));
		struct win *w;
		size_t n = windows_of(&p, o, W, &w);
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
			svg_heatmap(f, &p, W);
			if (et_tool_out_close(t) != 0)
				rc = ET_EXIT_BAD;
		}
		free(t);
	}
	et_profile_free(&p);
	return rc;
}

int et_tool_profile_merge(const char *out, char *const *files, size_t nfiles)
{
	return et_tool_profile_merge_to(NULL, out, files, nfiles);
}

int et_tool_profile_merge_to(struct et_tool_out *opened, const char *out, char *const *files, size_t nfiles)
{
	struct et_profile *ps = calloc(nfiles ? nfiles : 1, sizeof *ps);
	if (!ps) {
		et_tool_err("out of memory");
		if (opened)
			et_tool_out_abort(opened);
		return ET_EXIT_BAD;
	}
	int rc = ET_EXIT_BAD;
	size_t n = 0;
	for (; n < nfiles; n++) {
		if (load(&ps[n], files[n]) != 0)
			goto done;
		if (ps[n].granule != ps[0].granule) {
			et_tool_err("%s: granule %llu, the others have %llu: cannot merge", files[n],
			            (unsigned long long)ps[n].granule, (unsigned long long)ps[0].granule);
			n++;
			goto done;
		}
	}
	bool mine = !opened;    /* t is freed here (the caller's is the caller's) */
	struct et_tool_out *t = opened ? opened : malloc(sizeof *t);
	FILE *f = opened ? opened->f : t ? et_tool_out_open(t, out) : NULL;
	opened = NULL;          /* closed or aborted from here on */
	if (!f) {
		if (!t)
			et_tool_err("out of memory");
		goto done_out;
	}
	char comment[64];
	snprintf(comment, sizeof comment, "merged from %zu profile(s)", nfiles);
	struct et_sink sink;
	et_tool_sink_file(&sink, f);
	int e = et_profile_merge(ps, n, &sink, comment);
	if (e) {
		et_tool_err("%s: %s", out, e == -ENOMEM ? "out of memory" : strerror(-e));
		et_tool_out_abort(t);
	} else if (et_tool_out_close(t) == 0) {
		rc = ET_EXIT_OK;
	}
done_out:
	if (mine)
		free(t);
done:
	if (opened)
		et_tool_out_abort(opened);
	for (size_t i = 0; i < n; i++)
		et_profile_free(&ps[i]);
	free(ps);
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

static int by_fn_heat(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	if (x->heat != y->heat)
		return x->heat > y->heat ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The GNU build-id of an ELF file, in hex ("" when it has none): `profile
 * order` and `collapse --profile`. */
void et_tool_build_id(Elf *e, char out[41])
{
	out[0] = '\0';
	size_t n = 0;
	if (elf_getphdrnum(e, &n) != 0)
		return;
	for (size_t i = 0; i < n && !out[0]; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!d)
			continue;
		size_t off = 0, name, desc;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &name, &desc)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name, "GNU", 4) && nh.n_descsz <= 20) {
				et_hex_build_id((const unsigned char *)d->d_buf + desc, nh.n_descsz, out);
				break;
			}
		}
	}
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
	if (load(&p, argv[optind]) != 0)
		return ET_EXIT_BAD;
	int rc = ET_EXIT_BAD;
	struct fn *fns = NULL;
	size_t nf = 0, cap = 0;
	Elf *e = NULL;
	int fd = open(objpath, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		et_tool_err("%s: %s", objpath, strerror(errno));
		goto out;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		et_tool_err("%s: not an ELF file", objpath);
		goto out;
	}
	char bid[41];
	et_tool_build_id(e, bid);
	const struct et_prof_obj *o = et_profile_find(&p, bid);
	if (!o) {
		et_tool_err("%s: the profile has no samples for this file (build-id %s)", objpath,
		            bid[0] ? bid : "none");
		goto out;
	}
	/* its functions: .symtab, else .dynsym */
	for (int pass = 0; pass < 2 && nf == 0; pass++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t count = d ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; i < count; i++) {
				GElf_Sym s;
				if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size ||
				    s.st_shndx == SHN_UNDEF)
					continue;
				const char *name = elf_strptr(e, sh.sh_link, s.st_name);
				if (!name || !name[0])
					continue;
				if (nf == cap) {
					cap = cap ? cap * 2 : 1024;
					struct fn *q = realloc(fns, cap * sizeof *fns);
					if (!q) {
						et_tool_err("out of memory");
						goto out;
					}
					fns = q;
				}
				fns[nf].name = strdup(name);
				fns[nf].addr = s.st_value;
				fns[nf].size = s.st_size;
				/* its share of each granule it overlaps */
				double h = 0;
				uint64_t G = p.granule;
				for (uint64_t g = s.st_value & ~(G - 1); g < s.st_value + s.st_size; g += G) {
					uint64_t lo = g > s.st_value ? g : s.st_value;
					uint64_t hi = g + G < s.st_value + s.st_size ? g + G : s.st_value + s.st_size;
					uint64_t cnt = et_profile_heat(&p, o, g, g + G);
					if (cnt)
						h += (double)cnt * (double)(hi - lo) / (double)G;
				}
				fns[nf].heat = h;
				nf++;
			}
		}
	}
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
	for (size_t i = 0; i < nf; i++)
		free(fns[i].name);
	free(fns);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	et_profile_free(&p);
	return rc;
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
		return et_cmd_profile_import(argc - 1, argv + 1);
	return et_tool_usage("no profile subcommand '%s' (show, merge, order, import)", argv[1]);
}
