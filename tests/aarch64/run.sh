#!/bin/bash
# tests/aarch64/run.sh [BUILD_DIR] — libenormoustext for aarch64, built with
# the cross compiler and tested under qemu-user (see README.md here).
#
#   1. configures BUILD_DIR (default: the repository's build-test-aarch64)
#      with cmake/aarch64-linux-gnu.cmake and
#      CMAKE_CROSSCOMPILING_EMULATOR=qemu-aarch64, builds libenormoustext.so,
#      libenormoustext.a and the Criterion unit tests;
#   2. probes what the emulator gives a program (emu_probe.c);
#   3. runs the unit tests under qemu through ctest;
#   4. cross-builds the integration programs (tests/integration: bigtext
#      with its generated sources, dlopen_test, fork_test, ...) and runs a
#      subset of the integration checks under qemu.
#
# One line per check: PASS NAME: ..., FAIL NAME: ..., SKIP NAME: ... (the
# machine lacks something: the line names it), and NOT RUN NAME: ... for
# what emulation cannot show (with the reason seen here).
#
# Environment: ENORMOUSTEXT_IT_NFUNCS (functions per big-text object,
# default 2100 = 8.2 MiB; the CMake cache variable of the same name),
# ET_AARCH64_GCC (cross compiler), QEMU_AARCH64 (emulator), HOST_CC (for
# the generator), ET_AARCH64_CRITERION_LIBRARY and
# ET_AARCH64_CRITERION_INCLUDE_DIR (the target's Criterion, when not in
# /usr/lib/aarch64-linux-gnu and /usr/include), ET_AARCH64_UNIT=0 (leave the
# unit tests out: a SKIP line) or full, ET_AARCH64_KEEP=1 (keep the runs'
# copies of the programs), JOBS.  None of them reaches the programs.
#
# Exit: 0 every check ran and passed; 1 a check failed; 77 nothing failed
# but something could not run for want of a tool or package (SKIP lines).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=${1:-$ROOT/build-test-aarch64}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
TRIPLE=aarch64-linux-gnu
CC64=${ET_AARCH64_GCC:-$TRIPLE-gcc}
QEMU_NAME=${QEMU_AARCH64:-qemu-aarch64}
HOSTCC=${HOST_CC:-cc}
IT=$ROOT/tests/integration
SCRIPT=$ROOT/linker-scripts/enormous.ld
START=$SECONDS

# Nothing from the caller's environment may steer the library, the emulator
# or Criterion (qemu passes its own environment on to the program).
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(ENORMOUSTEXT[A-Za-z0-9_]*\|QEMU_[A-Za-z0-9_]*\|CRITERION_[A-Za-z0-9_]*\)=.*/\1/p' |
	grep -v '^ENORMOUSTEXT_IT_NFUNCS$\|^QEMU_AARCH64$')
NFUNCS=${ENORMOUSTEXT_IT_NFUNCS:-2100}
CRIT_LIB=${ET_AARCH64_CRITERION_LIBRARY:-}
CRIT_INC=${ET_AARCH64_CRITERION_INCLUDE_DIR:-}
UNIT=${ET_AARCH64_UNIT:-1}
KEEP=${ET_AARCH64_KEEP:-0}
# (the library warns about every ENORMOUSTEXT_ variable it does not know)
unset ENORMOUSTEXT_IT_NFUNCS ET_AARCH64_CRITERION_LIBRARY ET_AARCH64_CRITERION_INCLUDE_DIR ET_AARCH64_UNIT ET_AARCH64_KEEP \
	LD_PRELOAD LD_LIBRARY_PATH
# the start-up path, as the other harnesses' lib.sh: the text moved before
# main, copies staying copies (the defaults have tests of their own)
export ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_PRIME=0

missing() {
	echo "SKIP aarch64: $*"
	exit 77
}
need() {
	command -v "$1" >/dev/null 2>&1 || missing "no $1 ($2)"
}
need cmake "apt-get install cmake"
need ctest "apt-get install cmake"
need "$HOSTCC" "a host C compiler for the generator: apt-get install gcc"
need "$CC64" "apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
need "$QEMU_NAME" "apt-get install qemu-user"
need readelf "apt-get install binutils"
QEMU=$(command -v "$QEMU_NAME")
echo 'int main(void) { return 0; }' | "$CC64" -x c -o /dev/null - 2>/dev/null ||
	missing "$CC64 cannot link a program (apt-get install libc6-dev-arm64-cross)"
# The aarch64 loader: libc6:arm64 (multiarch) puts it where the programs
# name it; the cross libc alone has it under /usr/aarch64-linux-gnu, which
# qemu then takes as the root for the program's absolute paths.
if [ ! -e /lib/ld-linux-aarch64.so.1 ]; then
	[ -e /usr/$TRIPLE/lib/ld-linux-aarch64.so.1 ] ||
		missing "no aarch64 dynamic loader (dpkg --add-architecture arm64 && apt-get install libc6:arm64)"
	export QEMU_LD_PREFIX=/usr/$TRIPLE
fi

# ------------------------------------------------------------------ results
# a64_pass / a64_fail / a64_skip NAME MSG: one line of this runner's summary,
# counted (not the verdicts of tests/lib/lib.sh, which end a test)
NPASS=0 NFAIL=0 NSKIP=0
SUMMARY=()
a64_pass() { echo "PASS $1: $2"; NPASS=$((NPASS + 1)); SUMMARY+=("PASS $1"); }
a64_fail() { echo "FAIL $1: $2"; NFAIL=$((NFAIL + 1)); SUMMARY+=("FAIL $1"); }
a64_skip() { echo "SKIP $1: $2"; NSKIP=$((NSKIP + 1)); SUMMARY+=("SKIP $1"); }
notrun() { echo "NOT RUN $1: $2"; SUMMARY+=("NOT RUN $1"); }
finish() {
	# the runs' copies of the programs (about 400 MiB), not their logs
	[ "$KEEP" = 1 ] || find "$W/runs" -type f \( -name 'bigtext*' -o -name '*.so*' -o -name dlopen_test -o -name fork_test \) -delete 2>/dev/null
	echo "== aarch64: ${#SUMMARY[@]} lines: $NPASS passed, $NFAIL failed, $NSKIP skipped ($((SECONDS - START)) s)"
	printf '   %s\n' "${SUMMARY[@]}"
	[ "$NFAIL" -gt 0 ] && exit 1
	[ "$NSKIP" -gt 0 ] && exit 77
	exit 0
}
# show FILE... — a failed check's evidence, indented
show() { local f; for f in "$@"; do [ -s "$f" ] && awk -v p="${f##*/}" 'NR <= 40 { print "   " p "| " $0 }' "$f"; done; return 0; }

