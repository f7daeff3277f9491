#!/bin/bash
# shellcheck disable=SC2016 # '$ORIGIN', '$LIB', '$PLATFORM' are for the loader
# dlopen_resolve.sh — a preloaded (or linked) libenormoustext never changes
# WHICH library a program's dlopen/dlmopen loads, nor the error it gets.
#
# The library defines dlopen, dlmopen and dlclose.  glibc resolves a bare
# name with the DT_RPATH/DT_RUNPATH of the *calling* object (the one dlopen
# returns into) and of its loaders, expands $ORIGIN against the caller's
# directory (the path it was found at, symlinks kept) and puts a dlmopen'd
# or namespace-local load where the caller says: a wrapper that simply calls
# the real dlopen makes itself the caller.  So each case below lays out its
# own directories of small libraries (linked here with cc from dr_ident.o,
# each returning its identity string), links a probe program (dr_probe.o)
# with the RUNPATH/RPATH the case needs, and runs the same steps
#   plain | LD_PRELOAD=lib | LD_PRELOAD=lib ENORMOUSTEXT=0 | program linked with the library
# The four outputs (identity, path the loader recorded, namespace, dlerror
# text) must be identical: the plain run is what glibc does, whatever
# glibc's version decides.  A few cases also check that the plain run shows
# what the case is built to show (else the layout is wrong and the case
# would prove nothing).
#
# One line a case: plain result | preloaded result | same/DIFFERENT; then a
# count.  Fails if any case differs.  FAULT_CC (default cc) links.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/dr_layout.bash"
PLATFORM=$(LD_SHOW_AUXV=1 /bin/true 2>/dev/null | sed -n 's/^AT_PLATFORM: *//p')

CASES=0
SAME=0
DIFFER=()
# check NAME [--expect TEXT] [VAR=VALUE...] -- PROGRAM STEPS...
# Runs PROGRAM (relative to the case directory $C, which is the working
# directory) in the four ways and compares.
check() {
	local name=$1 expect="" envs=()
	shift
	if [ "$1" = --expect ]; then
		expect=$2
		shift 2
	fi
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	local exe=$1
	shift
	local v outs=() texts=() lines=() flat=()
	for v in plain preload preload-off linked; do
		local o=$C/$v.out pre=() x=$exe text=""
		case $v in
		preload) pre=(LD_PRELOAD="$PRE") ;;
		preload-off) pre=(LD_PRELOAD="$PRE" ENORMOUSTEXT=0) ;;
		linked) x=$exe.linked ;;
		esac
		dr_run "$o" "./$x" "${envs[@]}" "${pre[@]}" -- "$@"
		IFS= read -r -d '' text <"$o"
		outs+=("$o")
		texts+=("$text")
		# The steps' lines (not "exit N"), joined by " ; ".
		mapfile -t lines <"$o"
		printf -v text '%s ; ' "${lines[@]:0:${#lines[@]}-1}"
		flat+=("${text% ; }")
	done
	CASES=$((CASES + 1))
	local verdict=same i
	for i in 1 2 3; do [ "${texts[$i]}" = "${texts[0]}" ] || verdict=DIFFERENT; done
	echo "case $name: ${flat[0]} | ${flat[1]} | $verdict"
	if [ $verdict = same ]; then
		SAME=$((SAME + 1))
	else
		DIFFER+=("$name")
		for i in 1 2 3; do
			[ "${texts[$i]}" != "${texts[0]}" ] || continue
			echo "    $(basename "${outs[$i]}" .out) differs from plain:"
			diff "${outs[0]}" "${outs[$i]}" | sed 's/^/      /'
		done
	fi
	if [ -n "$expect" ] && [[ ${texts[0]} != *"$expect"* ]]; then
		cat "${outs[0]}"
		fail "layout of case $name: the plain run does not show '$expect' (so the case would prove nothing)"
	fi
	[[ ${texts[0]} == *$'\n'"exit 0"$'\n' ]] || { cat "${outs[0]}"; fail "case $name: the plain probe failed"; }
}
# newcase NAME — a fresh case directory $C.
newcase() {
	C=$WORK/c/$1
	mkdir -p "$C"
}

