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
mod_of() { # .../libenormoustext/src/runtime/pass.c.o -> runtime/pass
	local p=${1%.o}
	p=${p%.c}
	p=${p#*/libenormoustext/src/}
	echo "$p"
}
for f in "${files[@]}"; do
	[ -f "$f" ] || { echo "FAIL [layout.modules]: $f does not exist (build first)"; exit 1; }
	m=$(mod_of "$f")
	case $m in core/* | os/* | runtime/* | interpose/*) ;; *) echo "FAIL [layout.modules]: $f is in no layer"; fail=1 ;; esac
	nm -g --defined-only "$f" | awk -v m="$m" 'NF == 3 { print $3, m }' >>"$W/defs"
	nm -u "$f" | awk -v m="$m" '{ print $NF, m }' >>"$W/uses"
done
sort -u "$W/defs" >"$W/defs.s"
dups=$(awk '{ print $1 }' "$W/defs.s" | uniq -d)
[ -z "$dups" ] || { echo "FAIL [layout.modules]: symbols defined twice: $dups"; fail=1; }
# edges: user -> definer
sort "$W/uses" | join - "$W/defs.s" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$W/edges"
layer() { echo "${1%%/*}"; }
echo "module graph (user -> what it calls):"
awk '{ d[$1] = d[$1] " " $2 } END { for (m in d) print "  " m ":" d[m] }' "$W/edges" | sort
while read -r a b; do
	la=$(layer "$a") lb=$(layer "$b")
	ok=0
	case $la in
	os) [ "$lb" = os ] && ok=1 ;;
	core) case $lb in core | os) ok=1 ;; esac ;;
	runtime) case $lb in runtime | core | os) ok=1 ;; esac ;;
	interpose) case $lb in runtime | core | os) ok=1 ;; esac ;;
	esac
	if [ $ok = 0 ]; then
		echo "FAIL [layout.modules]: $a calls into $b ($(sort "$W/uses" | join - "$W/defs.s" | awk -v a="$a" -v b="$b" '$2 == a && $3 == b { printf "%s ", $1 }')): against the layers"
		fail=1
	fi
done <"$W/edges"
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
for f in "$src"/libenormoustext/src/os/*.[ch] "$src"/libenormoustext/src/core/*.[ch] \
	"$src"/libenormoustext/src/runtime/*.[ch]; do
	[ -f "$f" ] || continue
	rel=${f#"$src"/libenormoustext/src/}
	case ${rel%%/*} in
	os) above='core|runtime|interpose' ;;
	core) above='runtime|interpose' ;;
	runtime) above='interpose' ;;
	esac
	up=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($above)/" "$f" | tr '\n' ' ')
	if [ -n "$up" ]; then
		echo "FAIL [layout.modules]: $rel includes a header of a floor above its own: $up"
		fail=1
	fi
done
[ $fail = 0 ] || exit 1
echo "PASS [layout.modules]: $(wc -l <"$W/edges") calls between ${#files[@]} modules, all along the layers, no cycle"