W=$B/aarch64-test
mkdir -p "$B" || missing "cannot create $B"
rm -rf "$W" && mkdir -p "$W/bin" "$W/gen" "$W/runs" || exit 1

# ------------------------------------------------------------------ configure, build
crit_lib=${CRIT_LIB:-/usr/lib/$TRIPLE/libcriterion.so.3}
crit_inc=$CRIT_INC
if [ -z "$crit_inc" ]; then
	for d in /usr/$TRIPLE/include /usr/include; do
		[ -f "$d/criterion/criterion.h" ] && { crit_inc=$d; break; }
	done
fi
unit_missing=""
if [ "$UNIT" = 0 ]; then
	unit_missing="left out (ET_AARCH64_UNIT=0)"
elif [ ! -e "$crit_lib" ]; then
	unit_missing="no aarch64 Criterion runtime $crit_lib (dpkg --add-architecture arm64 && apt-get install libcriterion3:arm64, or set ET_AARCH64_CRITERION_LIBRARY)"
elif [ -z "$crit_inc" ] || [ ! -f "$crit_inc/criterion/criterion.h" ]; then
	unit_missing="no Criterion headers (criterion/criterion.h in /usr/include: libcriterion-dev; where libcriterion3:arm64 is installed it cannot be (libnanomsg5 is not Multi-Arch: same): apt-get download libcriterion-dev && dpkg-deb -x libcriterion-dev_*.deb DIR, then ET_AARCH64_CRITERION_INCLUDE_DIR=DIR/usr/include)"
fi
cfg=(-S "$ROOT" -B "$B" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake"
	-DCMAKE_CROSSCOMPILING_EMULATOR="$QEMU" -DCMAKE_BUILD_TYPE=RelWithDebInfo
	-DENORMOUSTEXT_BUILD_TOOLS=OFF -DENORMOUSTEXT_BUILD_EXAMPLES=OFF -DENORMOUSTEXT_BUILD_BENCH=OFF
	-DENORMOUSTEXT_IT_MUSL=OFF -DENORMOUSTEXT_IT_NFUNCS="$NFUNCS" -DENORMOUSTEXT_WERROR=ON)
targets=(enormoustext enormoustext_static)
if [ -z "$unit_missing" ]; then
	cfg+=(-DENORMOUSTEXT_BUILD_TESTS=ON -DENORMOUSTEXT_CRITERION_LIBRARY="$crit_lib"
		-DENORMOUSTEXT_CRITERION_INCLUDE_DIR="$crit_inc")
	targets+=(unit_tests)
else
	cfg+=(-DENORMOUSTEXT_BUILD_TESTS=OFF)
fi
echo "-- configuring $B (cross, aarch64-linux-gnu, emulator $QEMU)"
if ! cmake "${cfg[@]}" >"$W/configure.log" 2>&1; then
	a64_fail build "cmake could not configure the cross build"
	tail -30 "$W/configure.log"
	finish
fi
echo "-- building ${targets[*]}"
if ! cmake --build "$B" --target "${targets[@]}" -j "$JOBS" >"$W/build.log" 2>&1; then
	a64_fail build "the cross build of ${targets[*]} failed"
	grep -E 'error|warning' "$W/build.log" | head -30
	tail -10 "$W/build.log"
	finish
fi
LIB=$B/libenormoustext.so
ARCHIVE=$B/libenormoustext.a
for f in "$LIB" "$ARCHIVE"; do
	[ -e "$f" ] || { a64_fail build "$f was not built"; finish; }
done
readelf -h "$LIB" | grep -q AArch64 ||
	{ a64_fail build "$LIB is not an aarch64 object ($B was first configured for another target? use a fresh directory)"; finish; }
a64_pass build "libenormoustext.so, libenormoustext.a$([ -z "$unit_missing" ] && echo ", 10 unit test programs") for aarch64 (-Werror)"
# The cache is what the build used (a cache set by hand wins over the default).
n=$(sed -n 's/^ENORMOUSTEXT_IT_NFUNCS:[A-Z]*=//p' "$B/CMakeCache.txt" 2>/dev/null)
[ -n "$n" ] && NFUNCS=$n

# ------------------------------------------------------------------ the emulator
# qemu RUNDIR [VAR=VALUE...] -- PROG [ARGS...]: PROG under qemu in RUNDIR,
# the variables set for the program only (never for qemu itself: an
# LD_PRELOAD in qemu's own environment would be loaded into qemu);
# stdout in $OUT, stderr in $ERR, status in $RC.  NAME labels the files.
OUT="" ERR="" RC=0
qemu() {
	local d=$1 label=$2 envs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=(-E "$1"); shift; done
	shift
	OUT=$d/$label.out
	ERR=$d/$label.err
	(cd "$d" && exec "$QEMU" "${envs[@]}" "$@") >"$OUT" 2>"$ERR"
	RC=$?
	echo "$label: (cd $d && qemu-aarch64 ${envs[*]} $*) -> $RC" >>"$W/commands.log"
}

"$CC64" -O2 -Wall -Wextra -Werror -o "$W/bin/emu_probe" "$HERE/emu_probe.c" || { a64_fail probe "emu_probe.c does not build"; finish; }
qemu "$W" probe -- "$W/bin/emu_probe"
if [ "$RC" -ne 0 ]; then
	a64_fail probe "an aarch64 program does not run under $QEMU (exit $RC): $(head -2 "$ERR" | tr '\n' ' ')"
	finish