# --- the reported case: RUNPATH $ORIGIN/lib bundles libz.so.1 -------------
newcase runpath-bundled-libz
zlib "$C/bin/lib/libz.so.1" bundled-1.0
prog "$C/bin/prog" runpath '$ORIGIN/lib'
has_tag "$C/bin/prog" RUNPATH
check runpath-bundled-libz --expect '"bundled-1.0" from @/bin/lib/libz.so.1' -- \
	bin/prog open libz.so.1 now zlibVersion

# Control: no path, the system's libz.
newcase nopath-system-libz
prog "$C/bin/prog" none ''
check nopath-system-libz -- bin/prog open libz.so.1 now zlibVersion

# --- DT_RPATH -----------------------------------------------------------
newcase rpath-program
zlib "$C/bin/lib/libz.so.1" bundled-rpath
lib "$C/bin/lib/libonly.so" only-in-rpath
prog "$C/bin/prog" rpath '$ORIGIN/lib'
has_tag "$C/bin/prog" RPATH
check rpath-program --expect '"bundled-rpath"' -- \
	bin/prog open libz.so.1 now zlibVersion open libonly.so now dr_ident

# The caller is a library with DT_RPATH; the program has no path.
newcase rpath-library
zlib "$C/lib/rp/libz.so.1" bundled-lib-rpath
lib "$C/lib/rp/libr.so" lib-rpath
caller "$C/lib/libcall.so" "$(rpath '$ORIGIN/rp')"
has_tag "$C/lib/libcall.so" RPATH
prog "$C/prog" none ''
check rpath-library --expect '"bundled-lib-rpath"' -- \
	prog open '$ORIGIN/lib/libcall.so' now dr_ident \
	via libcall.so libr.so now dr_ident via libcall.so libz.so.1 now zlibVersion

# DT_RPATH inherited: the program's RPATH serves libA (no path of its own,
# a DT_NEEDED found in that RPATH) dlopening libB found only in the
# program's RPATH.
newcase rpath-inherit-program
caller "$C/bin/rp/libA.so"
lib "$C/bin/rpb/libB.so" B-via-program-rpath
zlib "$C/bin/rpb/libz.so.1" bundled-program-rpath
prog "$C/bin/prog" rpath '$ORIGIN/rp:$ORIGIN/rpb' "$C/bin/rp/libA.so"
check rpath-inherit-program --expect '"B-via-program-rpath"' -- \
	bin/prog via libA.so libB.so now dr_ident via libA.so libz.so.1 now zlibVersion

# program (RUNPATH) -> libX (DT_RPATH xa:xb) -> libA (no path) dlopens libB,
# found only through libX's RPATH (libA's loader).
newcase rpath-inherit-library
caller "$C/bin/lib/xa/libA.so"
lib "$C/bin/lib/xb/libB.so" B-via-libX-rpath
zlib "$C/bin/lib/xb/libz.so.1" bundled-libX-rpath
lib "$C/bin/lib/libX.so" X "$(rpath '$ORIGIN/xa:$ORIGIN/xb')" "$C/bin/lib/xa/libA.so"
has_tag "$C/bin/lib/libX.so" RPATH
prog "$C/bin/prog" runpath '$ORIGIN/lib' "$C/bin/lib/libX.so" -Wl,-rpath-link,"$C/bin/lib/xa"
check rpath-inherit-library --expect '"B-via-libX-rpath"' -- \
	bin/prog via libA.so libB.so now dr_ident via libA.so libz.so.1 now zlibVersion

