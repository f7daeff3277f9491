# lib.sh — what every tests/integration/*.sh test shares.  Source it first:
#   . "$(dirname "$0")/lib.sh"
# One test a file: tests/integration/NAME.sh is the ctest test
# `integration.NAME` (see README.md for what each one shows), runnable alone as
#   ctest --test-dir build -R '^integration\.NAME$' --output-on-failure
# or directly, after a build, with the variables below set as
# CMakeLists.txt sets them (absolute paths: the runs cd to their copies), e.g.
#   IT_BIN=$PWD/build/tests/integration/bin IT_PRELOAD=$PWD/build/libenormoustext.so \
#   IT_TOOL=$PWD/build/tools/enormoustext IT_WORK_ROOT=/tmp/it bash tests/integration/NAME.sh
#
# Every test works on fresh `cp` copies of the test binaries, and first runs
# them WITHOUT the library, asserting that nothing is huge: the kernel can map
# a freshly linked file huge by itself (its page cache already holds 2 MiB
# folios), and then a "huge" result would prove nothing about the library.
# Each run with the library gets its own fresh copy, because a library that
# makes the page cache of a file huge (the "file" path) makes every later
# mapping of that file huge too.
#
# Environment (set by CMakeLists.txt): IT_BIN IT_MUSL_BIN IT_MUSL_GCC
# IT_PRELOAD IT_SOURCE_DIR IT_CMAKE IT_TOOL IT_WORK_ROOT (IT_BIN, IT_PRELOAD
# and IT_WORK_ROOT are required; the tests that need the others say so).
# Optional: IT_KEEP=1 keeps the work directory; IT_AUTO_KIND=anon|file|hugetlb|any
# (default any) is the kind of huge page counted where the library chooses its
# backend itself; IT_STRESS_SWAPS (default 10000) for the stress test.
#
# Exit: 0 pass, 1 fail, 77 skip (only where the machine lacks what a test needs), 2 set-up error.
#
# It sources tests/lib/lib.sh (strict mode, the test's name T, the verdicts
# fail MSG... / skip MSG... / pass, note, at_exit CMD or EXIT_HOOKS+=("CMD")
# to run CMD when the test ends, wait_line / wait_until: see there), clears
# every ENORMOUSTEXT* variable and LD_PRELOAD/LD_LIBRARY_PATH, makes a work
# directory $WORK (removed at exit unless IT_KEEP=1), and defines (each
# described where it is defined, below):
#   fresh SRCDIR FILE...                    fresh copies in a new directory $D
#   run LABEL [VAR=VALUE...] -- COMMAND...  a run in $D: $OUT $ERR $RC
#   baseline, std_baseline, expect_pass, same_results, stderr_empty,
#   stderr_one_line, bigtext_says           assertions on bigtext runs
#   layout_fresh, obj_num, obj_str, need_tool, need_file_thp
#   badenv, dlopen_baseline, dlopen_check, inspect_setup, loader_setup,
#   loader_base, loader_lib                 shared by one family of tests
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"
for v in IT_BIN IT_PRELOAD IT_WORK_ROOT; do
	if [ -z "${!v:-}" ]; then
		echo "$T: $v is not set: run the test through ctest (ctest --test-dir BUILD -R '^integration\\.${T//./\\.}\$')," \
		     "or set IT_BIN, IT_PRELOAD, IT_TOOL and IT_WORK_ROOT as tests/integration/CMakeLists.txt does"
		exit 2
	fi
done
# For the tests: the kind of huge page counted under auto, the library,
# helper programs, the huge page size in MiB.
AUTO_KIND=${IT_AUTO_KIND:-any}
PRE=$IT_PRELOAD
# shellcheck disable=SC2034
THP_OFF=$IT_BIN/thp_off
JSON_FLAT=$IT_BIN/json_flat
# shellcheck disable=SC2034
H_MIB=$(( $(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size 2>/dev/null || echo 2097152) / 1048576 ))

# Nothing from the caller's environment may steer the library.
et_clear_env
# The start-up path: the library moves the text in its constructor, so a
# program's own checks see the result at once, and copies stay copies (with
# priming a run on a file written out meanwhile — the kernel does that
# after 30 s — would leave the page cache huge for the next run, which
# would then be zero-copy).  The defaults (ENORMOUSTEXT_DEFER=1s,
# ENORMOUSTEXT_PRIME=auto) have tests of their own that unset these:
# integration.defaults.*, fault.syscalls' and fault.badvalues' defaults.
export ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_PRIME=0

# Commands run at exit (restore a setting, kill a helper process, unmount):
# EXIT_HOOKS+=("CMD"), tests/lib/lib.sh's.
et_workdir "$IT_WORK_ROOT" IT_KEEP
WORK=$ET_WORK

[ -e "$PRE" ] || fail "the library $PRE does not exist (build the 'enormoustext' target)"
for f in bigtext bigtext-nopie bigtext-linked bigtext-static libbigtext.so thp_off json_flat; do
	[ -x "$IT_BIN/$f" ] || [ -f "$IT_BIN/$f" ] || fail "$IT_BIN/$f is missing: build the tests first"