fi
declare -A P
while IFS='=' read -r k v; do P[$k]=$v; done <"$OUT"
echo "-- $($QEMU --version | head -1): $(tr '\n' ' ' <"$OUT")"
EXEC_IN_SMAPS=1
case ${P[text_smaps]:-} in ??x?) ;; *) EXEC_IN_SMAPS=0 ;; esac
MADVISE_REAL=1
[ "${P[madvise_bogus]:-0}" = 0 ] && MADVISE_REAL=0
[ "${P[same_addresses]:-0}" = 1 ] || echo "-- note: the text's VMA does not start at the same address in /proc/self/maps and smaps"
if [ $EXEC_IN_SMAPS = 0 ]; then
	echo "-- the guest's text is ${P[text_maps]} in /proc/self/maps (emulated) but ${P[text_smaps]} in /proc/self/smaps (the host's, passed through: qemu maps guest code without PROT_EXEC)"
fi
if [ $MADVISE_REAL = 0 ]; then
	echo "-- madvise is not handed to the kernel: an unknown advice returns ${P[madvise_bogus]}, MADV_HUGEPAGE returns ${P[madv_hugepage]%/*} and sets no 'hg' flag, ${P[anon_huge_kb]} kB AnonHugePages once touched, MADV_COLLAPSE returns ${P[madv_collapse]%/*} with ${P[madv_collapse]#*/} kB huge after"
fi

# ------------------------------------------------------------------ unit tests
# Criterion runs each test in a child that re-executes the test program
# (BoxFort: execve of /proc/self/exe).  Under qemu-user that execve goes to
# the kernel, which runs an aarch64 program only through a binfmt_misc
# handler: one registered on the machine, or one registered here in a user
# namespace of our own (kernel >= 6.7 gives each user namespace its own
# binfmt_misc), which changes nothing outside.
BINFMT=""
binfmt_ns=$W/binfmt-ns.sh
cat >"$binfmt_ns" <<EOF
mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || { echo "cannot mount binfmt_misc in a user namespace"; exit 125; }
printf '%s' ':qemu-aarch64:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:$QEMU:F' >/proc/sys/fs/binfmt_misc/register 2>/dev/null || { echo "cannot register a binfmt_misc handler in a user namespace"; exit 125; }
exec "\$@"
EOF
binfmt_why=""
if "$W/bin/emu_probe" >/dev/null 2>&1; then
	BINFMT=machine
elif ! command -v unshare >/dev/null; then
	binfmt_why="no binfmt_misc handler for aarch64 and no unshare (util-linux)"
else
	why=$(unshare --user --map-root-user --mount bash "$binfmt_ns" "$W/bin/emu_probe" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 0 ]; then
		BINFMT=userns
	else
		binfmt_why="no binfmt_misc handler for aarch64 on this machine, and none in a user namespace (${why:-exit $rc}; needs unprivileged user namespaces and Linux >= 6.7)"
	fi
fi
with_binfmt() {
	case $BINFMT in
	machine) "$@" ;;
	userns) unshare --user --map-root-user --mount bash "$binfmt_ns" "$@" ;;
	esac
}

# What the emulator cannot show, by test (pattern for CRITERION_TEST_PATTERN).
UNIT_EXCLUDE=()
if [ $EXEC_IN_SMAPS = 0 ]; then
	UNIT_EXCLUDE+=(smaps/real_self_text_is_rx_and_named objects/segments_match_smaps)
fi
# The profile parser's scale tests (200,000 objects and more: about 30 s
# of the unit tests' time under qemu, against 1 s natively) check nothing
# that depends on the architecture; ET_AARCH64_UNIT=full runs them too.
SCALE_EXCLUDE=()
[ "$UNIT" = full ] || SCALE_EXCLUDE=(profile/scale_200k_objects profile/scale_duplicates_refused profile/scale_object_limit)
if [ -n "$unit_missing" ]; then
	a64_skip unit "$unit_missing"
elif [ -z "$BINFMT" ]; then
	a64_skip unit "Criterion re-executes each test program (BoxFort), which the kernel can do for an aarch64 program only through binfmt_misc: $binfmt_why; register qemu-aarch64 (Debian: qemu-user-binfmt; a container: docker run --privileged --rm tonistiigi/binfmt --install arm64)"