# The library that dlopened another is not its loader: libX (RPATH xb)
# dlopens libA (no path), libA dlopens libB, which is only in libX's RPATH
# (glibc 2.36 does not find it there; the plain run says what this glibc
# does).
newcase rpath-inherit-dlopened
caller "$C/x/libX.so" "$(rpath '$ORIGIN/xb')"
caller "$C/x/xa/libA.so"
lib "$C/x/xb/libB.so" B-via-dlopener-rpath
prog "$C/prog" none ''
check rpath-inherit-dlopened -- \
	prog open '$ORIGIN/x/libX.so' now dr_ident via libX.so '$ORIGIN/xa/libA.so' now dr_ident \
	via libA.so libB.so now dr_ident

# --- DT_RUNPATH of a library that dlopens by bare name ---------------------
# libcall's RUNPATH serves its dlopen; the program's DT_RPATH does not
# (an object with a RUNPATH uses no RPATH at all); a tail call from libcall
# makes the program the caller.
newcase runpath-library
lib "$C/bin/exerp/libq.so" program-rpath
lib "$C/bin/lib/deps/libq.so" lib-runpath
zlib "$C/bin/lib/deps/libz.so.1" bundled-lib-runpath
caller "$C/bin/lib/libcall.so" "$(runpath '$ORIGIN/deps')"
has_tag "$C/bin/lib/libcall.so" RUNPATH
prog "$C/bin/prog" rpath '$ORIGIN/exerp'
check runpath-library --expect '"lib-runpath"' -- \
	bin/prog open '$ORIGIN/lib/libcall.so' now dr_ident \
	via libcall.so libq.so now dr_ident via libcall.so libz.so.1 now zlibVersion \
	tail libcall.so libq.so lazy dr_ident open libq.so now dr_ident

# --- $ORIGIN ------------------------------------------------------------
# $ORIGIN in dlopen's argument is the calling object's directory: the
# program's, a library's in another directory, the program's again when the
# library's dlopen is a tail call.  (Each string differs: see the next case.)
newcase origin-chains
lib "$C/plugins/libp.so" plugins-beside-bin
lib "$C/libs/plugins/libp.so" plugins-beside-libs
caller "$C/libs/sub/libcall.so"
prog "$C/bin/prog" none ''
check origin-chains --expect '"plugins-beside-libs"' -- \
	bin/prog open '$ORIGIN/../libs/sub/libcall.so' now dr_ident \
	via libcall.so '$ORIGIN/../plugins/libp.so' now dr_ident \
	tail libcall.so '${ORIGIN}/../plugins/libp.so' now dr_ident \
	open '$ORIGIN/../plugins/./libp.so' now dr_ident \
	open '$ORIGIN/../../libs/plugins/libp.so' now dr_ident

# glibc first compares the name as given (before $ORIGIN is expanded) with
# the names of the objects already loaded: a library dlopening the string
# the program has dlopened gets the program's library.
newcase origin-same-string
lib "$C/plugins/libp.so" plugins-beside-bin
lib "$C/libs/plugins/libp.so" plugins-beside-libs
caller "$C/libs/sub/libcall.so"
prog "$C/bin/prog" none ''
check origin-same-string --expect '"plugins-beside-bin"' -- \
	bin/prog open '$ORIGIN/../libs/sub/libcall.so' now dr_ident \
	open '$ORIGIN/../plugins/libp.so' now dr_ident \
	via libcall.so '$ORIGIN/../plugins/libp.so' now dr_ident

# A library reached through a symlink to its file: its $ORIGIN is the
# directory of the link (glibc takes the path it opened, no realpath).
newcase origin-symlink-file
caller "$C/real/libcall.so" "$(runpath '$ORIGIN/deps')"
mkdir -p "$C/lnk" && ln -s ../real/libcall.so "$C/lnk/libcall.so"
lib "$C/real/deps/libsq.so" deps-beside-target
lib "$C/lnk/deps/libsq.so" deps-beside-link
lib "$C/real/plug/libp.so" plug-beside-target
lib "$C/lnk/plug/libp.so" plug-beside-link
prog "$C/bin/prog" none ''
check origin-symlink-file -- \
	bin/prog open '$ORIGIN/../lnk/libcall.so' now dr_ident \
	via libcall.so libsq.so now dr_ident via libcall.so '$ORIGIN/plug/libp.so' now dr_ident