done

# fresh SRCDIR FILE... — copy FILEs and libbigtext.so from SRCDIR into a new
# directory D (cp, so that their page cache is written small).
N=0
fresh() {
	local src=$1
	shift
	N=$((N + 1))
	D=$WORK/run$N
	mkdir "$D" || exit 2
	cp "$src/libbigtext.so" "$D/" || fail "cannot copy $src/libbigtext.so"
	for f in "$@"; do cp "$src/$f" "$D/" || fail "cannot copy $src/$f"; done
}

# run LABEL [VAR=VALUE...] -- COMMAND [ARGS...]
# Runs COMMAND in $D with those variables; stdout in $OUT, stderr in $ERR,
# exit status in $RC; echoes everything (ctest shows it on failure).
run() {
	local label=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	OUT=$D/$label.out
	ERR=$D/$label.err
	echo "-- $label: cd $D && ${envs[*]:+${envs[*]} }$*"
	(cd "$D" && exec env "${envs[@]}" "$@") >"$OUT" 2>"$ERR"
	RC=$?
	et_show "$OUT" '   | '
	et_show "$ERR" '   stderr| '
	echo "   exit status $RC"
}

bigtext_says() { grep -E '^bigtext: (FAIL|ERROR)' "$OUT" | sed 's/^bigtext: //' | head -5 | tr '\n' ' '; }

# baseline [VAR=VALUE...] -- COMMAND — the copies without the library (or
# with it switched off): nothing may be huge.  Remembers the results line.
baseline() {
	run baseline "$@"
	if [ "$RC" -ne 0 ]; then
		if grep -q 'expected none' "$OUT"; then
			fail "BASELINE ALREADY HUGE: without the library, the fresh copies in $D are already on" \
			     "huge pages ($(bigtext_says)), so this test cannot tell what the library does." \
			     "The kernel mapped the files huge by itself (their page cache holds 2 MiB folios?)."
		fi
		fail "the baseline run (without the library) failed, exit status $RC: $(bigtext_says)$(head -3 "$ERR")"
	fi
	BASE_RESULTS=$(grep '^bigtext: results:' "$OUT")
	[ -n "$BASE_RESULTS" ] || fail "the baseline printed no results line"
}

# std_baseline EXE — fresh copy of EXE (+ libbigtext.so) and a baseline run.
std_baseline() {
	fresh "$IT_BIN" "$1"
	baseline -- "./$1" --expect-none --expect-not-loaded
}

# After a run with the library: exit status 0 (every expectation on the
# command line held) and the same results as the baseline.
expect_pass() {
	[ "$RC" -eq 0 ] || fail "$1: bigtext exited $RC: $(bigtext_says)$(head -3 "$ERR" | tr '\n' ' ')"
	same_results
}
same_results() {
	local r
	r=$(grep '^bigtext: results:' "$OUT")
	[ "$r" = "$BASE_RESULTS" ] || fail "the function results differ from the baseline's: '$r' vs '$BASE_RESULTS'"
}
nlines() { grep -c '' "$1"; }
stderr_empty() {
	[ ! -s "$ERR" ] || fail "$1: stderr must be empty, it holds $(nlines "$ERR") line(s), first: '$(head -1 "$ERR")'"
}
# stderr_one_line ERE WHAT — stderr is exactly one line, and it matches ERE.
stderr_one_line() {
	local n
	n=$(nlines "$ERR")
	[ "$n" -eq 1 ] || fail "$2: expected exactly one line on stderr, got $n: '$(head -3 "$ERR" | tr '\n' '|')'"
	grep -qE "$1" "$ERR" || fail "$2: the stderr line '$(cat "$ERR")' does not match /$1/"
}

# layout_fresh DIR EXE — fresh copies of a link-layout variant ($IT_BIN/DIR:
# EXE, libbigtext.so) with libenormoustext.so.0 beside them (they are linked
# with -lenormoustext and find it through RUNPATH $ORIGIN).
layout_fresh() {
	[ -d "$IT_BIN/$1" ] || fail "$IT_BIN/$1 is missing: build the tests first"
	fresh "$IT_BIN/$1" "$2"
	cp "$PRE" "$D/libenormoustext.so.0" || fail "cannot copy $PRE"
}

# obj_val REPORT exe|lib KEY TYPE — a value of the object (this run's copy
# of bigtext or libbigtext.so) in a JSON report; obj_num and obj_str.
obj_val() {
	local rep=$1 role=$2 key=$3 type=$4 f obj v
	[ -s "$rep" ] || fail "no report $rep"
	"$JSON_FLAT" "$rep" >"$rep.flat" || fail "$rep is not valid JSON"
	f=$D/bigtext
	[ "$role" = lib ] && f=$D/libbigtext.so
	f=$(realpath "$f")
	obj=$(awk -F '\t' -v p="$f" '$2 == "string" && $3 == p { sub(/\.[^.\[]*$/, "", $1); print $1; exit }' "$rep.flat")
	[ -n "$obj" ] || fail "the report $rep does not name $f"
	v=$(awk -F '\t' -v k="$obj.$key" -v t="$type" '$1 == k && $2 == t { print $3; f = 1 } END { exit !f }' "$rep.flat") ||
		fail "the report's entry for $f has no $type $key"
	echo "$v"
}
obj_num() { obj_val "$1" "$2" "$3" number; }
obj_str() { obj_val "$1" "$2" "$3" string; }