else
	penv=()
	# A Criterion unpacked somewhere of its own (dpkg-deb -x): the
	# programs' loader must find it and its libnanomsg there.
	cdir=$(dirname "$(realpath "$crit_lib")")
	case $cdir in
	"/usr/lib/$TRIPLE" | "/lib/$TRIPLE") ;;
	*) penv+=(QEMU_SET_ENV=LD_LIBRARY_PATH="$cdir") ;;
	esac
	excl=(${UNIT_EXCLUDE[@]+"${UNIT_EXCLUDE[@]}"} ${SCALE_EXCLUDE[@]+"${SCALE_EXCLUDE[@]}"})
	if [ ${#excl[@]} -gt 0 ]; then
		penv+=(CRITERION_TEST_PATTERN="!($(IFS='|'; echo "${excl[*]}"))")
	fi
	echo "-- unit tests under qemu through ctest (aarch64 programs exec'd through binfmt_misc: $BINFMT)"
	t0=$SECONDS
	with_binfmt env ${penv[@]+"${penv[@]}"} ctest --test-dir "$B" -L unit -V --timeout 300 >"$W/unit.log" 2>&1
	rc=$?
	read -r tested passing failing crashing <<<"$(sed -n 's/.*Synthesis: Tested: \([0-9]*\) | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\1 \2 \3 \4/p' "$W/unit.log" |
		awk '{ t += $1; p += $2; f += $3; c += $4 } END { print t + 0, p + 0, f + 0, c + 0 }')"
	suites=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: unit_' "$W/unit.log")
	suites_ok=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: unit_.* Passed' "$W/unit.log")
	skipped=$(grep -E '^[0-9]+: \[SKIP\]' "$W/unit.log" | grep -vc 'Test is disabled')
	detail="$suites_ok of $suites suites, $passing of $tested tests passed ($failing failed, $crashing crashed, $skipped skipped by the tests themselves), $((SECONDS - t0)) s"
	if [ "$rc" -eq 0 ] && [ "$suites" -gt 0 ] && [ "$suites_ok" -eq "$suites" ] && [ "$tested" -gt 0 ] &&
		[ "$failing" -eq 0 ] && [ "$crashing" -eq 0 ]; then
		a64_pass unit "$detail"
	else
		a64_fail unit "$detail; ctest exit $rc"
		grep -E '^[0-9]+: \[(FAIL|----)\]|Test +#.*(Failed|Timeout|Exception)' "$W/unit.log" | grep -v '\[----\] *$' | head -30
	fi
	grep -E '^[0-9]+: \[SKIP\]' "$W/unit.log" | grep -v 'Test is disabled' | sed 's/^[0-9]*: /   (the test says) /'
	for t in ${UNIT_EXCLUDE[@]+"${UNIT_EXCLUDE[@]}"}; do
		notrun "unit ${t/\//::}" "reads its own text's permissions in /proc/self/smaps, which qemu passes through from the host: ${P[text_smaps]} there (${P[text_maps]} in the emulated /proc/self/maps)"
	done
	if [ ${#SCALE_EXCLUDE[@]} -gt 0 ]; then
		notrun "unit profile::scale_*" "left out for time (${SCALE_EXCLUDE[*]##*/}: about 30 s under qemu, nothing architecture-dependent; ET_AARCH64_UNIT=full runs them)"
	fi
fi

# ------------------------------------------------------------------ integration programs
echo "-- building the integration programs ($NFUNCS functions per big-text object)"
cf=(-O2 -g -Wall -Wextra -Werror -I"$IT")
api=(-DBIGTEXT_WITH_API -I"$ROOT/libenormoustext/include")
bw=$W/bin
ok=1
buildlog=$W/programs.log
{
	"$HOSTCC" -O1 -Wall -Wextra -Werror -I"$IT" -o "$W/gen_bigtext" "$IT/gen_bigtext.c" &&
	"$HOSTCC" -O1 -Wall -Wextra -Werror -o "$bw/json_flat" "$IT/json_flat.c" &&
	"$W/gen_bigtext" "$W/gen" "$NFUNCS"
} >>"$buildlog" 2>&1 || ok=0
if [ $ok = 1 ]; then
	# the two big files at once, the rest after
	"$CC64" "${cf[@]}" -fPIC -c -o "$bw/bt_lib.o" "$W/gen/bt_lib_funcs.c" >>"$buildlog" 2>&1 &
	lpid=$!
	"$CC64" "${cf[@]}" -fPIE -c -o "$bw/bt_exe.o" "$W/gen/bt_exe_funcs.c" >>"$buildlog" 2>&1 || ok=0
	wait $lpid || ok=0
fi
if [ $ok = 1 ]; then
	mkdir -p "$bw/script"
	{
		"$CC64" "${cf[@]}" -fPIE -c -o "$bw/bigtext.o" "$IT/bigtext.c" &&
		"$CC64" "${cf[@]}" "${api[@]}" -fPIE -c -o "$bw/bigtext_api.o" "$IT/bigtext.c" &&
		"$CC64" -shared -o "$bw/libbigtext.so" "$bw/bt_lib.o" &&
		"$CC64" -pie -o "$bw/bigtext" "$bw/bigtext.o" "$bw/bt_exe.o" -L"$bw" -lbigtext -Wl,-rpath,'$ORIGIN' -ldl &&
		"$CC64" -no-pie -o "$bw/bigtext-nopie" "$bw/bigtext.o" "$bw/bt_exe.o" -L"$bw" -lbigtext -Wl,-rpath,'$ORIGIN' -ldl &&
		"$CC64" -pie -o "$bw/bigtext-linked" "$bw/bigtext_api.o" "$bw/bt_exe.o" -L"$bw" -lbigtext \
			-Wl,--no-as-needed "$LIB" -Wl,--as-needed -Wl,-rpath,'$ORIGIN' -ldl &&
		"$CC64" -pie -o "$bw/bigtext-static" "$bw/bigtext_api.o" "$bw/bt_exe.o" -L"$bw" -lbigtext \
			"$ARCHIVE" -Wl,-rpath,'$ORIGIN' -ldl &&
		"$CC64" "${cf[@]}" -fPIE -pie -o "$bw/dlopen_test" "$IT/dlopen_test.c" -ldl &&
		"$CC64" "${cf[@]}" -fPIC -shared -o "$bw/libctor_dlopen.so" "$IT/ctor_dlopen.c" -ldl &&
		"$CC64" "${cf[@]}" -fPIE -pie -o "$bw/fork_test" "$IT/fork_test.c" -ldl &&
		"$CC64" "${cf[@]}" -fPIC -shared -o "$bw/libfork_ctor.so" "$IT/fork_ctor.c" &&
		# linked with the script alone: no -z flags
		"$CC64" -shared -Wl,-T,"$SCRIPT" -o "$bw/script/libbigtext.so" "$bw/bt_lib.o" &&
		"$CC64" -pie -Wl,-T,"$SCRIPT" -o "$bw/script/bigtext" "$bw/bigtext.o" "$bw/bt_exe.o" \
			-L"$bw/script" -lbigtext -Wl,-rpath,'$ORIGIN' -ldl &&
		"$CC64" -no-pie -Wl,-T,"$SCRIPT" -o "$bw/script/bigtext-nopie" "$bw/bigtext.o" "$bw/bt_exe.o" \
			-L"$bw/script" -lbigtext -Wl,-rpath,'$ORIGIN' -ldl
	} >>"$buildlog" 2>&1 || ok=0
fi
if [ $ok = 0 ]; then
	a64_fail programs "the integration programs do not build for aarch64"
	show "$buildlog"
	finish
fi
JSON_FLAT=$bw/json_flat

# fresh SRC FILE... — copies (cp: their page cache written small; a freshly
# linked file can be mapped huge by the kernel by itself) in a new $D
N=0
fresh() {
	local src=$1 f
	shift
	N=$((N + 1))
	D=$W/runs/$N
	mkdir -p "$D"
	for f in "$@"; do cp "$src/$f" "$D/" || return 1; done
}
results_of() { grep '^bigtext: results:' "$1"; }
fails_of() { grep -E '^bigtext: (FAIL|ERROR)' "$1" | sed 's/^bigtext: //' | head -5 | tr '\n' ' '; }
nlines() { grep -c '' "$1"; }

# baseline NAME [VAR=VALUE...] -- PROG ARGS — a run without the library (or
# with it off) that must pass; sets BASE_RESULTS.  Returns 1 (after a FAIL
# line for NAME) when it does not.
baseline() {
	local name=$1
	shift
	qemu "$D" baseline "$@"
	if [ "$RC" -ne 0 ]; then
		if grep -q 'expected none' "$OUT"; then
			a64_fail "$name" "BASELINE ALREADY HUGE: without the library the fresh copies in $D are on huge pages ($(fails_of "$OUT")): this check cannot tell what the library does"
		else
			a64_fail "$name" "the baseline run failed (exit $RC): $(fails_of "$OUT")$(head -2 "$ERR" | tr '\n' ' ')"
		fi
		show "$OUT" "$ERR"
		return 1
	fi
	BASE_RESULTS=$(results_of "$OUT")
	[ -n "$BASE_RESULTS" ] || { a64_fail "$name" "the baseline printed no results line"; return 1; }
}

# json NAME REPORT — flatten a report (PATH<TAB>TYPE<TAB>VALUE) into REPORT.flat
json() {
	[ -s "$2" ] || { a64_fail "$1" "no report written to $2"; return 1; }
	"$JSON_FLAT" "$2" >"$2.flat" 2>"$2.err" || { a64_fail "$1" "$2 is not valid JSON: $(head -1 "$2.err")"; return 1; }
}
jget() { awk -F '\t' -v k="$2" '$1 == k { print $3; exit }' "$1.flat"; }
# obj_get REPORT FILE KEY — KEY of the report's object for FILE
obj_get() {
	local p obj
	p=$(realpath "$2")
	obj=$(awk -F '\t' -v p="$p" '$2 == "string" && $3 == p && $1 ~ /\.path$/ { sub(/\.path$/, "", $1); print $1; exit }' "$1.flat")
	[ -n "$obj" ] && awk -F '\t' -v k="$obj.$3" '$1 == k { print $3; exit }' "$1.flat"
}
# The figures this run's copy of an object reports as huge (bigtext's own smaps count).
huge_mib() { sed -n "s/^bigtext: $2 .*huge (kind any) \([0-9.]*\) of.*/\1/p" "$1"; }

BASE_RESULTS=""
NOTHING_HUGE=""   # the library's reason, once a run has shown nothing goes huge

# ---- (a) a big-text program, preloaded ------------------------------------
for exe in bigtext bigtext-nopie; do
	name=preload.${exe#bigtext}
	[ "$exe" = bigtext ] && name=preload.pie
	[ "$exe" = bigtext-nopie ] && name=preload.nopie
	fresh "$bw" "$exe" libbigtext.so || { a64_fail "$name" "cannot copy the programs"; continue; }
	baseline "$name" -- "./$exe" --expect-none --expect-not-loaded || continue
	fresh "$bw" "$exe" libbigtext.so
	rep=$D/report.json
	qemu "$D" lib LD_PRELOAD="$LIB" ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_REPORT="$rep" -- "./$exe" --expect-loaded
	if [ "$RC" -ne 0 ]; then
		a64_fail "$name" "preloaded, bigtext's own checks failed (exit $RC): $(fails_of "$OUT")"
		show "$OUT" "$ERR"
		continue
	fi
	r=$(results_of "$OUT")
	[ "$r" = "$BASE_RESULTS" ] || { a64_fail "$name" "results differ from the run without the library: '$r' vs '$BASE_RESULTS'"; continue; }
	if [ "$(nlines "$ERR")" -ne 1 ] || ! grep -qE '^enormoustext: [0-9]+ of [0-9]+ objects?, .* MiB of .* MiB text on [0-9]+ [MK]iB pages' "$ERR"; then
		a64_fail "$name" "ENORMOUSTEXT_VERBOSE=1 must print one summary line; stderr: '$(head -3 "$ERR" | tr '\n' '|')'"
		continue
	fi
	json "$name" "$rep" || continue
	ran=$(jget "$rep" .ran)
	hb=$(jget "$rep" .huge_bytes)
	reason=$(jget "$rep" .reason)
	exe_reason=$(obj_get "$rep" "$D/$exe" 'reasons[0]')
	lib_reason=$(obj_get "$rep" "$D/libbigtext.so" 'reasons[0]')
	exe_hb=$(obj_get "$rep" "$D/$exe" huge_bytes)
	lib_hb=$(obj_get "$rep" "$D/libbigtext.so" huge_bytes)
	if [ "$ran" != true ] || [ -z "$hb" ] || [ -z "$exe_hb" ] || [ -z "$lib_hb" ]; then
		a64_fail "$name" "the report does not say the library ran on both objects (ran '$ran', huge_bytes '$hb', exe '$exe_hb', lib '$lib_hb')"
		show "$rep"
		continue
	fi
	sm_exe=$(huge_mib "$OUT" exe)
	sm_lib=$(huge_mib "$OUT" lib)
	if [ "$hb" = 0 ]; then
		# Nothing huge: smaps must agree, and the reason must be given
		# everywhere and be true of what smaps shows.
		if [ "$sm_exe" != 0 ] || [ "$sm_lib" != 0 ]; then
			a64_fail "$name" "the report says huge_bytes 0, smaps shows exe $sm_exe MiB, lib $sm_lib MiB huge"
			continue
		fi
		if [ -z "$reason" ] || [ -z "$exe_reason" ] || [ -z "$lib_reason" ] || ! grep -qF "; $reason" "$ERR"; then
			a64_fail "$name" "nothing went huge but the reason is missing: report '$reason' (exe '$exe_reason', lib '$lib_reason'), summary '$(cat "$ERR")'"
			continue
		fi
		case $reason in
		*"read+execute file mapping"*)
			if [ $EXEC_IN_SMAPS = 1 ]; then
				a64_fail "$name" "the library says '$reason' but smaps shows the text ${P[text_smaps]}"
				continue
			fi
			why="guest text is ${P[text_smaps]} in the smaps qemu passes through"
			;;
		*) why="see the report" ;;
		esac
		NOTHING_HUGE=$reason
		a64_pass "$name" "results identical to the run without the library ($(echo "$r" | sed 's/.*, //')); nothing huge (smaps: exe 0, lib 0 MiB; report huge_bytes 0) and the summary line and the report give the reason: '$reason' ($why)"
	else
		# Something huge: smaps of the guest must confirm what the report says.
		awk -v a="$sm_exe" -v b="$sm_lib" -v e="$exe_hb" -v l="$lib_hb" \
			'BEGIN { m = 1048576; exit !(a * m >= e - 1 && b * m >= l - 1 && a + b > 0) }' ||
			{ a64_fail "$name" "the report says exe $exe_hb, lib $lib_hb bytes huge, smaps shows exe $sm_exe, lib $sm_lib MiB"; continue; }
		a64_pass "$name" "results identical; $hb bytes huge by the report, confirmed by smaps (exe $sm_exe MiB, lib $sm_lib MiB)"
	fi
	echo "   $(cat "$ERR")"
done

# ---- (b) linked with -lenormoustext and with libenormoustext.a -------------
# bigtext --check-api checks the public API's figures against smaps and
# the objects' files; of its checks, only those that need huge text may
# fail where nothing can go huge (the whole set of them, and no other):
# objects_huge, the backend, and per object huge_bytes, the backend and
# the time spent on it (0 for an object with nothing moved).
api_huge_only='^bigtext: FAIL: api: (stats\.objects_huge = 0, expected|stats\.backend = "none", expected|(exe|lib): huge_bytes = 0$|(exe|lib): backend "none" although it is huge$|(exe|lib): elapsed_ns = 0$)'
api_huge_count=8
for way in linked linked.static; do
	exe=bigtext-linked
	[ $way = linked.static ] && exe=bigtext-static
	name=$way
	fresh "$bw" bigtext "$exe" libbigtext.so && cp "$LIB" "$D/libenormoustext.so.0" || { a64_fail "$name" "cannot copy"; continue; }
	baseline "$name" -- ./bigtext --expect-none --expect-not-loaded || continue
	base=$BASE_RESULTS
	if [ $way = linked ]; then
		baseline "$name" ENORMOUSTEXT=0 -- "./$exe" --expect-none --expect-loaded || continue
	else
		baseline "$name" ENORMOUSTEXT=0 -- "./$exe" --expect-none || continue
	fi
	[ "$BASE_RESULTS" = "$base" ] || { a64_fail "$name" "with ENORMOUSTEXT=0 the results differ: '$BASE_RESULTS' vs '$base'"; continue; }
	fresh "$bw" "$exe" libbigtext.so && cp "$LIB" "$D/libenormoustext.so.0"
	args=(--check-api)
	[ $way = linked ] && args+=(--expect-loaded)
	qemu "$D" lib ENORMOUSTEXT_REPORT="$D/report.json" -- "./$exe" "${args[@]}"
	r=$(results_of "$OUT")
	[ "$r" = "$base" ] || { a64_fail "$name" "results differ from the run without the library: '$r' vs '$base'"; show "$OUT"; continue; }
	[ -s "$ERR" ] && { a64_fail "$name" "stderr must be empty (ENORMOUSTEXT_VERBOSE unset): '$(head -2 "$ERR" | tr '\n' '|')'"; continue; }
	json "$name" "$D/report.json" || continue
	hb=$(jget "$D/report.json" .huge_bytes)
	apiline=$(sed -n 's/^bigtext: api: ran /ran /p' "$OUT" | head -1)
	if [ "$RC" -eq 0 ]; then
		a64_pass "$name" "results identical, every API check passed, $hb bytes huge ($apiline)"
		continue
	fi
	others=$(grep -E '^bigtext: (FAIL|ERROR)' "$OUT" | grep -vE "$api_huge_only")
	nh=$(grep -cE "$api_huge_only" "$OUT")
	if [ "$RC" -eq 1 ] && [ "$hb" = 0 ] && [ -z "$others" ] && [ "$nh" -eq $api_huge_count ]; then
		a64_pass "$name" "results identical; the API agrees with smaps and the files on everything but the $nh checks that need huge text (nothing huge: '$(jget "$D/report.json" .reason)'); $apiline"
	else
		a64_fail "$name" "exit $RC, huge_bytes $hb, $nh of $api_huge_count huge-only API failures, others: '$(echo "$others" | head -3 | tr '\n' '|')'"
		show "$OUT"
	fi
done

# ---- (c) dlopen and fork under the preload --------------------------------
# dlopen_test --expect-none: every function right, nothing huge, nothing of
# the library's left after dlclose, twice; the addresses and eligible-window
# counts may differ run to run (load addresses), the rest may not.
norm() { sed -E 's/\[0x[0-9a-f]+, 0x[0-9a-f]+\)/[ADDR)/g; s/[0-9]+ of [0-9]+ eligible bytes/N of M eligible bytes/g; s/shared [0-9]+, private [0-9]+/shared S, private P/g' "$1"; }
for mode in dlopen dlmopen dlopen.ctor; do
	name=$mode
	case $mode in
	dlopen) args=(--expect-none ./libbigtext.so) loads=2 ;;
	dlmopen) args=(--expect-none --dlmopen ./libbigtext.so) loads=2 ;;
	dlopen.ctor) args=(--expect-none --ctor ./libctor_dlopen.so ./libbigtext.so) loads=1 ;;
	esac
	fresh "$bw" dlopen_test libbigtext.so libctor_dlopen.so || { a64_fail "$name" "cannot copy"; continue; }
	qemu "$D" base -- ./dlopen_test "${args[@]}"
	[ "$RC" -eq 0 ] || { a64_fail "$name" "without the library dlopen_test fails: $(grep FAIL "$OUT" | head -2 | tr '\n' ' ')"; continue; }
	norm "$OUT" >"$D/base.norm"
	qemu "$D" lib LD_PRELOAD="$LIB" -- ./dlopen_test "${args[@]}"
	[ "$RC" -eq 0 ] || { a64_fail "$name" "preloaded, dlopen_test fails (exit $RC): $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"; show "$OUT" "$ERR"; continue; }
	[ -s "$ERR" ] && { a64_fail "$name" "stderr must be empty (ENORMOUSTEXT_VERBOSE unset): '$(head -2 "$ERR" | tr '\n' '|')'"; continue; }
	norm "$OUT" >"$D/lib.norm"
	cmp -s "$D/base.norm" "$D/lib.norm" || { a64_fail "$name" "the output differs from the run without the library"; diff "$D/base.norm" "$D/lib.norm" | head -10; continue; }
	# the library's pass ran on each load (its dlopen wrappers: the aarch64 stubs)
	qemu "$D" verbose LD_PRELOAD="$LIB" ENORMOUSTEXT_VERBOSE=2 -- ./dlopen_test "${args[@]}"
	seen=$(grep -c 'libbigtext\.so: ' "$ERR")
	if [ "$RC" -ne 0 ] || [ "$seen" -ne "$loads" ] || grep -qv '^enormoustext: ' "$ERR"; then
		a64_fail "$name" "at ENORMOUSTEXT_VERBOSE=2: exit $RC, $seen line(s) on libbigtext.so (expected $loads, one per load), stderr: '$(head -4 "$ERR" | tr '\n' '|')'"
		continue
	fi
	a64_pass "$name" "same output as without the library ($(grep -c 'functions called, 0 wrong' "$OUT") x all functions right, nothing left after dlclose); the library looked at libbigtext.so on each of the $loads load(s): '$(grep -m1 'libbigtext\.so: ' "$ERR" | sed 's/^enormoustext: //')'"
