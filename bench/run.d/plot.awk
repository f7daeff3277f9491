# plot.awk — bench/run's summary.csv as an SVG bar chart: one bar per
# comparison (its median speed-up over the first variant), the min..max
# over the rounds as a line, 1.0 marked.
#   awk -F, -f plot.awk summary.csv > results.svg
NR > 1 {
	n++
	lab[n] = $1 ": " $2 " - " $4 " vs " $3
	med[n] = $5; lo[n] = $6; hi[n] = $7
	if (length(lab[n]) > maxlab) maxlab = length(lab[n])
}
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
END {
	left = int(maxlab * 6.6) + 20; plot = 560; w = left + plot + 70
	rowh = 22; top = 40; h = top + n * rowh + 40
	xmin = 0.7; xmax = 1.3
	for (i = 1; i <= n; i++) { if (lo[i] < xmin) xmin = lo[i]; if (hi[i] > xmax) xmax = hi[i] }
	if (xmin < 0.3) xmin = 0.3
	if (xmax > 3) xmax = 3
	sx = plot / (xmax - xmin)
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", w, h
	printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
	printf "<text x=\"10\" y=\"20\" font-size=\"14\">libenormoustext bench/run: median speed-up over the first variant (bar), min..max over the rounds (line); &gt; 1 is better</text>\n"
	x1 = left + (1 - xmin) * sx
	printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>\n", x1, top - 5, x1, top + n * rowh
	for (t = 0.3; t <= 3.0001; t += 0.1)
		if (t >= xmin - 1e-9 && t <= xmax + 1e-9)
			printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%.1f</text>\n", left + (t - xmin) * sx, top + n * rowh + 15, t
	for (i = 1; i <= n; i++) {
		y = top + (i - 1) * rowh
		xm = left + (med[i] - xmin) * sx
		if (xm < left) xm = left
		if (xm > left + plot) xm = left + plot
		xa = (xm < x1) ? xm : x1; bw = (xm < x1) ? x1 - xm : xm - x1
		printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 8, y + 14, esc(lab[i])
		printf "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"%s\"/>\n", xa, y + 3, bw, (med[i] >= 1) ? "#4a8" : "#c66"
		l = left + (lo[i] - xmin) * sx; r = left + (hi[i] - xmin) * sx
		if (l < left) l = left
		if (r > left + plot) r = left + plot
		printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>\n", l, y + 10, r, y + 10
		printf "<text x=\"%.1f\" y=\"%d\" fill=\"#333\">%.3f</text>\n", ((r > xm) ? r : xm) + 4, y + 14, med[i]
	}
	print "</svg>"
}
