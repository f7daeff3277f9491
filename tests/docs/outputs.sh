#!/bin/bash
# outputs.sh — every command the documents show with its output prints
# what they show.
#
#   tests/docs/outputs.sh SRCDIR BUILDDIR [FILE.md...]
#       (default: README.md, docs/*.md, tools/README.md, examples/README.md)
#   tests/docs/outputs.sh --self-test      the matcher, on made-up documents
#
# The convention (docs/README.md, "Commands and their output"):
#
# - A *transcript* is a fenced code block with lines that start with "$ ".
#   Each such line is a command, run from the top of the source tree; the
#   lines under it, up to the next "$ " line or the end of the block, are
#   what it prints (standard output and error together, in order).  A
#   command line's trailing "# ..." is a comment, as in the shell.
# - In the output, "…" stands for any text within a line, and a line that
#   is only "…" for any number of lines (none too).  Two or more blanks in
#   a row stand for one or more (columns padded to a width that varies);
#   trailing blanks are ignored.
# - The line before the block (blank lines aside) may be one HTML comment
#   that says how to run it, items separated by ";":
#       <!-- output: figures vary -->        every number shown (123, 4.0,
#                                            1,350, 0x2000) stands for any
#                                            number: times, sizes, PIDs
#       <!-- output: needs clang -->         run only where clang is on the
#                                            PATH (or a path relative to the
#                                            top of the tree exists); else
#                                            listed as not run, with why
#       <!-- output: not run: REASON -->     never run (needs systemd, a
#                                            server, a PMU, root's changes
#                                            to the host...); listed
#   A command is run as shown, as whoever runs the tests (root on CI): a
#   block that changes the host must be marked not run, and a command
#   that starts with sudo is refused unrun.
# - An ```sh block shows commands only: a line starting with "#" right
#   under a command is taken for output shown the old way and refused.
#
# The commands run in a scratch copy of the tree's top level (symbolic
# links to the source's entries; `build` is BUILDDIR), with BUILDDIR's
# `enormoustext` first on the PATH and no ENORMOUSTEXT_* variable or
# LD_PRELOAD from the caller, LC_ALL=C, each under a 60 s timeout.  Every
# block not run is listed with its reason at the end.
#
# Exit 0 pass, 1 fail (each difference: file:line, the command, the first
# line that differs, what was expected and what came), 2 usage, 77 when
# BUILDDIR has no enormoustext command (built without libelf).
set -u
LC_ALL=C
export LC_ALL
ELL=$'\xe2\x80\xa6'        # …

