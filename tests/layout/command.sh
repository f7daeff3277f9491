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
mod_of() { # .../enormoustext/cmd/run.c.o -> cmd/run.c; .../opts.c.o -> opts.c; .../profile.pb-c.c.o -> profile.pb-c.c
	local p=${1##*/}
	case $1 in */cmd/*) echo "cmd/${p%.o}" ;; *) echo "${p%.o}" ;; esac
}
group_of() { # cmd/enable_units.c -> enable (the subcommand a file of cmd/ belongs to)
	local b=${1#cmd/}
	b=${b%%.*}
	echo "${b%%_*}"
}
: >"$W/defs"
: >"$W/uses"
for f in "${files[@]}"; do
	[ -f "$f" ] || { echo "FAIL [layout.command]: $f does not exist (build first)"; exit 1; }
	m=$(mod_of "$f")
	nm -g --defined-only "$f" | awk -v m="$m" 'NF == 3 { print $3, m }' >>"$W/defs"
	nm -u "$f" | awk -v m="$m" '{ print $NF, m }' >>"$W/uses"
done
sort -u "$W/defs" >"$W/defs.s"
dups=$(awk '{ print $1 }' "$W/defs.s" | uniq -d)
[ -z "$dups" ] || { echo "FAIL [layout.command]: symbols defined twice: $dups"; fail=1; }

# the classes
awk '$1 == "main" { print $2 }' "$W/defs.s" | sort -u >"$W/dispatch"
awk '$1 ~ /^et_cmd_/ { print $2 }' "$W/defs.s" | sort -u >"$W/subcommands"
[ "$(wc -l <"$W/dispatch")" = 1 ] || { echo "FAIL [layout.command]: not one file defines main(): $(tr '\n' ' ' <"$W/dispatch")"; fail=1; }
class() {
	if grep -qxF "$1" "$W/dispatch"; then echo dispatch
	else case $1 in cmd/*) echo subcommand ;; *) echo shared ;; esac
	fi
}
# every file that defines a subcommand is in cmd/
while read -r m; do
	case $m in cmd/*) ;; *) echo "FAIL [layout.command]: $m defines a subcommand (et_cmd_*) but is not in cmd/"; fail=1 ;; esac
done <"$W/subcommands"
[ "$(grep -c '^cmd/' <<<"$(for f in "${files[@]}"; do mod_of "$f"; done)")" -ge 10 ] ||
	{ echo "FAIL [layout.command]: fewer than 10 files under cmd/: the subcommands are not in their folder"; fail=1; }

# edges, user -> definer, with the symbols behind each
sort "$W/uses" | join - "$W/defs.s" | awk '$2 != $3 { print $2, $3, $1 }' | sort >"$W/calls"
awk '{ print $1, $2 }' "$W/calls" | sort -u >"$W/edges"
syms() { awk -v a="$1" -v b="$2" '$1 == a && $2 == b { printf "%s%s", n++ ? " " : "", $3 }' "$W/calls"; }

echo "the command's files (user -> what it calls):"
for m in $( (awk '{ print $1; print $2 }' "$W/edges"; awk '{ print $2 }' "$W/defs.s") | sort -u); do
	printf '  %-14s %-10s ->%s\n' "$m" "$(class "$m")" \
		"$(awk -v m="$m" '$1 == m { printf " %s", $2 }' "$W/edges")"
done

while read -r a b; do
	ca=$(class "$a") cb=$(class "$b")
	why=""
	case $ca/$cb in
	dispatch/subcommand | dispatch/shared | subcommand/shared | shared/shared) ;;
	subcommand/subcommand)
		[ "$(group_of "$a")" = "$(group_of "$b")" ] || why="a subcommand calls another subcommand's file" ;;
	shared/subcommand) why="a shared file calls into a subcommand" ;;
	*/dispatch) why="main.c dispatches and nothing calls into it" ;;
	*) why="against the rules ($ca -> $cb)" ;;
	esac
	if [ -n "$why" ]; then
		echo "FAIL [layout.command]: $a calls into $b ($(syms "$a" "$b")): $why"
		fail=1
	fi
done <"$W/edges"

# libelf: only elffile.c opens ELF files
for f in "${files[@]}"; do
	m=$(mod_of "$f")
	[ "$m" = elffile.c ] && continue
	opens=$(nm -u "$f" | awk '$NF ~ /^(elf_begin|elf_memory|elf_version)$/ { printf " %s", $NF }')
	if [ -n "$opens" ]; then
		echo "FAIL [layout.command]: $m opens ELF files with libelf itself ($opens): elffile.c does"
		fail=1
	fi
done

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
