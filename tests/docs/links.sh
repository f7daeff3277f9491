#!/bin/bash
# links.sh — every relative link of the project's Markdown documents leads
# somewhere: the file or directory exists and, for a link into a Markdown
# file with #anchor, that file has a heading with that anchor (GitHub's
# rule: lower case; anything but letters, digits, spaces, '-' and '_'
# dropped; spaces become '-'; a repeated heading gets -1, -2, ...).
#
#   tests/docs/links.sh SRCDIR [FILE.md...]   (default: every tracked *.md,
#                                              or every *.md outside build*/)
#
# Web links (http:, https:, mailto:) are not followed.  Exit 0 pass, 1 fail
# (each broken link on its own line: file:line: link: why).
set -u
src=$(cd "${1:?usage: $0 SRCDIR [FILE.md...]}" && pwd) || exit 2
shift
cd "$src" || exit 2
if [ $# -gt 0 ]; then
	files=("$@")
elif git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files -co --exclude-standard '*.md')
else
	mapfile -t files < <(find . -name '*.md' -not -path './build*' -not -path './.git/*' | sed 's|^\./||')
fi

# anchors FILE: one anchor a line
anchors() {
	LC_ALL=C awk '
		/^(```|~~~)/ { fence = !fence; next }
		fence { next }
		/^#+ / {
			h = $0; sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h)
			h = tolower(h)
			gsub(/[^a-z0-9 _-]/, "", h)
			gsub(/ /, "-", h)
			if (h in seen) { seen[h]++; print h "-" seen[h] } else { seen[h] = 0; print h }
		}' "$1"
}

bad=0 n=0
for f in "${files[@]}"; do
	[ -f "$f" ] || { echo "  $f: no such file"; bad=1; continue; }
	dir=$(dirname "$f")
	# file:line:target for every [text](target) outside code fences and spans
	while IFS=$'\t' read -r line target; do
		n=$((n + 1))
		case $target in http:* | https:* | mailto:*) continue ;; esac
		path=${target%%#*} anchor=
		[ "$path" != "$target" ] && anchor=${target#*#}
		if [ -z "$path" ]; then to=$f; else to=$dir/$path; fi
		if [ ! -e "$to" ]; then
			echo "  $f:$line: ($target): $to does not exist"; bad=1; continue
		fi
		if [ -n "$anchor" ] && [ "${to%.md}" != "$to" ] && [ -f "$to" ]; then
			anchors "$to" | grep -qxF -- "$anchor" ||
				{ echo "  $f:$line: ($target): no heading of $to has the anchor #$anchor"; bad=1; }
		fi
	done < <(LC_ALL=C awk '
		/^(```|~~~)/ { fence = !fence; next }
		fence { next }
		{
			l = $0
			gsub(/`[^`]*`/, "", l)           # code spans
			while (match(l, /\]\([^) ]+\)/)) {
				print NR "\t" substr(l, RSTART + 2, RLENGTH - 3)
				l = substr(l, RSTART + RLENGTH)
			}
		}' "$f")
done
[ $bad = 0 ] || { echo "FAIL [docs.links]: broken links (above)"; exit 1; }
echo "PASS [docs.links]: $n links in ${#files[@]} Markdown files lead somewhere"
