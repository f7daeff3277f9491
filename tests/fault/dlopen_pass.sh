#!/bin/bash
# shellcheck disable=SC2016 # '$ORIGIN' is for the loader
# dlopen_pass.sh — a library with more than 2 MiB of text that a program
# loads at run time gets its text moved onto huge pages, whichever route
# the loader took to find it: a bare name through the program's RUNPATH or
# RPATH, a library's RPATH or RUNPATH, an RPATH inherited along the loader
# chain, a tail-called dlopen, $ORIGIN (also through a symlinked library),
# LD_LIBRARY_PATH, a DT_NEEDED of a dlopened library, dlmopen, a dlopen
# made inside a dlmopen namespace, a constructor's nested dlopen, a
# constructor before main.
#
# The big library is a cp copy of the integration tests' libbigtext.so
# (8 MiB of text; cp writes its page cache small, and a plain run of every
# route must show it small: see tests/integration/lib.sh).  Each route runs
#   plain | LD_PRELOAD=lib | the program linked with the library,
# each run on fresh copies, and the probe (dr_probe.c) reads its own
# /proc/self/smaps for the library's text windows right after the load and
# again after enormoustext_refresh() (looked up with dlsym(RTLD_DEFAULT)).
# Asserted: nothing huge plain; >= 95% of the windows huge after the
# refresh.  Whether the text was moved already right after the load is
# printed only (when that happens is the library's choice).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/dr_layout.bash"

BIG_SRC=$IT_BIN/libbigtext.so
[ -f "$BIG_SRC" ] || fail "$BIG_SRC is missing: build the tests first"
# big DEST... — copies of the big library (soname libbigtext.so) at DEST
# (paths below $C), copied again before each run with the library.
BIGS=()
big() {
	local d
	for d in "$@"; do
		mkdir -p "$(dirname "$d")" || fail "cannot make the directory of $d"
		cp "$BIG_SRC" "$d" || fail "cannot copy $BIG_SRC to $d"
		BIGS+=("$d")
	done
}
recopy() {
	local d
	for d in "${BIGS[@]}"; do
		# A new file: its page cache starts empty (small).
		rm -f "$d" || fail "cannot remove $d"
		cp "$BIG_SRC" "$d" || fail "cannot copy $BIG_SRC to $d"
	done
}
newroute() {
	C=$WORK/r/$1
	BIGS=()
	mkdir -p "$C"
}

ROUTES=0
FAILED=()
# huge_at FILE N — "X Y" of the Nth huge line of the probe's output.
huge_at() {
	grep '^huge libbigtext.so: ' "$1" | sed -n "${2}s/^huge libbigtext.so: \([0-9]*\) of \([0-9]*\) eligible.*/\1 \2/p"
}
# route NAME [VAR=VALUE...] -- PROGRAM STEPS... — STEPS load libbigtext.so;
# then the probe measures, refreshes, measures.
route() {
	local name=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	local exe=$1
	shift
	local v line="route $name:" bad=""
	for v in plain preload linked; do
		local o=$C/$v.out pre=() x=$exe
		case $v in
		preload) pre=(LD_PRELOAD="$PRE"); recopy ;;
		linked) x=$exe.linked; recopy ;;
		esac
		dr_run "$o" "./$x" "${envs[@]}" "${pre[@]}" -- "$@" huge libbigtext.so refresh huge libbigtext.so
		local a b
		a=$(huge_at "$o" 1)
		b=$(huge_at "$o" 2)
		if [ -z "$a" ] || [ -z "$b" ]; then
			line+=" $v: libbigtext.so not loaded |"
			bad+=" $v: not loaded ($(grep -v '^huge\|^refresh\|^exit' "$o" | paste -sd';'))"
			continue
		fi
		local a_h=${a% *} elig=${a#* } b_h=${b% *}
		[ "$elig" -gt 0 ] || fail "route $name: libbigtext.so has no whole window (the test library is too small)"
		if [ $v = plain ]; then
			line+=" plain $a_h/$elig huge |"
			if [ "$a_h" -ne 0 ] || [ "$b_h" -ne 0 ]; then
				fail "route $name: libbigtext.so is huge without the library (the kernel did it: the test proves nothing)"
			fi
		else
			local moved_now=no
			[ $((a_h * 100)) -ge $((elig * 95)) ] && moved_now=yes
			line+=" $v: after the load $a_h/$elig (moved: $moved_now), after refresh $b_h/$elig |"
			grep -q '^refresh: enormoustext_refresh() = ' "$o" || bad+=" $v: no enormoustext_refresh;"
			[ $((b_h * 100)) -ge $((elig * 95)) ] || bad+=" $v: only $b_h of $elig bytes huge after enormoustext_refresh();"
		fi
		grep -q '^exit 0$' "$o" || bad+=" $v: $(tail -1 "$o");"
	done
	ROUTES=$((ROUTES + 1))
	if [ -z "$bad" ]; then
		echo "${line% |} | moved"
	else
		echo "${line% |} | NOT MOVED"
		echo "   $bad"
		for v in plain preload linked; do sed "s/^/    $v: /" "$C/$v.out"; done
		FAILED+=("$name")
	fi
}

# A bare name through the program's RUNPATH / RPATH.
newroute runpath-program
big "$C/bin/lib/libbigtext.so"
prog "$C/bin/prog" runpath '$ORIGIN/lib'
route runpath-program -- bin/prog open libbigtext.so now -

newroute rpath-program
big "$C/bin/lib/libbigtext.so"
prog "$C/bin/prog" rpath '$ORIGIN/lib'
route rpath-program -- bin/prog open libbigtext.so now -

