#!/bin/bash
# command.sh OBJECTS — the `enormoustext` command's files call each other
# as bpftool's and git's do: a tree, never a knot.  Its folders show the
# two kinds of rooms (tools/CMakeLists.txt):
#
#   main.c       dispatches: the file that defines main(); it calls the
#                subcommands (et_cmd_*) and shared files
#   cmd/         the subcommands: each one's front file (cmd/NAME.c, which
#                defines et_cmd_NAME...) and its parts (cmd/NAME_*.c); a
#                subcommand's files call shared files and the files of the
#                same subcommand only, never another subcommand's, never
#                main.c; every file that defines an et_cmd_* function is
#                in cmd/
#   shared       every file beside cmd/ (ELF facts, the loader's list, the
#                library to preload, host probes, import formats, the heat
#                map, messages, ...): it calls shared files only, never
#                into cmd/
#
# and no two files call each other in a circle, however long.  One owner
# for opening ELF files with libelf: only elffile.c calls elf_begin,
# elf_memory or elf_version.
#
# OBJECTS: the command's object files (a ;-separated list, as CMake's
# $<TARGET_OBJECTS:enormoustext_tool> gives it), each named after its
# source file, under cmd/ for a subcommand's.  The graph is read from the
# objects themselves (nm: which file defines each symbol, which file uses
# it; functions and variables alike), so it is what the linker sees, not
# what the comments say.  Prints the graph (and any knot: the files that
# reach each other) either way; fails on a call against the rules or a
# cycle.
set -u
objs=${1:?usage: command.sh OBJECTS}
W=$(mktemp -d) || exit 2
trap 'rm -rf "$W"' EXIT
fail=0
IFS=';' read -r -a files <<<"$objs"
[ "${#files[@]}" -ge 10 ] || { echo "FAIL [layout.command]: only ${#files[@]} object files given"; exit 1; }
ncmd=0
for f in "${files[@]}"; do
	[ -f "$f" ] || { echo "FAIL [layout.command]: $f does not exist (build first)"; exit 1; }
	case $f in */cmd/*) ncmd=$((ncmd + 1)) ;; esac
done
# One nm for all the objects (a process per file and per question took
# half a minute of a busy machine), split by nm_split.awk; a file's name
# is its module: .../enormoustext/cmd/run.c.o -> cmd/run.c; .../opts.c.o
# -> opts.c; .../profile.pb-c.c.o -> profile.pb-c.c.
nm -A -g "${files[@]}" >"$W/nm" || { echo "FAIL [layout.command]: nm could not read the objects"; exit 1; }
awk -v naming=command -v defs="$W/defs" -v uses="$W/uses" -f "$(dirname "$0")/nm_split.awk" "$W/nm"
sort -u "$W/defs" >"$W/defs.s"
dups=$(awk '{ print $1 }' "$W/defs.s" | uniq -d)
[ -z "$dups" ] || { echo "FAIL [layout.command]: symbols defined twice: $dups"; fail=1; }

# the classes
awk '$1 == "main" { print $2 }' "$W/defs.s" | sort -u >"$W/dispatch"
awk '$1 ~ /^et_cmd_/ { print $2 }' "$W/defs.s" | sort -u >"$W/subcommands"
[ "$(wc -l <"$W/dispatch")" = 1 ] || { echo "FAIL [layout.command]: not one file defines main(): $(tr '\n' ' ' <"$W/dispatch")"; fail=1; }
# every file that defines a subcommand is in cmd/
while read -r m; do
	case $m in cmd/*) ;; *) echo "FAIL [layout.command]: $m defines a subcommand (et_cmd_*) but is not in cmd/"; fail=1 ;; esac
done <"$W/subcommands"
[ "$ncmd" -ge 10 ] ||
	{ echo "FAIL [layout.command]: fewer than 10 files under cmd/: the subcommands are not in their folder"; fail=1; }

# edges, user -> definer, with the symbols behind each
sort "$W/uses" | join - "$W/defs.s" | awk '$2 != $3 { print $2, $3, $1 }' | sort >"$W/calls"
awk '{ print $1, $2 }' "$W/calls" | sort -u >"$W/edges"

# The graph printed, and each edge against the rules, in one pass: a file
# is main.c's kind (dispatch: it defines main()), a subcommand's (under
# cmd/; its group is the name before the first _ or .: cmd/enable_units.c
# -> enable) or shared.
awk -v dispatch="$W/dispatch" -v calls="$W/calls" -v edges="$W/edges" '
function class(m) { return (m in disp) ? "dispatch" : (m ~ /^cmd\//) ? "subcommand" : "shared" }
function group(m,   b) { b = m; sub(/^cmd\//, "", b); sub(/\..*/, "", b); sub(/_.*/, "", b); return b }
BEGIN {
	while ((getline l <dispatch) > 0) disp[l] = 1
	while ((getline l <calls) > 0) {
		split(l, c, " ")
		k = c[1] SUBSEP c[2]
		if (k in syms) syms[k] = syms[k] " " c[3]
		else syms[k] = c[3]
	}
	ne = 0
	while ((getline l <edges) > 0) {
		split(l, e, " ")
		ea[++ne] = e[1]
		eb[ne] = e[2]
		out[e[1]] = out[e[1]] " " e[2]
	}
}
{ node[$2] = 1 }   # defs.s: every file that defines something
END {
	for (i = 1; i <= ne; i++) { node[ea[i]] = 1; node[eb[i]] = 1 }
	print "the command'"'"'s files (user -> what it calls):"
	cmd = "sort"
	for (m in node) printf "  %-14s %-10s ->%s\n", m, class(m), out[m] | cmd
	close(cmd)
	bad = 0
	for (i = 1; i <= ne; i++) {
		a = ea[i]; b = eb[i]; ca = class(a); cb = class(b); why = ""
		r = ca "/" cb
		if (r == "dispatch/subcommand" || r == "dispatch/shared" || r == "subcommand/shared" || r == "shared/shared") why = ""
		else if (r == "subcommand/subcommand") { if (group(a) != group(b)) why = "a subcommand calls another subcommand'"'"'s file" }
		else if (r == "shared/subcommand") why = "a shared file calls into a subcommand"
		else if (cb == "dispatch") why = "main.c dispatches and nothing calls into it"
		else why = "against the rules (" ca " -> " cb ")"
		if (why != "") {
			printf "FAIL [layout.command]: %s calls into %s (%s): %s\n", a, b, syms[a SUBSEP b], why
			bad = 1
		}
	}
	exit bad
}' "$W/defs.s" || fail=1

# libelf: only elffile.c opens ELF files
awk '$1 ~ /^(elf_begin|elf_memory|elf_version)$/ && $2 != "elffile.c" { print $2, $1 }' "$W/uses" | sort -u |
	awk '{ if (!($1 in o)) { n++; order[n] = $1 }; o[$1] = o[$1] " " $2 }
	END { for (i = 1; i <= n; i++) printf "FAIL [layout.command]: %s opens ELF files with libelf itself (%s): elffile.c does\n", order[i], o[order[i]]; exit n > 0 }' ||
	fail=1

# cycles: tsort says whether there is one; the knots are the sets of files
# that reach each other (transitive closure of the edges)
if ! tsort "$W/edges" >/dev/null 2>&1; then
	echo "FAIL [layout.command]: files call each other in a circle; the knots (files that reach each other):"
	awk '
	{ n[$1] = 1; n[$2] = 1; r[$1, $2] = 1 }
	END {
		k = 0
		for (v in n) nodes[++k] = v
		for (m = 1; m <= k; m++)
			for (i = 1; i <= k; i++)
				if (r[nodes[i], nodes[m]])
					for (j = 1; j <= k; j++)
						if (r[nodes[m], nodes[j]])
							r[nodes[i], nodes[j]] = 1
		for (i = 1; i <= k; i++) {
			if (done[nodes[i]] || !r[nodes[i], nodes[i]])
				continue
			line = ""
			c = 0
			for (j = 1; j <= k; j++)
				if (r[nodes[i], nodes[j]] && r[nodes[j], nodes[i]]) {
					done[nodes[j]] = 1
					c++
					line = line " " nodes[j]
				}
			print "  " c " files:" line
		}
	}' "$W/edges" | sort
	fail=1
fi
[ $fail = 0 ] || exit 1
echo "PASS [layout.command]: $(wc -l <"$W/edges") calls between ${#files[@]} files: main.c dispatches to $(wc -l <"$W/subcommands") subcommand files in cmd/, whose files call their own parts and shared files only; no shared file calls into cmd/; no cycle"