# A library found (by bare name, through the program's RUNPATH) in a
# symlinked directory: the loader records the path through the link.
newcase origin-symlink-dir
caller "$C/b/c/realdir/libcall.so" "$(runpath '$ORIGIN/../deps')"
mkdir -p "$C/a" && ln -s ../b/c/realdir "$C/a/dlnk"
lib "$C/b/c/deps/libsd.so" deps-of-target-parent
lib "$C/a/deps/libsd.so" deps-of-link-parent
lib "$C/b/c/plug/libp.so" plug-of-target-parent
lib "$C/a/plug/libp.so" plug-of-link-parent
prog "$C/bin/prog" runpath '$ORIGIN/../a/dlnk'
check origin-symlink-dir -- \
	bin/prog open libcall.so now dr_ident \
	via libcall.so libsd.so now dr_ident via libcall.so '$ORIGIN/../plug/libp.so' now dr_ident

# A library opened by a relative path; then the program changes directory:
# its $ORIGIN stays where it was loaded from.
newcase origin-after-chdir
caller "$C/rel/libcall.so"
lib "$C/rel/plug/libp.so" plug-where-loaded
caller "$C/sub/rel/libcall.so"
lib "$C/sub/rel/plug/libp.so" plug-after-chdir
prog "$C/prog" none ''
check origin-after-chdir --expect '"plug-where-loaded"' -- \
	prog open rel/libcall.so now dr_ident chdir sub via libcall.so '$ORIGIN/plug/libp.so' now dr_ident

# --- LD_LIBRARY_PATH ------------------------------------------------------
newcase ldpath-over-runpath
lib "$C/bin/lib/libq.so" program-runpath
lib "$C/ldp/libq.so" ldpath
lib "$C/bin/lib/cdeps/libq.so" lib-runpath
caller "$C/bin/lib/libcall.so" "$(runpath '$ORIGIN/cdeps')"
prog "$C/bin/prog" runpath '$ORIGIN/lib'
check ldpath-over-runpath --expect '"ldpath"' LD_LIBRARY_PATH="$C/ldp" -- \
	bin/prog open libq.so now dr_ident open libcall.so now dr_ident via libcall.so libq.so now dr_ident

newcase rpath-over-ldpath-program
lib "$C/bin/lib/libq.so" program-rpath
lib "$C/ldp/libq.so" ldpath
prog "$C/bin/prog" rpath '$ORIGIN/lib'
check rpath-over-ldpath-program --expect '"program-rpath"' LD_LIBRARY_PATH="$C/ldp" -- \
	bin/prog open libq.so now dr_ident

newcase rpath-over-ldpath-library
lib "$C/lib/crp/libq.so" lib-rpath
lib "$C/ldp/libq.so" ldpath
caller "$C/lib/libcall.so" "$(rpath '$ORIGIN/crp')"
prog "$C/prog" none ''
check rpath-over-ldpath-library --expect '"lib-rpath"' LD_LIBRARY_PATH="$C/ldp" -- \
	prog open '$ORIGIN/lib/libcall.so' now dr_ident via libcall.so libq.so now dr_ident

# --- names already loaded; RTLD_NOLOAD; dlopen(NULL) -----------------------
# The bundled libz is a DT_NEEDED of the program: dlopen("libz.so.1") from
# the program or from a library without a path returns it.
newcase already-loaded
zlib "$C/bin/lib/libz.so.1" bundled-needed
caller "$C/bin/lib/libcall.so"
prog "$C/bin/prog" runpath '$ORIGIN/lib' "$C/bin/lib/libz.so.1"
check already-loaded --expect '"bundled-needed"' -- \
	bin/prog open libz.so.1 now zlibVersion open libz.so.1 now,noload zlibVersion \
	open libcall.so now dr_ident via libcall.so libz.so.1 now zlibVersion

