/*
 * tools/enormoustext/heatmap.c — a profile's heat map as SVG (see
 * heatmap.h).
 *
 * One row an object: its name, its samples, its hottest window and that
 * window's share on the first line; its windows below, one cell each from
 * the first with samples to the last (at most 400), red shaded from pale
 * (cold) to dark (its hottest, framed in black), each with a tooltip of its
 * address and samples; the addresses the row spans on the line under it.
 * Everything a picture needs is written in it, so a converted PNG
 * (rsvg-convert, Inkscape, a browser) says as much as the SVG.
 *
 * Owns: the layout and the colours of the heat map.
 * May call: profiles.c (an object's windows), core (profile), common.c.
 * Never: writes the file's bytes anywhere but the stream it is given (the
 * caller opens and closes it: output.c).
 */
#include "heatmap.h"
#include "profiles.h"

#include <stdlib.h>
#include <string.h>

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
	struct et_tool_win *ws;
	size_t n, hot, cells;   /* windows with samples, the hottest, cells drawn */
	uint64_t lo, span;      /* the first window, windows from it to the last */
	char head[160], range[160];
};

static void row_make(struct row *r, const struct et_profile *p, const struct et_prof_obj *o, uint64_t W,
                     size_t maxcells)
{
	r->n = et_tool_profile_windows(p, o, W, &r->ws);
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
	const struct et_tool_win *hot = &r->ws[r->hot];
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

void et_tool_heatmap_svg(FILE *f, const struct et_profile *p, uint64_t W)
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