# ---- parse FILE: one record a line, fields separated by tabs
#   B FILE LINE RUN|NOTRUN FIGURES(0|1) NEEDS REASON   a transcript
#   C TEXT                                              a command
#   E TEXT                                              a line it prints
#   X FILE LINE WHY                                     a broken convention
parse() {
	awk -v F="$1" -v ELL="$ELL" '
	function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
	function flush_block(   i, has, first, status, reason, figures, needs, items, n, it, k) {
		has = 0; first = ""
		for (i = 1; i <= nb; i++) {
			if (body[i] ~ /^\$ /) has = 1
			if (first == "" && trim(body[i]) != "") first = body[i]
		}
		status = "RUN"; reason = ""; figures = 0; needs = ""
		if (marker != "") {
			if (!has) { print "X\t" F "\t" markerline "\tthe comment <!-- output: " marker " --> is not followed by a block of \"$ \" commands"; return }
			n = split(marker, items, /;/)
			for (k = 1; k <= n; k++) {
				it = trim(items[k])
				if (it == "figures vary") figures = 1
				else if (it ~ /^needs /) needs = needs " " trim(substr(it, 7))
				else if (it ~ /^not run: ./) { status = "NOTRUN"; reason = trim(substr(it, 9)) }
				else { print "X\t" F "\t" markerline "\tunknown item \"" it "\" in <!-- output: " marker " -->"; return }
			}
		}
		if (!has) return
		if (first !~ /^\$ /) { print "X\t" F "\t" start "\toutput before the first \"$ \" command of the block"; return }
		print "B\t" F "\t" start "\t" status "\t" figures "\t" trim(needs) "\t" reason
		for (i = 1; i <= nb; i++) {
			if (body[i] ~ /^\$ /) print "C\t" substr(body[i], 3)
			else print "E\t" body[i]
		}
	}
	{
		line = $0
		if (!fence && match(line, /^ *(```|~~~)/)) {
			fence = 1; indent = RLENGTH - 3; start = NR; nb = 0
			lang = substr(line, RLENGTH + 1); gsub(/[ \t]/, "", lang)
			prevcmd = 0
			if (pending != "") { marker = pending; markerline = pendingline } else marker = ""
			pending = ""
			next
		}
		if (fence && line ~ /^ *(```|~~~) *$/) {
			fence = 0; flush_block(); next
		}
		if (fence) {
			# less the indentation of the fence
			for (k = 0; k < indent && substr(line, 1, 1) == " "; k++) line = substr(line, 2)
			body[++nb] = line
			if (lang == "sh" || lang == "bash" || lang == "shell") {
				if (line ~ /^#/ && prevcmd)
					print "X\t" F "\t" NR "\ta \"#\" line right under a command in an ```" lang " block looks like its output: show it as a \"$ \" transcript (or leave a blank line above a comment)"
				prevcmd = (trim(line) != "" && line !~ /^#/)
			}
			next
		}
		if (match(line, /^[ \t]*<!-- *output: *.* *-->[ \t]*$/)) {
			if (pending != "") print "X\t" F "\t" pendingline "\t<!-- output: " pending " --> is not followed by a code block"
			pending = line
			sub(/^[ \t]*<!-- *output: */, "", pending); sub(/ *-->[ \t]*$/, "", pending)
			pendingline = NR
			next
		}
		if (trim(line) != "" && pending != "") {
			print "X\t" F "\t" pendingline "\t<!-- output: " pending " --> is not followed by a code block"
			pending = ""
		}
	}
	END {
		if (fence) print "X\t" F "\t" start "\ta code block that does not end"
		if (pending != "") print "X\t" F "\t" pendingline "\t<!-- output: " pending " --> is not followed by a code block"
	}' "$1"
}

# ---- match EXPECTED ACTUAL FIGURES: 0 when every line matches; else
# prints where they part
match_output() {
	awk -v ELL="$ELL" -v FIG="$3" '
	function rx(s,   out, c, num) {
		out = ""
		while (s != "") {
			if (substr(s, 1, length(ELL)) == ELL) { out = out ".*"; s = substr(s, length(ELL) + 1); continue }
			if (match(s, /^[ \t][ \t]+/)) { out = out "[ \t]+"; s = substr(s, RLENGTH + 1); continue }
			if (FIG && match(s, /^(0x[0-9a-fA-F]+|[0-9]+([.,][0-9]+)*)/)) {
				out = out "(0x[0-9a-fA-F]+|[0-9]+([.,][0-9]+)*)"; s = substr(s, RLENGTH + 1); continue
			}
			c = substr(s, 1, 1); s = substr(s, 2)
			if (c == "\\") out = out "\\\\"
			else if (c == "^") out = out "\\^"
			else if (index(".[]$|()*+?{}/", c)) out = out "[" c "]"
			else out = out c
		}
		return "^" out "$"
	}
	function rstrip(s) { sub(/[ \t\r]+$/, "", s); return s }
	FNR == NR { e = rstrip($0); m++; exp_[m] = e; wild[m] = (e ~ "^[ \t]*" ELL "$"); re[m] = rx(e); next }
	{ n++; act[n] = rstrip($0) }
	END {
		# ok[i,j]: expected lines i..m match actual lines j..n
		for (j = n + 1; j >= 1; j--) ok[m + 1, j] = (j == n + 1)
		for (i = m; i >= 1; i--)
			for (j = n + 1; j >= 1; j--) {
				if (wild[i]) ok[i, j] = ok[i + 1, j] || (j <= n && ok[i, j + 1])
				else ok[i, j] = (j <= n && act[j] ~ re[i] && ok[i + 1, j + 1])
			}
		if (ok[1, 1]) exit 0
		# where they part: the longest run of expected lines matched in order
		i = 1; j = 1
		while (i <= m) {
			if (wild[i]) {
				while (j <= n && i < m && !(act[j] ~ re[i + 1])) j++
				i++; continue
			}
			if (j <= n && act[j] ~ re[i]) { i++; j++; continue }
			break
		}
		if (i <= m) {
			printf "    expected line %d: %s\n", i, exp_[i]
			printf "    but line %d was:   %s\n", j, (j <= n ? act[j] : "(the output ended)")
		} else
			printf "    after every expected line, %d more line(s), the first: %s\n", n - j + 1, act[j]
		exit 1
	}' "$1" "$2"
}

# ---- run the transcripts of the files; $W is the scratch directory, $TREE
# the copy of the top level commands run in
check_files() {
	local f file line status fig needs reason kind text why
	rm -f "$W"/block.* "$W"/cmd.* "$W"/exp.*
	: >"$W/records"
	for f in "$@"; do
		[ -f "$f" ] || { echo "  $f: no such file"; BAD=1; continue; }
		parse "$f" >>"$W/records"
	done
	while IFS=$'\t' read -r kind file line why; do
		echo "  $file:$line: $why"; BAD=1
	done < <(grep '^X' "$W/records")
	local nb=0 ncmd=0 nnot=0 blockno=0
	# split into blocks: block N's commands and expected lines in files
	# (fields of a block file apart by \037: read keeps empty ones)
	awk -v D="$W" -v US=$'\037' -F'\t' '
		$1 == "B" { b++; nc = 0; print $2 US $3 US $4 US $5 US $6 US $7 > (D "/block." b); close(D "/block." b); next }
		$1 == "C" { nc++; f = D "/cmd." b "." nc; print substr($0, 3) > f; close(f); printf "" > (D "/exp." b "." nc); close(D "/exp." b "." nc); next }
		$1 == "E" { f = D "/exp." b "." nc; print substr($0, 3) >> f; close(f); next }
	' "$W/records"
	while [ -f "$W/block.$((blockno + 1))" ]; do
		blockno=$((blockno + 1))
		IFS=$'\037' read -r file line status fig needs reason <"$W/block.$blockno"
		nb=$((nb + 1))
		if [ "$status" = NOTRUN ]; then
			NOTRUN+=("$file:$line: $reason"); nnot=$((nnot + 1)); continue
		fi
		local missing="" nd
		for nd in $needs; do
			if [ "${nd#*/}" != "$nd" ]; then [ -e "$TREE/$nd" ] || missing="$missing $nd"
			else command -v "$nd" >/dev/null 2>&1 || missing="$missing $nd"; fi
		done
		if [ -n "$missing" ]; then
			NOTRUN+=("$file:$line: needs$missing, not found here"); nnot=$((nnot + 1)); continue
		fi
		local k=1
		while [ -f "$W/cmd.$blockno.$k" ]; do
			text=$(cat "$W/cmd.$blockno.$k")
			# a transcript is run as shown, by whoever runs the tests (root on
			# CI): one that asks for root changes the host and is never run
			case $text in
			sudo\ * | *[\;\&\|]\ sudo\ *)
				echo "  $file:$line: \$ $text"
				echo "    asks for root (sudo): not run; mark the block <!-- output: not run: REASON -->"
				BAD=1; k=$((k + 1)); continue ;;
			esac
			ncmd=$((ncmd + 1))
			(cd "$TREE" && timeout 60 bash -c "$text") >"$W/out" 2>&1 </dev/null
			if ! match_output "$W/exp.$blockno.$k" "$W/out" "$fig" >"$W/why"; then
				echo "  $file:$line: \$ $text"
				cat "$W/why"
				echo "    (its whole output: $(wc -l <"$W/out") line(s))"
				sed 's/^/    | /' "$W/out" | head -40
				BAD=1
			fi
			k=$((k + 1))
		done
	done
	NBLOCKS=$nb NCMDS=$ncmd NNOT=$nnot
}

self_test() {
	W=$(mktemp -d "${TMPDIR:-/tmp}/docs-outputs.XXXXXX") || exit 2
	trap 'rm -rf "$W"' EXIT
	TREE=$W/tree; mkdir -p "$TREE"
	local good=$W/good.md bad fails=0 case
	cat >"$good" <<EOF
Some text.

\`\`\`
\$ printf 'a\nb 12 ms\nc\n'
a
b ${ELL} ms
c
\$ printf 'x\ny\nz\nw\n'   # a comment
x
${ELL}
w
\$ printf '  /a/long/path  text 12\n'
  ${ELL}/path        text 12
\`\`\`

<!-- output: figures vary -->
\`\`\`
\$ echo 'took 3.5 s for 1,350 MiB at 0x7f00'
took 1.0 s for 2 MiB at 0x200000
\`\`\`

<!-- output: not run: needs a server -->
\`\`\`
\$ false
anything
\`\`\`

<!-- output: needs no-such-command-here -->
\`\`\`
\$ no-such-command-here
whatever
\`\`\`

  \`\`\`
  \$ echo indented
  indented
  \`\`\`
EOF
	BAD=0 NOTRUN=()
	check_files "$good" >"$W/log"
	if [ "$BAD" != 0 ] || [ "$NCMDS" != 5 ] || [ "${#NOTRUN[@]}" != 2 ]; then
		cat "$W/log"; echo "FAIL [docs.outputs.self-test]: a right document: BAD=$BAD, $NCMDS commands run (5), ${#NOTRUN[@]} not run (2)"; exit 1
	fi
	case "${NOTRUN[*]}" in
	*"good.md:23: needs a server "*"good.md:29: needs no-such-command-here, not found here") ;;
	*) echo "FAIL [docs.outputs.self-test]: the blocks not run are listed as '${NOTRUN[*]}', not with their lines and reasons"; exit 1 ;;
	esac
	# each of these must fail
	for case in 's/^b … ms$/b 12 s/' 's/^c$/C/' 's/^w$/v/' 's/^took 1.0 s/took 1.0 ms/' \
		's/^  indented$/  indent/' 's/^…$/y/' 's/^x$/x2/' 's|^  …/path        text 12$|  …/path text  12|' \
		's/^\$ printf .x/# printf '"'"'x/' 's/^<!-- output: not run: needs a server -->$/<!-- output: no run -->/' \
		's/^<!-- output: figures vary -->$/<!-- output: figures vary -->\n\nText./' \
		's/^  \$ echo indented$/  $ sudo echo indented/'; do
		bad=$W/bad.md
		sed "$case" "$good" >"$bad"
		cmp -s "$good" "$bad" && { echo "FAIL [docs.outputs.self-test]: the case '$case' changed nothing"; exit 1; }
		BAD=0 NOTRUN=()
		check_files "$bad" >"$W/log"
		if [ "$BAD" = 0 ]; then
			echo "FAIL [docs.outputs.self-test]: a document changed by '$case' passed"; fails=1
		fi
	done
	[ $fails = 0 ] || exit 1
	echo "PASS [docs.outputs.self-test]: the matcher takes a right document (5 commands, 2 blocks not run) and refuses each of 12 changes to it"
	exit 0
}

[ "${1:-}" = --self-test ] && self_test
[ $# -ge 2 ] || { echo "usage: $0 SRCDIR BUILDDIR [FILE.md...] | --self-test" >&2; exit 2; }
src=$(cd "$1" && pwd) || exit 2
build=$(cd "$2" && pwd) || exit 2
shift 2
tool=$build/tools/enormoustext
if [ ! -x "$tool" ]; then
	echo "SKIP [docs.outputs]: $tool was not built (CMake leaves the command out without libelf-dev): the transcripts need it"
	exit 77
fi
cd "$src" || exit 2
if [ $# -gt 0 ]; then files=("$@")
else files=(README.md docs/*.md tools/README.md examples/README.md); fi

W=$(mktemp -d "$build/docs-outputs.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
TREE=$W/tree
mkdir -p "$TREE" "$W/bin" || exit 2
for e in "$src"/* "$src"/.[!.]*; do
	[ -e "$e" ] || continue
	case ${e##*/} in build* | .git) continue ;; esac
	ln -s "$e" "$TREE/${e##*/}"
done
ln -s "$build" "$TREE/build"
ln -s "$tool" "$W/bin/enormoustext"
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(ENORMOUSTEXT[A-Za-z0-9_]*\)=.*/\1/p')
unset LD_PRELOAD LD_LIBRARY_PATH
export PATH="$W/bin:$PATH"

BAD=0 NOTRUN=()
t0=$SECONDS
check_files "${files[@]}"
echo "docs.outputs: ${#NOTRUN[@]} of $NBLOCKS transcripts not run:"
for r in "${NOTRUN[@]}"; do echo "    $r"; done
[ $BAD = 0 ] || { echo "FAIL [docs.outputs]: the documents above do not show what their commands print (or break the convention)"; exit 1; }
echo "PASS [docs.outputs]: $NCMDS commands of $((NBLOCKS - ${#NOTRUN[@]})) transcripts in ${#files[@]} files print what the documents show ($((SECONDS - t0)) s)"