done

for mode in fork fork.ctor; do
	name=$mode
	args=(./libbigtext.so)
	[ $mode = fork.ctor ] && args=(--fork-ctor ./libfork_ctor.so ./libbigtext.so)
	fresh "$bw" fork_test libbigtext.so libfork_ctor.so || { a64_fail "$name" "cannot copy"; continue; }
	qemu "$D" base -- ./fork_test "${args[@]}"
	brc=$RC
	norm "$OUT" >"$D/base.norm"
	qemu "$D" lib LD_PRELOAD="$LIB" -- ./fork_test "${args[@]}"
	norm "$OUT" >"$D/lib.norm"
	if [ "$RC" -ne "$brc" ] || ! cmp -s "$D/base.norm" "$D/lib.norm"; then
		a64_fail "$name" "preloaded: exit $RC (without the library $brc), output differs:"
		diff "$D/base.norm" "$D/lib.norm" | head -10
		continue
	fi
	[ -s "$ERR" ] && { a64_fail "$name" "stderr must be empty: '$(head -2 "$ERR" | tr '\n' '|')'"; continue; }
	if [ $mode = fork.ctor ] && ! grep -q "the constructor's child exited with 0" "$OUT"; then
		a64_fail "$name" "the forking constructor's child did not exit 0"
		continue
	fi
	if [ "$RC" -eq 0 ]; then
		a64_pass "$name" "fork_test passes preloaded"
	else
		a64_pass "$name" "same output and exit status ($RC) as without the library: fork_test first requires libbigtext.so huge ('$(grep -m1 FAIL "$OUT" | sed 's/^fork_test: //')')$([ $mode = fork.ctor ] && echo "; before that, the library's dlopen of a library whose constructor forks completed and the child exited 0")"
	fi
