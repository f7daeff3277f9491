# dr_layout.bash — what dlopen_resolve.sh and dlopen_pass.sh share: source
# it after lib.sh.  It checks the objects of dlresolve.cmake and the
# library (glibc-linked, else the test skips), copies the library into
# $ETDIR (for the programs linked with it), and defines the builders of a
# case's layout (each takes paths below the case directory $C):
#   lib OUT IDENT [-undef] [-soname NAME] [CC ARGS]  a library saying IDENT
#   zlib OUT IDENT [...]                              the same, named for libz
#   caller OUT [CC ARGS]       a library that calls dlopen (dr_caller.o)
#   ctorlib OUT [CC ARGS]      one whose constructor dlopens $DR_CTOR_NAME
#   prog OUT TAG PATH [CC ARGS]  the probe (dr_probe.o), and OUT.linked
#   runpath P / rpath P        the cc flag for a DT_RUNPATH / DT_RPATH
#   dr_run OUT PROGRAM [VAR=VALUE...] -- ARGS  one run, output in OUT
#   has_tag FILE RUNPATH|RPATH
# Everything is linked with $FAULT_CC (default cc) at run time.
# shellcheck shell=bash disable=SC2016 # '$ORIGIN' is for the loader

CC=${FAULT_CC:-cc}
for o in dr_probe.o dr_caller.o dr_ctor.o dr_ident.o dr_ident_undef.o; do
	[ -f "$FAULT_BIN/$o" ] || fail "$FAULT_BIN/$o is missing: build the tests first (target et_fault_dr_objects)"
done
command -v "$CC" >/dev/null || skip "no C compiler '$CC' to lay out the test libraries"
readelf -d "$PRE" 2>/dev/null | grep -q 'Shared library: \[libc\.so\.6\]' ||
	skip "the library is not linked against glibc: these cases are glibc's loader rules"
SONAME=$(readelf -d "$PRE" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ -n "$SONAME" ] || fail "cannot read the soname of $PRE"
# The library for the linked programs, alone in its directory (appended to
# each program's own path list: no test library lives there).
ETDIR=$WORK/etlib
mkdir -p "$ETDIR" || fail "cannot make $ETDIR"
cp "$PRE" "$ETDIR/$SONAME" || fail "cannot copy $PRE"

BUILD_LOG=$WORK/build.log
cc_do() {
	"$CC" "$@" >>"$BUILD_LOG" 2>&1 || { cat "$BUILD_LOG"; fail "cc $*"; }
}
runpath() { echo "-Wl,--enable-new-dtags,-rpath,$1"; }
rpath() { echo "-Wl,--disable-new-dtags,-rpath,$1"; }

# The libraries are linked with placeholders for their soname and (from
# dr_ident.o) their identity, patched in each copy (the string table keeps
# the rest of the soname placeholder after the NUL): one link serves every
# copy with the same other flags.  Few processes a copy: the machine may
# be loaded.
SONAME_SLOT=@DR-SONAME-PLACEHOLDER-0123456789abcdef@
IDENT_SLOT=@DR-IDENT-PLACEHOLDER@
IDENT_ROOM=64   # dr_ident_text[64]

# link OUT CC-ARGS... — cc -o OUT CC-ARGS, or a cp of an earlier link with
# the same arguments (paths below the case directory compared as "@": the
# output depends on the sonames of the libraries named, not their place).
# Sets SLOTS: "SONAME-OFFSET IDENT-OFFSET" of the placeholders (- if none).
declare -A LINKED LINKED_SLOTS
NLINK=0
link() {
	local out=$1
	shift
	local key="${*//"$C"/@}"
	[ -d "${out%/*}" ] || mkdir -p "${out%/*}" || fail "mkdir for $out"
	if [ -z "${LINKED[$key]:-}" ]; then
		NLINK=$((NLINK + 1))
		local f=$WORK/linked/$NLINK so=- id=- off l
		[ -d "$WORK/linked" ] || mkdir "$WORK/linked"
		cc_do -o "$f" "$@"
		while IFS=: read -r off l; do
			case $l in
			"$SONAME_SLOT") [ "$so" != - ] || so=$off ;;
			"$IDENT_SLOT") [ "$id" != - ] || id=$off ;;
			esac
		done < <(grep -obUaF -e "$SONAME_SLOT" -e "$IDENT_SLOT" "$f")
		LINKED[$key]=$f
		LINKED_SLOTS[$key]="$so $id"
	fi
	SLOTS=${LINKED_SLOTS[$key]}
	cp "${LINKED[$key]}" "$out" || fail "cannot copy to $out"
}