need_tool() {
	[ -x "${IT_TOOL:-}" ] || skip "the enormoustext command (${IT_TOOL:-unset}) was not built (libelf missing?)"
}

# need_file_thp — the page cache of this filesystem can hold 2 MiB folios
# that the kernel maps with PMD entries (enormoustext status's own probe,
# run in the work directory): what the zero-copy tests are about.
need_file_thp() {
	need_tool
	"$IT_TOOL" status --json --probe-dir "$WORK" >"$WORK/status.json" 2>/dev/null ||
		fail "enormoustext status failed"
	"$JSON_FLAT" "$WORK/status.json" >"$WORK/status.flat" || fail "enormoustext status printed bad JSON"
	local works detail
	works=$(awk -F '\t' '$1 == ".probes.file.works" { print $3 }' "$WORK/status.flat")
	detail=$(awk -F '\t' '$1 == ".probes.file.detail" { print $3 }' "$WORK/status.flat")
	[ "$works" = true ] || skip "this kernel and filesystem give no huge page-cache folios here: $detail"
}

# ---- shared by one family of tests ------------------------------------------

# script_test LINKER — bigtext (PIE and not) and libbigtext.so linked with
# -T enormous.ld by LINKER (bfd, lld) and -lenormoustext: the whole
# executable segment, head and tail, on huge pages — in the executable and
# in the shared library, also linked with the script.
script_test() {
	local L=$1 pkg=binutils exe
	[ "$L" = lld ] && pkg=lld
	[ -d "$IT_BIN/script-$L" ] || skip "the $L linker was not found when the build was configured (Debian: apt-get install $pkg)"
	for exe in bigtext bigtext-nopie; do
		layout_fresh "script-$L" "$exe"
		baseline ENORMOUSTEXT=0 -- "./$exe" --expect-none --expect-loaded
		run lib -- "./$exe" --expect-loaded --expect-seg-huge-exe 99 --expect-seg-huge-lib 99
		expect_pass "linked with enormous.ld ($L, $exe): >= 99% of each whole executable segment huge"
		stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	done
}

# badenv VAR VALUE (badenv.*) — a bad value in one variable: one warning
# line naming it, then the defaults (text still goes huge).
badenv() {
	local var=$1 val=$2
	std_baseline bigtext
	run lib "$var=$val" LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
	expect_pass "with $var='$val' the defaults must apply"
	stderr_one_line "^enormoustext: .*$var([^A-Z_]|\$)" \
		"with $var='$val' the library must warn once, naming $var"
}

# dlopen_baseline EXE (dlopen.*, dlmopen.preload) — fresh copies of EXE
# (dlopen_test or dlopen_test-linked), libbigtext.so and libctor_dlopen.so,
# and EXE loading libbigtext.so with the library off: nothing huge.
# dlopen_check — after the run with the library: dlopen_test passed (it
# also dlcloses and checks that nothing of ours is left, then loads the
# library again), and the library printed nothing.
dlopen_baseline() {
	fresh "$IT_BIN" "$1" libctor_dlopen.so
	run baseline ENORMOUSTEXT=0 -- "./$1" --expect-none ./libbigtext.so
	[ "$RC" -eq 0 ] || fail "baseline (no library): $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
}
dlopen_check() {
	[ "$RC" -eq 0 ] || fail "$(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
}

# inspect_setup (inspect.*) — a copy of the inspect program in D=$WORK/inspect;
# skips where it was not built.
inspect_setup() {
	[ -x "$IT_BIN/inspect" ] || skip "inspect was not built (no C++ compiler or no libunwind when configured)"
	D=$WORK/inspect
	mkdir "$D" && cp "$IT_BIN/inspect" "$D/" || exit 2
}

# loader.* — loader_setup: a copy of $IT_BIN/loader (loader_test,
# loader_norunpath and their libraries) in D=$WORK/loader.
# loader_base EXE ARGS... — EXE run without the library must pass.
# loader_lib EXE ARGS... — with the library preloaded it must pass too, and
# the library print nothing.
loader_setup() {
	D=$WORK/loader
	cp -r "$IT_BIN/loader" "$D" || exit 2
}
loader_base() {
	run base IT_LIBDIR="$D" -- "$@"
	[ "$RC" -eq 0 ] || fail "without the library: $(grep -E 'FAIL|->' "$OUT" | head -3 | tr '\n' ' ')"
}
loader_lib() {
	run lib IT_LIBDIR="$D" LD_PRELOAD="$PRE" -- "$@"
	[ "$RC" -eq 0 ] || fail "with the library (exit $RC): $(grep -E 'FAIL|->' "$OUT" | head -3 | tr '\n' ' ')"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
}
