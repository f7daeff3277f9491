/*
 * heatmap.h — the heat map of a profile as SVG (heatmap.c), for `profile
 * show --svg`: each object's text as a row of windows shaded by their
 * samples.  A PNG is one command away: rsvg-convert -o heat.png heat.svg.
 */
#ifndef ET_TOOL_HEATMAP_H
#define ET_TOOL_HEATMAP_H

#include "tool.h"

/* The heat map of p, in windows of W bytes, as one SVG document on f. */
void et_tool_heatmap_svg(FILE *f, const struct et_profile *p, uint64_t W);

#endif