# A library's RPATH / RUNPATH (the library calls dlopen), a tail call.
newroute rpath-library
big "$C/lib/rp/libbigtext.so"
caller "$C/lib/libcall.so" "$(rpath '$ORIGIN/rp')"
prog "$C/prog" none ''
route rpath-library -- prog open '$ORIGIN/lib/libcall.so' now - via libcall.so libbigtext.so now -

newroute runpath-library
big "$C/bin/lib/deps/libbigtext.so"
caller "$C/bin/lib/libcall.so" "$(runpath '$ORIGIN/deps')"
prog "$C/bin/prog" none ''
route runpath-library -- bin/prog open '$ORIGIN/lib/libcall.so' now - via libcall.so libbigtext.so now -

newroute tail-call
big "$C/bin/lib/libbigtext.so"
caller "$C/bin/lib/libcall.so"
prog "$C/bin/prog" runpath '$ORIGIN/lib'
route tail-call -- bin/prog open libcall.so now - tail libcall.so libbigtext.so now -

# RPATH inherited: the program's (libA has none), libX's (libA's loader).
newroute rpath-inherit-program
caller "$C/bin/rp/libA.so"
big "$C/bin/rpb/libbigtext.so"
prog "$C/bin/prog" rpath '$ORIGIN/rp:$ORIGIN/rpb' "$C/bin/rp/libA.so"
route rpath-inherit-program -- bin/prog via libA.so libbigtext.so now -

newroute rpath-inherit-library
caller "$C/bin/lib/xa/libA.so"
big "$C/bin/lib/xb/libbigtext.so"
lib "$C/bin/lib/libX.so" X "$(rpath '$ORIGIN/xa:$ORIGIN/xb')" "$C/bin/lib/xa/libA.so"
prog "$C/bin/prog" runpath '$ORIGIN/lib' "$C/bin/lib/libX.so" -Wl,-rpath-link,"$C/bin/lib/xa"
route rpath-inherit-library -- bin/prog via libA.so libbigtext.so now -

# $ORIGIN: the program's; a library's reached through a symlink.
newroute origin-program
big "$C/plugins/libbigtext.so"
prog "$C/bin/prog" none ''
route origin-program -- bin/prog open '$ORIGIN/../plugins/libbigtext.so' now -

newroute origin-symlinked-library
caller "$C/real/libcall.so"
mkdir -p "$C/lnk" && ln -s ../real/libcall.so "$C/lnk/libcall.so"
big "$C/lnk/plug/libbigtext.so" "$C/real/plug/libbigtext.so"
prog "$C/bin/prog" none ''
route origin-symlinked-library -- bin/prog open '$ORIGIN/../lnk/libcall.so' now - \
	via libcall.so '$ORIGIN/plug/libbigtext.so' now -

newroute ld-library-path
big "$C/ldp/libbigtext.so"
prog "$C/bin/prog" none ''
route ld-library-path LD_LIBRARY_PATH="$C/ldp" -- bin/prog open libbigtext.so now -

# A DT_NEEDED of a dlopened library, found with that library's RUNPATH.
newroute needed-by-dlopened
big "$C/bin/lib/deps/libbigtext.so"
lib "$C/bin/lib/libneeds.so" needs "$(runpath '$ORIGIN/deps')" "$C/bin/lib/deps/libbigtext.so"
prog "$C/bin/prog" none ''
route needed-by-dlopened -- bin/prog open '$ORIGIN/lib/libneeds.so' now dr_ident

# dlmopen (a bare name through the caller's RUNPATH); a dlopen made by a
# library inside a dlmopen namespace.
newroute dlmopen
big "$C/bin/lib/libbigtext.so"
prog "$C/bin/prog" runpath '$ORIGIN/lib'
route dlmopen -- bin/prog mopen libbigtext.so now -

newroute dlopen-in-namespace
caller "$C/bin/ns/libnsc.so" "$(runpath '$ORIGIN/nsdeps')"
big "$C/bin/ns/nsdeps/libbigtext.so"
prog "$C/bin/prog" none ''
route dlopen-in-namespace -- bin/prog mopen '$ORIGIN/ns/libnsc.so' now - nsvia libnsc.so libbigtext.so now -

# A constructor's dlopen: nested in the program's dlopen; before main.
newroute ctor-nested
ctorlib "$C/bin/c/libctor.so" "$(runpath '$ORIGIN/cdeps')"
big "$C/bin/c/cdeps/libbigtext.so"
prog "$C/bin/prog" none ''
route ctor-nested DR_CTOR_NAME=libbigtext.so -- bin/prog open '$ORIGIN/c/libctor.so' now - ctor libctor.so -

newroute ctor-startup
ctorlib "$C/bin/lib/libctor.so" "$(runpath '$ORIGIN/cdeps')"
big "$C/bin/lib/cdeps/libbigtext.so"
prog "$C/bin/prog" runpath '$ORIGIN/lib' "$C/bin/lib/libctor.so"
route ctor-startup DR_CTOR_NAME=libbigtext.so -- bin/prog ctor libctor.so -

echo "$ROUTES routes: $((ROUTES - ${#FAILED[@]})) moved after enormoustext_refresh(), ${#FAILED[@]} not${FAILED[*]:+: ${FAILED[*]}}"
[ ${#FAILED[@]} -eq 0 ] || fail "libbigtext.so was not loaded or not moved through: ${FAILED[*]}"
echo "PASS [$T]"