# patch FILE OFFSET VALUE ROOM — write VALUE and a NUL at OFFSET.
patch() {
	[ "$2" != - ] || fail "no placeholder in $1"
	[ ${#3} -lt "$4" ] || fail "'$3' is too long for its place in $1"
	printf '%s\0' "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none || fail "cannot patch $1"
}
# solib OUT OBJECT [-soname NAME] [CC ARGS...] — a library of OBJECT,
# soname: OUT's file name, or NAME.
solib() {
	local out=$1 obj=$2 so=${1##*/}
	shift 2
	if [ "${1:-}" = -soname ]; then
		so=$2
		shift 2
	fi
	link "$out" -shared "$obj" -Wl,-soname,$SONAME_SLOT -Wl,--no-as-needed "$@" -ldl
	patch "$out" "${SLOTS% *}" "$so" ${#SONAME_SLOT}
}
# lib OUT IDENT [-undef] [-soname NAME] [CC ARGS...] — a library
# (dr_ident.o; dr_ident_undef.o with -undef) whose dr_ident and zlibVersion
# return IDENT.
lib() {
	local out=$1 id=$2 obj=$FAULT_BIN/dr_ident.o
	shift 2
	if [ "${1:-}" = -undef ]; then
		obj=$FAULT_BIN/dr_ident_undef.o
		shift
	fi
	solib "$out" "$obj" "$@"
	patch "$out" "${SLOTS#* }" "$id" $IDENT_ROOM
}
# zlib OUT IDENT [CC ARGS...] — a stand-in libz.so.1 (called through zlibVersion).
zlib() { lib "$@"; }
# caller OUT [CC ARGS...] — a library that calls dlopen (dr_caller.o).
caller() {
	local out=$1
	shift
	solib "$out" "$FAULT_BIN/dr_caller.o" "$@"
}
# ctorlib OUT [CC ARGS...] — a library whose constructor dlopens $DR_CTOR_NAME.
ctorlib() {
	local out=$1
	shift
	solib "$out" "$FAULT_BIN/dr_ctor.o" "$@"
}
# prog OUT TAG PATH [CC ARGS...] — the probe program with DT_RUNPATH
# (TAG runpath), DT_RPATH (rpath) or no path (none); and OUT.linked, the
# same linked with the library (its directory appended to the path list).
prog() {
	local out=$1 tag=$2 p=$3
	shift 3
	local pf=() lpf=()
	case $tag in
	runpath) pf=("$(runpath "$p")"); lpf=("$(runpath "$p:$ETDIR")") ;;
	rpath) pf=("$(rpath "$p")"); lpf=("$(rpath "$p:$ETDIR")") ;;
	none) lpf=("$(runpath "$ETDIR")") ;;
	*) fail "prog: tag $tag" ;;
	esac
	link "$out" "$FAULT_BIN/dr_probe.o" -rdynamic "${pf[@]}" -Wl,--no-as-needed "$@" -ldl
	link "$out.linked" "$FAULT_BIN/dr_probe.o" -rdynamic "${lpf[@]}" -Wl,--no-as-needed "$@" \
		"$ETDIR/$SONAME" -ldl
}
# dr_run OUT PROGRAM [VAR=VALUE...] -- ARGS... — run PROGRAM (relative to
# the case directory $C, which is the working directory) with those
# variables and DR_ROOT=$C; stdout and stderr into OUT, then "exit STATUS".
dr_run() {
	local out=$1 x=$2
	shift 2
	(
		cd "$C" || exit 125
		while [ "$1" != -- ]; do export "${1?}"; shift; done
		shift
		export DR_ROOT="$C"
		exec "$x" "$@"
	) >"$out" 2>&1
	echo "exit $?" >>"$out"
}
# has_tag FILE RUNPATH|RPATH — the layout is what the case says.
has_tag() {
	readelf -d "$1" | grep -q "($2)" || fail "layout: $1 has no DT_$2"
}