done

# ---- (d) linked with enormous.ld alone ------------------------------------
# The executable segment of each object: p_align 2 MiB, and at run time its
# mapping starts on a 2 MiB boundary (the program's maps, read while it
# holds: qemu's guest addresses are the host's).
for exe in bigtext bigtext-nopie; do
	name=script.${exe#bigtext}
	[ "$exe" = bigtext ] && name=script.pie
	[ "$exe" = bigtext-nopie ] && name=script.nopie
	fresh "$bw/script" "$exe" libbigtext.so || { a64_fail "$name" "cannot copy"; continue; }
	bad=""
	declare -A OFF=()
	for f in "$exe" libbigtext.so; do
		read -r off va al <<<"$(readelf -lW "$D/$f" | awk '$1 == "LOAD" { fl = ""; for (i = 7; i < NF; i++) fl = fl $i; if (fl ~ /E/) { print $2, $3, $NF; exit } }')"
		OFF[$f]=$off
		[ "$((al))" -eq $((0x200000)) ] && [ $((va % 0x200000)) -eq 0 ] || bad+="$f: executable PT_LOAD at $va, p_align $al; "
	done
	[ -z "$bad" ] || { a64_fail "$name" "the link did not lay the text out for 2 MiB pages: $bad"; continue; }
	(cd "$D" && exec "$QEMU" "./$exe" --expect-none --expect-not-loaded --hold 3) >"$D/run.out" 2>"$D/run.err" &
	pid=$!
	for _ in $(seq 100); do grep -q '^bigtext: holding' "$D/run.out" 2>/dev/null && break; sleep 0.1; done
	cp "/proc/$pid/maps" "$D/maps" 2>/dev/null
	wait $pid
	rc=$?
	[ $rc -eq 0 ] || { a64_fail "$name" "the program fails under qemu (exit $rc): $(fails_of "$D/run.out")$(head -2 "$D/run.err")"; show "$D/run.out"; continue; }
	r=$(results_of "$D/run.out")
	if [ -z "$r" ] || ! echo "$r" | grep -q ', 0 wrong,' || { [ -n "$BASE_RESULTS" ] && [ "$r" != "$BASE_RESULTS" ]; }; then
		a64_fail "$name" "results differ from the other builds': '$r' vs '$BASE_RESULTS'"
		continue
	fi
	starts=""
	for f in "$exe" libbigtext.so; do
		p=$(realpath "$D/$f")
		o=$(printf '%08x' $((OFF[$f])))
		s=$(awk -v p="$p" -v o="$o" '$6 == p && $3 == o { split($1, a, "-"); print a[1]; exit }' "$D/maps")
		if [ -z "$s" ]; then
			bad+="$f: no mapping of its executable segment (offset $o) in the maps; "
		elif [ $((0x$s % 0x200000)) -ne 0 ]; then
			bad+="$f: text mapped at 0x$s, not 2 MiB-aligned; "
		fi
		starts+="$f at 0x$s, "
	done
	[ -z "$bad" ] || { a64_fail "$name" "$bad"; show "$D/maps"; continue; }
	a64_pass "$name" "runs under qemu (all functions right, text identical to the files, nothing huge without the library); executable segments p_align 0x200000, mapped at ${starts%, } (2 MiB-aligned)"
done

# ---- (e) off, and silenced ---------------------------------------------------
name=off
fresh "$bw" bigtext libbigtext.so
if baseline "$name" -- ./bigtext --expect-none --expect-not-loaded; then
	bad=""
	for v in ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=0 -; do
		envs=(LD_PRELOAD="$LIB")
		[ "$v" != - ] && envs+=("$v")
		fresh "$bw" bigtext libbigtext.so
		qemu "$D" "lib${v//[^A-Z0-9]/_}" "${envs[@]}" -- ./bigtext --expect-loaded
		[ "$RC" -eq 0 ] || bad+="[$v] exit $RC: $(fails_of "$OUT"); "
		[ "$(results_of "$OUT")" = "$BASE_RESULTS" ] || bad+="[$v] results differ; "
		[ -s "$ERR" ] && bad+="[$v] stderr not empty: '$(head -1 "$ERR")'; "
	done
	# the same library does speak when asked: the silence above means something
	qemu "$D" verbose ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$LIB" -- ./bigtext --expect-loaded --expect-none
	if [ "$RC" -ne 0 ] || [ "$(nlines "$ERR")" -ne 1 ] || ! grep -q '^enormoustext: .*ENORMOUSTEXT=0' "$ERR"; then
		bad+="ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=2 must say in one line that the library is off: '$(head -2 "$ERR" | tr '\n' '|')'; "
	fi
	if [ -z "$bad" ]; then
		a64_pass "$name" "preloaded with ENORMOUSTEXT=0, with ENORMOUSTEXT_VERBOSE=0 and with ENORMOUSTEXT_VERBOSE unset: nothing on stderr, results identical; ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=2: '$(cat "$ERR")'"
	else
		a64_fail "$name" "$bad"
	fi
fi

# ---- ENORMOUSTEXT_RECORD: the pc from an aarch64 signal frame ---------------
# perf_event_open is not emulated: the library samples with a CPU-time timer
# and SIGPROF, reading the pc from the aarch64 ucontext.
name=record.timer
fresh "$bw" bigtext libbigtext.so
qemu "$D" record LD_PRELOAD="$LIB" ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_RECORD="$D/p.prof" -- ./bigtext
how=$(grep -o 'ENORMOUSTEXT_RECORD=[^ ]*: perf_event_open: [^:]*' "$ERR" | sed 's/.*perf_event_open: //')
nsamp=$(sed -n 's/^# recorded .*: \([0-9]*\) samples.*/\1/p' "$D/p.prof" 2>/dev/null)
inbt=$(awk '/^object /{o=($3 ~ /\/(bigtext|libbigtext\.so)$/)} o && /^[0-9a-f]+ [0-9]+$/{n+=$2} END{print n+0}' "$D/p.prof" 2>/dev/null)
if [ "$RC" -ne 0 ] || [ ! -s "$D/p.prof" ]; then
	a64_fail "$name" "exit $RC, profile $(ls -s "$D/p.prof" 2>&1): $(head -2 "$ERR" | tr '\n' '|')"
elif grep -q '^# recorded by ENORMOUSTEXT_RECORD (CPU-time timer and SIGPROF)' "$D/p.prof"; then
	if [ "${nsamp:-0}" -ge 1 ] && [ "$inbt" -ge 1 ]; then
		a64_pass "$name" "perf_event_open refused (${how:-?}): the timer's profile has $nsamp samples, $inbt of them in bigtext and libbigtext.so"
	else
		a64_fail "$name" "the timer's profile has ${nsamp:-0} samples, $inbt in bigtext's objects"
	fi
else
	a64_pass "$name" "profile written with perf_event_open ($(sed -n 3p "$D/p.prof"))"
fi

# ---- what emulation cannot show ---------------------------------------------
if [ -n "$NOTHING_HUGE" ]; then
	notrun "huge placement" "nothing can go huge under this emulator (preload, linked, static, every backend, padding, dlopen'd text, script layouts): the library finds '$NOTHING_HUGE' (smaps text ${P[text_smaps]}), and even past that, madvise is not handed to the kernel (MADV_HUGEPAGE ${P[madv_hugepage]%/*} without effect, MADV_COLLAPSE ${P[madv_collapse]%/*} with ${P[madv_collapse]#*/} kB huge after, an unknown advice ${P[madvise_bogus]})"
	notrun "fork/exec sharing" "fork_test's child sharing the parent's huge pages and its exec'd child moving the library again need huge text first"
	notrun stress "window swaps under threads and signals: no window is ever swapped when nothing is moved"
fi
notrun "inspect, gdb, perf, uprobe" "qemu-user executes translated code: the host's perf and uprobes never see the guest's instructions and ptrace shows qemu's own state (gdb needs qemu's gdbstub, -g); inspect also needs aarch64 g++ and libunwind"
notrun "secure (setuid)" "qemu-aarch64 is an ordinary host process: the setuid bit of an aarch64 file does not apply when qemu runs it, so AT_SECURE is never set for the program"
finish