newcase noload-and-null
lib "$C/bin/lib/libnl.so" nl
lib "$C/bin/lib/libnl2.so.1.0" nl2 -soname libnl2.so.1
prog "$C/bin/prog" runpath '$ORIGIN/lib'
check noload-and-null --expect '"nl"' -- \
	bin/prog open libnl.so now,noload dr_ident open libnl.so now dr_ident open libnl.so lazy,noload dr_ident \
	open '$ORIGIN/lib/libnl2.so.1.0' now dr_ident open libnl2.so.1 now,noload dr_ident \
	open libz.so.1 now,noload zlibVersion open - now dr_main_ident open - lazy,noload dr_main_ident

# --- dlmopen -------------------------------------------------------------
# A bare name given to dlmopen is searched with the caller's RUNPATH too.
newcase dlmopen-runpath
lib "$C/bin/lib/libdm.so" dm-bundled
zlib "$C/bin/lib/libz.so.1" bundled-dlmopen
prog "$C/bin/prog" runpath '$ORIGIN/lib'
check dlmopen-runpath --expect '"dm-bundled"' -- \
	bin/prog mopen libdm.so now dr_ident mopen libz.so.1 now zlibVersion \
	mopen '$ORIGIN/lib/libdm.so' now dr_ident mopen libnowhere.so now dr_ident

# A library living in a dlmopen namespace dlopens: the new library goes
# into that namespace, found with that library's RUNPATH.
newcase dlmopen-namespace
caller "$C/bin/ns/libnsc.so" "$(runpath '$ORIGIN/nsdeps')"
lib "$C/bin/ns/nsdeps/libnsd.so" ns-dep
zlib "$C/bin/ns/nsdeps/libz.so.1" bundled-in-namespace
prog "$C/bin/prog" none ''
check dlmopen-namespace --expect '"ns-dep"' -- \
	bin/prog mopen '$ORIGIN/ns/libnsc.so' now dr_ident \
	nsvia libnsc.so libnsd.so now dr_ident nsvia libnsc.so libz.so.1 now zlibVersion

# --- dlopen from a constructor ---------------------------------------------
# A nested dlopen: libctor is being dlopened when its constructor dlopens a
# bare name, found with libctor's RUNPATH.
newcase ctor-nested
ctorlib "$C/bin/c/libctor.so" "$(runpath '$ORIGIN/cdeps')"
zlib "$C/bin/c/cdeps/libz.so.1" bundled-for-ctor
lib "$C/bin/c/cdeps/libcd.so" ctor-dep
prog "$C/bin/prog" none ''
check ctor-nested --expect '"bundled-for-ctor"' DR_CTOR_NAME=libz.so.1 -- \
	bin/prog open '$ORIGIN/c/libctor.so' now dr_ident ctor libctor.so zlibVersion
check ctor-nested-unique --expect '"ctor-dep"' DR_CTOR_NAME=libcd.so -- \
	bin/prog open '$ORIGIN/c/libctor.so' now dr_ident ctor libctor.so dr_ident

# Before main: libctor is a DT_NEEDED of the program.
newcase ctor-startup
ctorlib "$C/bin/lib/libctor.so" "$(runpath '$ORIGIN/cdeps')"
zlib "$C/bin/lib/cdeps/libz.so.1" bundled-for-startup-ctor
prog "$C/bin/prog" runpath '$ORIGIN/lib' "$C/bin/lib/libctor.so"
check ctor-startup --expect '"bundled-for-startup-ctor"' DR_CTOR_NAME=libz.so.1 -- \
	bin/prog ctor libctor.so zlibVersion

# --- failures: the loader's own error text ---------------------------------
newcase fail-nowhere
caller "$C/bin/lib/libcall.so" "$(runpath '$ORIGIN/deps')"
prog "$C/bin/prog" runpath '$ORIGIN/lib'
check fail-nowhere --expect 'libnowhere.so: cannot open shared object file' -- \
	bin/prog open libnowhere.so now dr_ident open '$ORIGIN/nope/libx.so' now dr_ident \
	open libcall.so now dr_ident via libcall.so libnowhere.so now dr_ident \
	via libcall.so '$ORIGIN/nope/libx.so' now dr_ident

