#!/bin/bash
# modules.sh OBJECTS SRCDIR — the library's modules call each other in one
# direction only, and along the layers:
#
#   core/  ──▶ os/            (core: no process state; os: system calls)
#   runtime/ ──▶ core/, os/   (the process's passes, stages and API)
#   interpose/ ──▶ runtime/, core/, os/   (wrappers of libc/loader symbols)
#
# OBJECTS: the object files of the library (a ;-separated list, as CMake's
# $<TARGET_OBJECTS:...> gives it), each named after its source file.  The
# graph is read from the objects themselves (nm: which module defines each
# symbol, which module uses it), so it is what the linker sees, not what
# the comments say.  Fails on a call against the layers or any cycle
# between modules; prints the graph either way.  Also checks the includes
# (from SRCDIR): no file of a floor includes a header of a floor above it,
# and the command (tools/enormoustext) includes no runtime/ or interpose/
# header.
set -u
objs=${1:?usage: modules.sh OBJECTS SRCDIR}
src=${2:?usage: modules.sh OBJECTS SRCDIR}
W=$(mktemp -d) || exit 2
trap 'rm -rf "$W"' EXIT
fail=0
IFS=';' read -r -a files <<<"$objs"
[ "${#files[@]}" -ge 10 ] || { echo "FAIL [layout.modules]: only ${#files[@]} object files given"; exit 1; }
for f in "${files[@]}"; do
	[ -f "$f" ] || { echo "FAIL [layout.modules]: $f does not exist (build first)"; exit 1; }
done
# One nm for all the objects, split by nm_split.awk; a file's module:
# .../libenormoustext/src/runtime/pass.c.o -> runtime/pass, its layer the
# folder.
nm -A -g "${files[@]}" >"$W/nm" || { echo "FAIL [layout.modules]: nm could not read the objects"; exit 1; }
awk -v naming=modules -v defs="$W/defs" -v uses="$W/uses" -f "$(dirname "$0")/nm_split.awk" "$W/nm"
for f in "${files[@]}"; do
	m=${f%.o}
	m=${m%.c}
	m=${m#*/libenormoustext/src/}
	case $m in core/* | os/* | runtime/* | interpose/*) ;; *) echo "FAIL [layout.modules]: $f is in no layer"; fail=1 ;; esac
done
touch "$W/defs" "$W/uses"
sort -u "$W/defs" >"$W/defs.s"
dups=$(awk '{ print $1 }' "$W/defs.s" | uniq -d)
[ -z "$dups" ] || { echo "FAIL [layout.modules]: symbols defined twice: $dups"; fail=1; }
# edges: user -> definer (and the symbols behind each)
sort "$W/uses" | join - "$W/defs.s" | awk '$2 != $3 { print $2, $3, $1 }' >"$W/calls"
awk '{ print $1, $2 }' "$W/calls" | sort -u >"$W/edges"
echo "module graph (user -> what it calls):"
awk '{ d[$1] = d[$1] " " $2 } END { for (m in d) print "  " m ":" d[m] }' "$W/edges" | sort
# each edge along the layers: os calls os; core core and os; runtime and
# interpose runtime, core and os
awk -v calls="$W/calls" '
function layer(m) { sub(/\/.*/, "", m); return m }
BEGIN {
	while ((getline l <calls) > 0) {
		split(l, c, " ")
		k = c[1] SUBSEP c[2]
		if (k in syms) syms[k] = syms[k] c[3] " "
		else syms[k] = c[3] " "
	}
	ok["os/os"] = ok["core/core"] = ok["core/os"] = 1
	ok["runtime/runtime"] = ok["runtime/core"] = ok["runtime/os"] = 1
	ok["interpose/runtime"] = ok["interpose/core"] = ok["interpose/os"] = 1
}
!((layer($1) "/" layer($2)) in ok) {
	printf "FAIL [layout.modules]: %s calls into %s (%s): against the layers\n", $1, $2, syms[$1 SUBSEP $2]
	bad = 1
}
END { exit bad }' "$W/edges" || fail=1
if ! tsort "$W/edges" >/dev/null 2>"$W/tsort.err"; then
	echo "FAIL [layout.modules]: modules call each other in a circle:"
	sed 's/^/  /' "$W/tsort.err"
	fail=1
fi
bad=$(grep -ln '#include "\(runtime\|interpose\)/' "$src"/tools/enormoustext/*.[ch] 2>/dev/null)
[ -z "$bad" ] || { echo "FAIL [layout.modules]: the command includes the runtime's headers: $bad"; fail=1; }
# The headers along the floors too (macros and types leave no symbol in the
# objects): a floor includes its own headers and those of the floors below
# it, never one above (os/ included core/base.h and core/mm_flags.h).
for floor in os core runtime; do
	case $floor in
	os) above='core|runtime|interpose' ;;
	core) above='runtime|interpose' ;;
	runtime) above='interpose' ;;
	esac
	# FILE:LINE:TEXT for each include of a floor above, one grep a floor
	grep -nHE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($above)/" \
		"$src"/libenormoustext/src/$floor/*.[ch] 2>/dev/null >"$W/up.$floor"
	awk -v src="$src/libenormoustext/src/" '
	{
		i = index($0, ":")
		f = substr($0, 1, i - 1)
		if (index(f, src) == 1) f = substr(f, length(src) + 1)
		if (!(f in up)) { n++; order[n] = f }
		up[f] = up[f] substr($0, i + 1) " "
	}
	END {
		for (k = 1; k <= n; k++)
			printf "FAIL [layout.modules]: %s includes a header of a floor above its own: %s\n", order[k], up[order[k]]
		exit n > 0
	}' "$W/up.$floor" || fail=1
done
[ $fail = 0 ] || exit 1
echo "PASS [layout.modules]: $(wc -l <"$W/edges") calls between ${#files[@]} modules, all along the layers, no cycle"