# Found in the caller's RUNPATH, then failing: a missing dependency, an
# undefined symbol under RTLD_NOW (fine under RTLD_LAZY), a file that is not
# ELF; and a library of the other ELF class skipped for the next directory.
newcase fail-in-runpath
lib "$C/bin/lib/libabsent.so" absent
lib "$C/bin/lib/libneedy.so" needy "$C/bin/lib/libabsent.so"
rm "$C/bin/lib/libabsent.so"
lib "$C/bin/lib/libundef.so" undef -undef
printf 'this file is not an ELF object\n%.0s' {1..40} >"$C/bin/lib/libgarbage.so"
lib "$C/bin/l64/libwc.so" other-class-skipped
mkdir -p "$C/bin/lib32" && cp "$C/bin/l64/libwc.so" "$C/bin/lib32/libwc.so" &&
	printf '\001' | dd of="$C/bin/lib32/libwc.so" bs=1 seek=4 conv=notrunc status=none
prog "$C/bin/prog" runpath '$ORIGIN/lib:$ORIGIN/lib32:$ORIGIN/l64'
check fail-in-runpath --expect 'libabsent.so: cannot open shared object file' -- \
	bin/prog open libneedy.so now dr_ident open libundef.so now dr_ident open libundef.so lazy dr_ident \
	open libgarbage.so now dr_ident open libwc.so now dr_ident

# --- hardware-capability subdirectories of a RUNPATH directory ----------------
newcase hwcaps
lib "$C/bin/lib/libhw.so" hw-base
for l in x86-64-v2 x86-64-v3 x86-64-v4; do lib "$C/bin/lib/glibc-hwcaps/$l/libhw.so" "hw-$l"; done
lib "$C/bin/lib/libleg.so" legacy-base
lib "$C/bin/lib/tls/libleg.so" legacy-tls
[ -n "$PLATFORM" ] && lib "$C/bin/lib/$PLATFORM/libleg.so" "legacy-$PLATFORM"
caller "$C/bin/c/libcall.so" "$(runpath '$ORIGIN/../lib')"
prog "$C/bin/prog" runpath '$ORIGIN/lib'
check hwcaps -- bin/prog open libhw.so now dr_ident open libleg.so now dr_ident \
	open '$ORIGIN/c/libcall.so' now dr_ident via libcall.so libhw.so now dr_ident

# --- $LIB and $PLATFORM ------------------------------------------------------
newcase lib-platform
for d in lib lib64 lib/x86_64-linux-gnu lib/aarch64-linux-gnu; do
	lib "$C/bin/dst/$d/libdst.so" "LIB=$d"
	lib "$C/bin/rl/$d/libdst2.so" "runpath LIB=$d"
	lib "$C/libs/dst/$d/libdst.so" "lib's LIB=$d"
done
for p in ${PLATFORM:-x86_64} x86_64 i686 haswell; do
	[ -e "$C/bin/plat/$p/libpl.so" ] || lib "$C/bin/plat/$p/libpl.so" "PLATFORM=$p"
done
caller "$C/libs/libcall.so"
prog "$C/bin/prog" runpath '$ORIGIN/rl/$LIB'
check lib-platform -- bin/prog open '$ORIGIN/dst/$LIB/libdst.so' now dr_ident \
	open '$ORIGIN/dst/${LIB}/libdst.so' lazy dr_ident open '$ORIGIN/plat/$PLATFORM/libpl.so' now dr_ident \
	open libdst2.so now dr_ident open '$ORIGIN/../libs/libcall.so' now dr_ident \
	via libcall.so '$ORIGIN/dst/./$LIB/libdst.so' now dr_ident

echo "$CASES cases: $SAME the same plain and with the library, ${#DIFFER[@]} DIFFERENT${DIFFER[*]:+: ${DIFFER[*]}}"
[ ${#DIFFER[@]} -eq 0 ] || fail "with the library, dlopen loaded something else (or failed otherwise) in: ${DIFFER[*]}"
echo "PASS [$T]"
