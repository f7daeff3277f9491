#!/bin/bash
# run.sh TEST — one integration test of libenormoustext (run through ctest;
# see README.md for what each test shows).
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
# IT_PRELOAD IT_SOURCE_DIR IT_CMAKE IT_WORK_ROOT.  Optional: IT_KEEP=1 keeps
# the work directory; IT_AUTO_KIND=anon|file|hugetlb|any (default any) is the
# kind of huge page counted where the library chooses its backend itself.
#
# Exit: 0 pass, 1 fail, 77 skip (only where the machine lacks what a test needs), 2 set-up error.
set -u

T=${1:?usage: run.sh TEST}
for v in IT_BIN IT_PRELOAD IT_WORK_ROOT; do
	if [ -z "${!v:-}" ]; then
		echo "run.sh: $v is not set: run the tests through ctest"
		exit 2
	fi
done
AUTO_KIND=${IT_AUTO_KIND:-any}
PRE=$IT_PRELOAD
THP_OFF=$IT_BIN/thp_off
JSON_FLAT=$IT_BIN/json_flat
H_MIB=$(( $(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size 2>/dev/null || echo 2097152) / 1048576 ))

# Nothing from the caller's environment may steer the library.
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(ENORMOUSTEXT[A-Za-z0-9_]*\)=.*/\1/p')
unset LD_PRELOAD LD_LIBRARY_PATH

mkdir -p "$IT_WORK_ROOT" || exit 2
WORK=$(mktemp -d "$IT_WORK_ROOT/$T.XXXXXX") || exit 2
EXIT_HOOKS=()
# shellcheck disable=SC2317 # called by the EXIT trap
on_exit() {
	local h
	for h in "${EXIT_HOOKS[@]}"; do eval "$h"; done
	if [ "${IT_KEEP:-0}" = 1 ]; then echo "(work directory kept: $WORK)"; else rm -rf "$WORK"; fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL [$T]: $*"; exit 1; }
skip() { echo "SKIP [$T]: $*"; exit 77; }

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
	sed 's/^/   | /' "$OUT"
	[ -s "$ERR" ] && sed 's/^/   stderr| /' "$ERR"
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

# A bad value in one variable: one warning line naming it, then the defaults
# (text still goes huge).
badenv() {
	local var=$1 val=$2
	std_baseline bigtext
	run lib "$var=$val" LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
	expect_pass "with $var='$val' the defaults must apply"
	stderr_one_line "^enormoustext: .*$var([^A-Z_]|\$)" \
		"with $var='$val' the library must warn once, naming $var"
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

case $T in
baseline)
	# The copies come up small without the library; the freshly linked
	# originals are shown for information only (the kernel may map those
	# huge by itself).
	for exe in bigtext bigtext-nopie; do
		std_baseline "$exe"
	done
	fresh "$IT_BIN" bigtext-linked
	baseline ENORMOUSTEXT=0 -- ./bigtext-linked --expect-none --expect-loaded
	echo "-- for information: the originals in the build directory, not copied:"
	D=$IT_BIN
	OUT=$WORK/orig.out
	(cd "$IT_BIN" && ./bigtext) >"$OUT" 2>&1
	sed -n 's/^bigtext: \(exe\|lib\) /   | \1 /p' "$OUT"
	;;

preload.pie | preload.nopie)
	exe=bigtext
	[ "$T" = preload.nopie ] && exe=bigtext-nopie
	std_baseline $exe
	run lib LD_PRELOAD="$PRE" -- "./$exe" --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
	expect_pass "preloaded, >= 95% of both objects' eligible text must be huge"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

linked | api)
	fresh "$IT_BIN" bigtext bigtext-linked
	baseline -- ./bigtext --expect-none --expect-not-loaded
	baseline ENORMOUSTEXT=0 -- ./bigtext-linked --expect-none --expect-loaded
	args=(--expect-huge 95 --kind "$AUTO_KIND" --expect-loaded)
	[ "$T" = api ] && args+=(--check-api)
	run lib -- ./bigtext-linked "${args[@]}"
	expect_pass "linked with -lenormoustext"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

linked.static)
	# libenormoustext.a inside the executable: no separate object to see, so
	# ENORMOUSTEXT=0 is the baseline for the executable.
	fresh "$IT_BIN" bigtext bigtext-static
	baseline -- ./bigtext --expect-none --expect-not-loaded
	baseline ENORMOUSTEXT=0 -- ./bigtext-static --expect-none
	run lib -- ./bigtext-static --expect-huge 95 --kind "$AUTO_KIND" --check-api
	expect_pass "linked with libenormoustext.a"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

once.linked_and_preloaded | once.static_and_preloaded)
	# Linked and preloaded at once, the work is done once: one summary line
	# at ENORMOUSTEXT_VERBOSE=1, and the API gives consistent figures.  With
	# the shared library twice, the loader keeps one copy (same soname); with
	# libenormoustext.a inside the program there are two copies, and the one
	# in the program must leave the work (and its API) to the preloaded one.
	pre=$PRE
	case $T in
	once.linked_and_preloaded) exe=bigtext-linked ;;
	once.static_and_preloaded) exe=bigtext-static ;;
	esac
	fresh "$IT_BIN" bigtext "$exe"
	baseline -- ./bigtext --expect-none --expect-not-loaded
	run lib ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$pre" -- "./$exe" --expect-huge 95 --kind "$AUTO_KIND" --check-api
	expect_pass "linked and preloaded at once"
	stderr_one_line '^enormoustext: [0-9]+ objects?, .* MiB of .* MiB text on [0-9]+ [MK]iB pages' \
		"linked and preloaded at once, the library must run once (one summary line)"
	;;

thp_disabled)
	[ -x "$THP_OFF" ] || fail "$THP_OFF missing"
	# With THP off, free pages in the hugetlb pool would be a legitimate way
	# to go huge: this test needs the pool empty (the machine's default).
	pool=/sys/kernel/mm/hugepages/hugepages-$((H_MIB * 1024))kB/free_hugepages
	if [ -r "$pool" ] && [ "$(cat "$pool")" -gt 0 ]; then
		fail "precondition: $pool is $(cat "$pool"); with free hugetlb pages the library may rightly" \
		     "use them when THP is disabled, so this test cannot expect nothing huge"
	fi
	std_baseline bigtext
	run lib -- "$THP_OFF" env LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=2 ./bigtext --expect-none --expect-loaded
	expect_pass "with THP disabled for the process (PR_SET_THP_DISABLE) nothing may go huge"
	[ -s "$ERR" ] || fail "with ENORMOUSTEXT_VERBOSE=2 and THP disabled the library must say why it did nothing; stderr is empty"
	if grep -qv '^enormoustext: ' "$ERR"; then
		fail "stderr has lines not from the library: '$(grep -v '^enormoustext: ' "$ERR" | head -2 | tr '\n' '|')'"
	fi
	grep -qi 'disabled' "$ERR" ||
		fail "with THP disabled, no 'enormoustext: ' line on stderr gives the reason (no 'disabled' in it)"
	;;

off)
	std_baseline bigtext
	run off ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- ./bigtext --expect-none --expect-loaded
	expect_pass "with ENORMOUSTEXT=0 the library must do nothing"
	stderr_empty "ENORMOUSTEXT=0"
	run off-verbose ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" -- ./bigtext --expect-none --expect-loaded
	expect_pass "with ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=2 the library must do nothing"
	stderr_one_line '^enormoustext: .*ENORMOUSTEXT=0' \
		"with ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=2 the library must say, in one line, that it is off (ENORMOUSTEXT=0)"
	;;

backend.thp | backend.collapse)
	b=${T#backend.}
	std_baseline bigtext
	run lib ENORMOUSTEXT_BACKEND="$b" LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind anon --expect-loaded
	expect_pass "ENORMOUSTEXT_BACKEND=$b must put >= 95% of both objects' eligible text on anonymous huge pages"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

backend.hugetlb)
	NR=/sys/kernel/mm/hugepages/hugepages-$((H_MIB * 1024))kB/nr_hugepages
	FREE=${NR%/nr_hugepages}/free_hugepages
	[ "$(id -u)" -eq 0 ] || skip "not root: cannot reserve hugetlb pages in $NR (the pool must not be assumed non-empty)"
	[ -w "$NR" ] || skip "$NR is not writable (no ${H_MIB} MiB hugetlb pages on this kernel?)"
	std_baseline bigtext
	windows=$(sed -n 's/^bigtext: eligible-windows-total: //p' "$OUT")
	[ -n "$windows" ] || fail "the baseline did not print its window count"
	old=$(cat "$NR")
	old_free=$(cat "$FREE")
	want=$((old + windows + 12))
	EXIT_HOOKS+=("echo '-- restoring $NR to $old'; echo $old > $NR || echo 'WARNING: could not restore $NR to $old'")
	echo "-- reserving hugetlb pages: $NR $old -> $want ($windows windows + 12 spare)"
	echo "$want" >"$NR" 2>/dev/null
	got=$(cat "$NR")
	free=$(cat "$FREE")
	if [ "$got" -lt "$want" ] || [ "$free" -lt $((old_free + windows)) ]; then
		skip "could not fill the hugetlb pool: asked for $want pages, got $got ($free free): not enough contiguous memory"
	fi
	run lib ENORMOUSTEXT_BACKEND=hugetlb LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind hugetlb --expect-loaded
	expect_pass "ENORMOUSTEXT_BACKEND=hugetlb with $free free pool pages must put >= 95% of both objects' eligible text on hugetlb pages"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

badenv.ENORMOUSTEXT) badenv ENORMOUSTEXT maybe ;;
badenv.VERBOSE_9) badenv ENORMOUSTEXT_VERBOSE 9 ;;
badenv.VERBOSE_abc) badenv ENORMOUSTEXT_VERBOSE abc ;;
badenv.BACKEND) badenv ENORMOUSTEXT_BACKEND bogus ;;
badenv.MIN_BYTES) badenv ENORMOUSTEXT_MIN_BYTES 12Q ;;
badenv.REPORT) badenv ENORMOUSTEXT_REPORT /nonexistent-dir/x.json ;;
badenv.INCLUDE_empty)
	# Empty is not an error: the same as unset (include everything).
	for var in ENORMOUSTEXT_INCLUDE ENORMOUSTEXT_EXCLUDE; do
		std_baseline bigtext
		run "lib-$var" "$var=" LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
		expect_pass "an empty $var must count as unset"
		stderr_empty "an empty $var is no error"
	done
	;;

verbose)
	std_baseline bigtext
	run verbose1 ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
	expect_pass "ENORMOUSTEXT_VERBOSE=1"
	stderr_one_line "^enormoustext: [0-9]+ objects?, .* MiB of .* MiB text on $H_MIB MiB pages" \
		"ENORMOUSTEXT_VERBOSE=1 must print one summary line"
	std_baseline bigtext
	run verbose0 ENORMOUSTEXT_VERBOSE=0 LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
	expect_pass "ENORMOUSTEXT_VERBOSE=0"
	stderr_empty "ENORMOUSTEXT_VERBOSE=0"
	;;

select.exclude)
	std_baseline bigtext
	run lib ENORMOUSTEXT_EXCLUDE='*libbigtext*' LD_PRELOAD="$PRE" -- \
		./bigtext --expect-huge-exe 95 --expect-none-lib --kind "$AUTO_KIND" --expect-loaded
	expect_pass "ENORMOUSTEXT_EXCLUDE='*libbigtext*': the executable huge, libbigtext.so not"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

select.include)
	std_baseline bigtext
	run lib ENORMOUSTEXT_INCLUDE='*libbigtext*' LD_PRELOAD="$PRE" -- \
		./bigtext --expect-huge-lib 95 --expect-none-exe --kind "$AUTO_KIND" --expect-loaded
	expect_pass "ENORMOUSTEXT_INCLUDE='*libbigtext*': libbigtext.so huge, the executable not"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

select.min_bytes)
	std_baseline bigtext
	run min-1G ENORMOUSTEXT_MIN_BYTES=1G LD_PRELOAD="$PRE" -- ./bigtext --expect-none --expect-loaded
	expect_pass "ENORMOUSTEXT_MIN_BYTES=1G: no object has 1 GiB of text, nothing may go huge"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	# Both objects have at least 6 MiB eligible: a 4M minimum keeps them.
	std_baseline bigtext
	run min-4M ENORMOUSTEXT_MIN_BYTES=4M LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
	expect_pass "ENORMOUSTEXT_MIN_BYTES=4M: both objects have more eligible text than that"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

report)
	[ -x "$JSON_FLAT" ] || fail "$JSON_FLAT missing"
	std_baseline bigtext
	rep=$D/report.json
	run lib ENORMOUSTEXT_REPORT="$rep" LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
	expect_pass "ENORMOUSTEXT_REPORT"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	[ -s "$rep" ] || fail "ENORMOUSTEXT_REPORT=$rep: no report written (or it is empty)"
	echo "-- the report:"
	sed 's/^/   | /' "$rep"
	"$JSON_FLAT" "$rep" >"$D/report.flat" 2>"$D/report.err" ||
		fail "the report is not valid JSON: $(cat "$D/report.err")"
	grep -q '^\.objects' "$D/report.flat" || fail "the report has no top-level \"objects\""
	grep -q '"huge_bytes"' "$rep" || fail "the report has no \"huge_bytes\""
	for role in exe lib; do
		f=$D/bigtext
		[ $role = lib ] && f=$D/libbigtext.so
		f=$(realpath "$f")
		# The object (JSON path prefix) that has a string member equal to the file's path.
		obj=$(awk -F '\t' -v p="$f" '$2 == "string" && $3 == p { sub(/\.[^.\[]*$/, "", $1); print $1; exit }' "$D/report.flat")
		[ -n "$obj" ] || fail "the report does not name the $role's path $f"
		hb=$(awk -F '\t' -v k="$obj.huge_bytes" '$1 == k && $2 == "number" { print $3 }' "$D/report.flat")
		[ -n "$hb" ] || fail "the report's entry for $f ($obj) has no numeric huge_bytes"
		[ "$hb" -gt 0 ] 2>/dev/null || fail "the report says huge_bytes = $hb for $f, but it is huge"
		echo "-- report: $role $f is $obj, huge_bytes $hb"
	done
	;;

dlopen.preload | dlopen.linked | dlopen.off | dlopen.exclude | dlmopen.preload | dlopen.ctor)
	# Text of libraries loaded after start-up: dlopen (preloaded, or linked
	# with -lenormoustext), dlmopen into a new namespace, and a dlopen from
	# inside another library's constructor.  dlopen_test also dlcloses and
	# checks that nothing of ours is left, then loads the library again.
	exe=dlopen_test
	[ "$T" = dlopen.linked ] && exe=dlopen_test-linked
	fresh "$IT_BIN" "$exe" libctor_dlopen.so
	run baseline ENORMOUSTEXT=0 -- "./$exe" --expect-none ./libbigtext.so
	[ "$RC" -eq 0 ] || fail "baseline (no library): $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
	case $T in
	dlopen.preload) run lib LD_PRELOAD="$PRE" -- ./dlopen_test ./libbigtext.so ;;
	dlopen.linked) run lib -- ./dlopen_test-linked ./libbigtext.so ;;
	dlopen.off) run lib ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- ./dlopen_test --expect-none ./libbigtext.so ;;
	dlopen.exclude) run lib ENORMOUSTEXT_EXCLUDE='*libbigtext*' LD_PRELOAD="$PRE" -- ./dlopen_test --expect-none ./libbigtext.so ;;
	dlmopen.preload) run lib LD_PRELOAD="$PRE" -- ./dlopen_test --dlmopen ./libbigtext.so ;;
	dlopen.ctor) run lib LD_PRELOAD="$PRE" -- ./dlopen_test --ctor ./libctor_dlopen.so ./libbigtext.so ;;
	esac
	[ "$RC" -eq 0 ] || fail "$(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

fork | fork.ctor)
	# fork: the child shares the parent's huge text (smaps Shared_*), no
	# second copy; an exec'd child runs the library afresh; a library that
	# forks in its constructor works.
	fresh "$IT_BIN" fork_test libfork_ctor.so
	if [ "$T" = fork ]; then
		run lib LD_PRELOAD="$PRE" -- ./fork_test ./libbigtext.so
	else
		run lib LD_PRELOAD="$PRE" -- ./fork_test --fork-ctor ./libfork_ctor.so ./libbigtext.so
	fi
	[ "$RC" -eq 0 ] || fail "fork_test exited $RC: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

inspect | inspect.gdb | inspect.perf | inspect.file)
	# Moved code stays inspectable: C++ exceptions, backtrace()/unw_backtrace
	# with dladdr, a perf map (ENORMOUSTEXT_PERFMAP=1), gdb breakpoints, and
	# perf report naming functions in moved text.
	[ -x "$IT_BIN/inspect" ] || skip "inspect was not built (no C++ compiler or no libunwind when configured)"
	D=$WORK/inspect
	mkdir "$D" && cp "$IT_BIN/inspect" "$D/" || exit 2
	case $T in
	inspect)
		run base -- ./inspect
		grep -q 'NOT moved' "$OUT" || fail "without the library the level_ functions should not be moved"
		run lib ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_PERFMAP=1 LD_PRELOAD="$PRE" -- ./inspect --perfmap
		[ "$RC" -eq 0 ] || fail "$(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
		;;
	inspect.file)
		# Zero-copy windows: the library maps the file itself, huge from a
		# primed page cache, so every tool sees the file as before; here
		# libunwind's unw_get_proc_name, which cannot name anonymous copies.
		need_file_thp
		run base -- ./inspect
		grep -q 'NOT moved' "$OUT" || fail "before priming, without the library, the level_ functions should be small"
		run prime -- "$IT_TOOL" prime ./inspect
		[ "$RC" -eq 0 ] || fail "enormoustext prime exited $RC"
		run lib ENORMOUSTEXT_BACKEND=file ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_REPORT="$D/r.json" LD_PRELOAD="$PRE" -- ./inspect --file
		[ "$RC" -eq 0 ] || fail "$(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
		grep -q 'inspect: .*MiB zero-copy' "$ERR" || fail "the library did not report the windows as zero-copy"
		# the library swapped the windows in itself (file-backed slots):
		# not only the kernel mapping them at a fault
		"$JSON_FLAT" "$D/r.json" >"$D/r.flat" || fail "the report is not valid JSON"
		rb=$(awk -F '\t' '$1 == ".remapped_bytes" { print $3 }' "$D/r.flat")
		zb=$(awk -F '\t' '$1 == ".zero_copy_bytes" { print $3 }' "$D/r.flat")
		echo "-- report: remapped_bytes $rb, zero_copy_bytes $zb"
		[ "${rb:-0}" -gt 0 ] && [ "${zb:-0}" -gt 0 ] || fail "no window swapped in zero-copy by the library (remapped $rb, zero-copy $zb)"
		;;
	inspect.gdb)
		command -v gdb >/dev/null || skip "gdb is not installed"
		# gdb attaches to the running process (its text already moved) and
		# sets its breakpoint in moved code.  (A breakpoint set before the
		# program starts changes the file text in memory first: the library
		# then leaves that window alone — see the 'uprobe' test.)
		(cd "$D" && exec env LD_PRELOAD="$PRE" ./inspect --spin 10) >"$D/spin.out" 2>&1 &
		spin=$!
		EXIT_HOOKS+=("kill $spin 2>/dev/null")
		for _ in $(seq 50); do grep -q '^ready' "$D/spin.out" && break; sleep 0.1; done
		pid=$(sed -n 's/^ready //p' "$D/spin.out")
		[ -n "$pid" ] || fail "inspect --spin did not start: $(cat "$D/spin.out")"
		sleep 0.2
		run gdb -- gdb -nx -batch -p "$pid" -ex 'break level_c' -ex continue -ex bt -ex 'info symbol $pc' \
			-ex 'printf "pc=%#lx\n", $pc' -ex 'info proc mappings' -ex 'delete' -ex detach
		kill "$spin" 2>/dev/null
		grep -qE '^Breakpoint 1, .*level_c' "$OUT" || fail "gdb did not stop at the breakpoint in level_c"
		grep -qE '#1 .*level_b' "$OUT" && grep -qE '#2 .*level_a' "$OUT" ||
			fail "gdb's backtrace from level_c does not go through level_b and level_a"
		grep -q 'level_c in section .text' "$OUT" || fail "gdb does not name the moved pc"
		# The breakpoint was hit in a moved window: an anonymous mapping.
		pc=$(sed -n 's/^pc=\(0x[0-9a-f]*\)$/\1/p' "$OUT")
		[ -n "$pc" ] || fail "gdb printed no pc"
		anon=""
		while read -r start end _ _ perms objfile _; do
			case "$start $end" in 0x*" "0x*) ;; *) continue ;; esac
			if (( pc >= start && pc < end )); then
				echo "   mapping of the pc $pc: $start-$end $perms ${objfile:-(anonymous)}"
				[ -z "$objfile" ] && anon=yes
			fi
		done <"$OUT"
		[ -n "$anon" ] || fail "the breakpoint at $pc was not hit in a moved (anonymous) window"
		;;
	inspect.perf)
		command -v perf >/dev/null || skip "perf is not installed"
		(cd "$D" && exec env ENORMOUSTEXT_PERFMAP=1 LD_PRELOAD="$PRE" ./inspect --spin 3) >"$D/spin.out" 2>&1 &
		spin=$!
		for _ in $(seq 50); do grep -q '^ready' "$D/spin.out" && break; sleep 0.1; done
		pid=$(sed -n 's/^ready //p' "$D/spin.out")
		[ -n "$pid" ] || fail "inspect --spin did not start: $(cat "$D/spin.out")"
		sleep 0.3
		[ -s "/tmp/perf-$pid.map" ] || fail "no /tmp/perf-$pid.map written by the library"
		# Attach: perf reads /proc/PID/maps, where the moved windows are
		# anonymous, and names them from the perf map.
		if ! perf record -q -e cpu-clock -F 499 -p "$pid" -o "$D/perf.data" -- sleep 1 >"$D/record.log" 2>&1; then
			wait "$spin"
			cat "$D/record.log"
			skip "perf record cannot attach here (see above)"
		fi
		wait "$spin"
		rm -f "/tmp/perf-$pid.map.keep"
		cp "/tmp/perf-$pid.map" "$D/perf.map" 2>/dev/null
		perf report -i "$D/perf.data" --stdio --sort sym 2>/dev/null >"$D/report.txt"
		rm -f "/tmp/perf-$pid.map"
		grep -E 'level_[abcd]' "$D/report.txt" | head -5 | sed 's/^/   report| /'
		grep -qE 'level_[abcd]' "$D/report.txt" || { sed 's/^/   report| /' "$D/report.txt" | head -30;
			fail "perf report does not name the functions in moved text"; }
		;;
	esac
	;;

uprobe)
	# A uprobe (an int3 the kernel keeps per file and offset) in a window:
	# copied into anonymous memory it would no longer be the kernel's and
	# kill the process when hit.  The library must see the text was changed
	# in memory and leave that window alone; the program runs right.
	[ "$(id -u)" -eq 0 ] || skip "needs root to add a uprobe"
	tfs=/sys/kernel/tracing
	if [ ! -w "$tfs/uprobe_events" ]; then
		tfs=$WORK/tracefs
		mkdir -p "$tfs" && mount -t tracefs nodev "$tfs" 2>/dev/null ||
			skip "cannot mount tracefs here (no uprobes)"
		EXIT_HOOKS+=("umount '$tfs' 2>/dev/null")
	fi
	[ -w "$tfs/uprobe_events" ] || skip "no uprobe_events in tracefs"
	fresh "$IT_BIN" bigtext
	# bt_exe_f1050: in the middle of the executable's 8 MiB, inside a window.
	read -r vaddr <<<"$(nm "$D/bigtext" | awk '$3 == "bt_exe_f1050" { print $1 }')"
	[ -n "$vaddr" ] || fail "no bt_exe_f1050 in bigtext"
	read -r segv sego <<<"$(readelf -lW "$D/bigtext" | awk '$1 == "LOAD" && $7 ~ /E/ { print $3, $2; exit }')"
	off=$(printf '0x%x' $((0x$vaddr - segv + sego)))
	baseline -- ./bigtext --expect-none --expect-not-loaded
	ev="p:etit_$$/f1050 $D/bigtext:$off"
	echo "-- uprobe: $ev"
	echo "$ev" >>"$tfs/uprobe_events" || skip "the kernel refused the uprobe ($ev)"
	EXIT_HOOKS+=("echo 0 > '$tfs/events/etit_$$/f1050/enable' 2>/dev/null; echo '-:etit_$$/f1050' >> '$tfs/uprobe_events' 2>/dev/null")
	echo 1 >"$tfs/events/etit_$$/f1050/enable" || fail "cannot enable the uprobe"
	run lib ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 30 --kind anon --expect-loaded
	[ "$RC" -eq 0 ] || [ "$RC" -eq 1 ] ||
		fail "with a uprobe in its text, bigtext exited $RC (133 = SIGTRAP: the probe was copied)"
	# bigtext compares its text in memory with the file: the probe's int3
	# at $off is the one difference allowed.
	others=$(grep '^bigtext: FAIL' "$OUT" | grep -v "text in memory differs .*(file offset $off): memory cc" || true)
	[ -z "$others" ] || fail "bigtext: $others"
	same_results
	grep -q 'changed in memory' "$ERR" || fail "no 'changed in memory' reason at ENORMOUSTEXT_VERBOSE=2"
	hits=$(cat "$tfs/events/etit_$$/f1050/../../../uprobe_profile" 2>/dev/null | awk '/f1050/ { print $NF }')
	echo "   uprobe hits: ${hits:-?}"
	;;

loader.*)
	# The wrappers must leave the loader's behaviour as it is, and never
	# hang or crash: RUNPATH/$ORIGIN names, dlclose from a destructor, a
	# failing dlopen racing a pass, a dlclose while another thread is in a
	# constructor, the first checks from two threads, the table up to date.
	D=$WORK/loader
	cp -r "$IT_BIN/loader" "$D" || exit 2
	mode=${T#loader.}
	args=("$mode")
	[ "$mode" = failing ] && args+=(5)
	[ "$mode" = fresh ] && args+=(500)
	if [ "$mode" != fresh ] && [ "$mode" != lazy ]; then
		run base IT_LIBDIR="$D" -- ./loader_test "${args[@]}"
		[ "$RC" -eq 0 ] || fail "without the library: $(grep -E 'FAIL|->' "$OUT" | head -3 | tr '\n' ' ')"
	fi
	exe=./loader_test
	[ "$mode" = origin ] && exe=./loader_norunpath
	if [ "$mode" = origin ]; then
		run base IT_LIBDIR="$D" -- "$exe" "${args[@]}"
		[ "$RC" -eq 0 ] || fail "without the library: $(grep -E 'FAIL|->' "$OUT" | head -3 | tr '\n' ' ')"
	fi
	base_out=$(grep -v 'failed dlopens\|pairs of' "$OUT")
	run lib IT_LIBDIR="$D" LD_PRELOAD="$PRE" -- "$exe" "${args[@]}"
	[ "$RC" -eq 0 ] || fail "with the library (exit $RC): $(grep -E 'FAIL|->' "$OUT" | head -3 | tr '\n' ' ')"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	# The loader found the same files with the library as without it.
	if [ "$mode" = runpath ] || [ "$mode" = origin ]; then
		[ "$(cat "$OUT")" = "$base_out" ] ||
			fail "the library changed what dlopen found: '$base_out' vs '$(cat "$OUT")'"
	fi
	;;

stress)
	# >= 10,000 window swaps while two threads run the moved code and a
	# signal handler in it keeps being called: no wrong result, no crash.
	D=$WORK/stress
	mkdir "$D" && cp "$IT_BIN/stress_main" "$IT_BIN/libstress.so" "$D/" || exit 2
	run lib LD_PRELOAD="$PRE" -- ./stress_main ./libstress.so "${IT_STRESS_SWAPS:-10000}"
	[ "$RC" -eq 0 ] || fail "stress_main exited $RC: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
	;;

secure)
	# A setuid program (owner nobody, run by root: AT_SECURE) linked with the
	# library: nothing done, nothing printed, no report written.
	[ "$(id -u)" -eq 0 ] || skip "needs root to make a setuid copy owned by another user"
	id nobody >/dev/null 2>&1 || skip "no user 'nobody' to own the setuid copy"
	D=$WORK/secure
	mkdir "$D" && cp "$IT_BIN/secure" "$D/" && chmod 755 "$WORK" "$D" || exit 2
	chown nobody "$D/secure" && chmod 4755 "$D/secure" || skip "cannot make a setuid copy here"
	run lib ENORMOUSTEXT_VERBOSE=3 ENORMOUSTEXT_REPORT="$D/report.json" ENORMOUSTEXT_BACKEND=bogus -- ./secure
	[ "$RC" -eq 77 ] && skip "the setuid copy did not run in secure-execution mode (nosuid mount?)"
	[ "$RC" -eq 0 ] || fail "$(grep FAIL "$OUT")"
	stderr_empty "in a secure-execution process the library must print nothing"
	[ ! -e "$D/report.json" ] || fail "in a secure-execution process the library wrote $D/report.json"
	# The same program, not setuid, does the work: the test can tell.
	run plain ENORMOUSTEXT_VERBOSE=1 -- "$IT_BIN/secure"
	[ "$RC" -eq 77 ] || fail "the non-setuid control run should not be secure (exit $RC)"
	grep -q '^enormoustext: ' "$ERR" || fail "the non-setuid control run printed no summary line"
	;;

textrel)
	# An object with text relocations is left alone (and still works).
	[ -x "$IT_BIN/textrel" ] || skip "no text-relocation test library on this architecture (x86-64 only)"
	readelf -d "$IT_BIN/libtextrel.so" | grep -q TEXTREL || fail "libtextrel.so was built without DT_TEXTREL"
	D=$WORK/textrel
	mkdir "$D" && cp "$IT_BIN/textrel" "$IT_BIN/libtextrel.so" "$D/" || exit 2
	run lib ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" -- ./textrel
	[ "$RC" -eq 0 ] || fail "textrel exited $RC: $(grep FAIL "$OUT")"
	grep -q 'libtextrel.so: left alone: has text relocations' "$ERR" ||
		fail "no 'libtextrel.so: left alone: has text relocations' line at ENORMOUSTEXT_VERBOSE=2"
	;;
musl)
	[ -n "${IT_MUSL_GCC:-}" ] || skip "musl-gcc not found when the build was configured (or ENORMOUSTEXT_IT_MUSL=OFF)"
	[ -x "$IT_MUSL_GCC" ] || skip "musl-gcc ($IT_MUSL_GCC) is not there any more"
	[ -x /lib/ld-musl-x86_64.so.1 ] || [ -e /lib/ld-musl-x86_64.so.1 ] ||
		skip "the musl dynamic loader /lib/ld-musl-x86_64.so.1 is not installed"
	[ -x "$IT_MUSL_BIN/bigtext" ] || fail "$IT_MUSL_BIN/bigtext was not built"
	mb=$WORK/musl-build
	echo "-- building libenormoustext with musl-gcc in $mb"
	if ! CC=$IT_MUSL_GCC "$IT_CMAKE" -S "$IT_SOURCE_DIR" -B "$mb" -DENORMOUSTEXT_BUILD_TESTS=OFF \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$WORK/musl-configure.log" 2>&1; then
		tail -30 "$WORK/musl-configure.log"
		fail "configuring the library with CC=musl-gcc failed (log above)"
	fi
	if ! "$IT_CMAKE" --build "$mb" --target enormoustext -j "$(nproc)" >"$WORK/musl-build.log" 2>&1; then
		tail -40 "$WORK/musl-build.log"
		fail "the library does not build with musl-gcc (log above)"
	fi
	mlib=$(find "$mb" -name libenormoustext.so -print -quit)
	[ -n "$mlib" ] || fail "no libenormoustext.so in the musl build tree $mb"
	mlib=$(realpath "$mlib")
	if command -v readelf >/dev/null; then
		needed=$(readelf -d "$mlib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
		echo "-- $mlib needs: $needed"
		case " $needed" in
		*libc.so.6*) fail "the musl build of the library depends on glibc's libc.so.6 ($needed)" ;;
		esac
	fi
	fresh "$IT_MUSL_BIN" bigtext
	readelf -l "$D/bigtext" 2>/dev/null | grep -q 'ld-musl' ||
		fail "$IT_MUSL_BIN/bigtext is not a dynamically linked musl program"
	baseline -- ./bigtext --expect-none --expect-not-loaded
	run lib LD_PRELOAD="$mlib" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
	expect_pass "musl program with the musl-built library preloaded"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	# dlopen with musl: the wrapper finds musl's dlopen with RTLD_NEXT.
	fresh "$IT_MUSL_BIN" dlopen_test
	run dlopen_base -- ./dlopen_test --expect-none ./libbigtext.so
	[ "$RC" -eq 0 ] || fail "musl dlopen baseline: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
	run dlopen LD_PRELOAD="$mlib" -- ./dlopen_test ./libbigtext.so
	[ "$RC" -eq 0 ] || fail "musl dlopen: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
	# ENORMOUSTEXT_RECORD with musl: musl-gcc has no kernel headers, so no
	# perf_event_open; the CPU-time timer and SIGPROF record instead
	printf '%s\n' '#include <time.h>' \
		'__attribute__((noinline)) unsigned spin_here(unsigned h) { for (int i = 0; i < 1000; i++) h = h * 2654435761u + 1; return h; }' \
		'int main(void) { unsigned h = 0; clock_t end = clock() + CLOCKS_PER_SEC; while (clock() < end) h = spin_here(h); return h == 42; }' \
		>"$D/spin.c"
	"$IT_MUSL_GCC" -O1 -Wl,--build-id -o "$D/spin" "$D/spin.c" || fail "musl-gcc cannot build spin.c"
	run record ENORMOUSTEXT_RECORD="$D/spin-%p.prof" ENORMOUSTEXT=0 LD_PRELOAD="$mlib" -- ./spin
	[ "$RC" -eq 0 ] || fail "musl: spin with ENORMOUSTEXT_RECORD: exit $RC"
	stderr_empty "musl: ENORMOUSTEXT_RECORD alone prints nothing"
	prof=$(ls "$D"/spin-*.prof 2>/dev/null | head -1)
	[ -n "$prof" ] || fail "musl: no profile written"
	sed -n 3p "$prof" | sed 's/^/   /'
	grep -q '^# recorded by ENORMOUSTEXT_RECORD (CPU-time timer and SIGPROF)' "$prof" ||
		fail "musl: not recorded with the timer: $(sed -n 3p "$prof")"
	ns=$(awk '/^object /{o=($3 ~ /\/spin$/)} o && /^[0-9a-f]+ [0-9]+$/{n+=$2} END{print n+0}' "$prof")
	echo "   $ns samples in spin"
	[ "$ns" -ge 50 ] || fail "musl: only $ns samples in spin's own text in 1 s of CPU"
	;;

script.bfd | script.lld)
	# Linked with -T enormous.ld (and -lenormoustext): the whole executable
	# segment, head and tail, on huge pages — in the executable (PIE and
	# not) and in the shared library, also linked with the script.
	L=${T#script.}
	[ -d "$IT_BIN/script-$L" ] || skip "the $L linker was not found when the build was configured (Debian: apt-get install lld)"
	for exe in bigtext bigtext-nopie; do
		layout_fresh "script-$L" "$exe"
		baseline ENORMOUSTEXT=0 -- "./$exe" --expect-none --expect-loaded
		run lib -- "./$exe" --expect-loaded --expect-seg-huge-exe 99 --expect-seg-huge-lib 99
		expect_pass "linked with enormous.ld ($L, $exe): >= 99% of each whole executable segment huge"
		stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	done
	;;

pad.flags)
	# Linked with only -z max-page-size=0x200000 -z separate-code (no
	# script): the text's last window is partial and the rest of it is free
	# address space, so the library pads it (ENORMOUSTEXT_PAD_THRESHOLD,
	# default 4096) and the whole segment goes huge; with 0, it does not.
	layout_fresh flags-bfd bigtext
	baseline ENORMOUSTEXT=0 -- ./bigtext --expect-none --expect-loaded
	run pad ENORMOUSTEXT_REPORT="$D/pad.json" -- ./bigtext --expect-seg-huge-exe 99 --expect-seg-huge-lib 99
	expect_pass "padded: >= 99% of each whole executable segment huge"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	for role in exe lib; do
		p=$(obj_num "$D/pad.json" "$role" padded_bytes)
		[ "$p" -gt 0 ] || fail "$role: padded_bytes = $p in the report, expected > 0"
		echo "-- $role: padded_bytes $p"
	done
	run nopad ENORMOUSTEXT_PAD_THRESHOLD=0 ENORMOUSTEXT_REPORT="$D/nopad.json" -- ./bigtext --expect-huge 95
	expect_pass "ENORMOUSTEXT_PAD_THRESHOLD=0"
	for role in exe lib; do
		p=$(obj_num "$D/nopad.json" "$role" padded_bytes)
		[ "$p" = 0 ] || fail "$role: padded_bytes = $p with ENORMOUSTEXT_PAD_THRESHOLD=0"
		pct=$(sed -n "s/^bigtext: $role: whole executable segment: .* = \([0-9.]*\)%/\1/p" "$OUT")
		awk -v p="$pct" 'BEGIN { exit !(p < 99) }' ||
			fail "$role: $pct% of the segment huge without padding: the tail was not partial, the test proves nothing"
	done
	;;

pad.threshold)
	# The rule on the bytes of text in the partial window: padded when more
	# than the threshold, not when equal; never when the rest of the window
	# is not free (the default layout, where the next segment shares it).
	layout_fresh flags-bfd bigtext
	read -r va msz < <(readelf -lW "$D/bigtext" | awk '$1 == "LOAD" && / R E / { print $3, $6; exit }')
	tail=$(( (va + msz) % (H_MIB * 1048576) ))
	[ -n "$tail" ] && [ "$tail" -gt 1 ] || fail "cannot read the text's tail from readelf ('$tail')"
	echo "-- the executable's text has $tail bytes in its last window"
	run over ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_PAD_THRESHOLD=$((tail - 1)) ENORMOUSTEXT_REPORT="$D/over.json" -- ./bigtext
	[ "$RC" -eq 0 ] || fail "threshold $((tail - 1)): bigtext exited $RC"
	p=$(obj_num "$D/over.json" exe padded_bytes)
	[ "$p" -gt 0 ] || fail "threshold $((tail - 1)) < $tail bytes of tail: not padded (padded_bytes $p)"
	run equal ENORMOUSTEXT_PAD_THRESHOLD=$tail ENORMOUSTEXT_REPORT="$D/equal.json" -- ./bigtext
	[ "$RC" -eq 0 ] || fail "threshold $tail: bigtext exited $RC"
	p=$(obj_num "$D/equal.json" exe padded_bytes)
	[ "$p" = 0 ] || fail "threshold $tail = the tail: padded anyway (padded_bytes $p)"
	# not free: the default layout (4 KiB max-page-size) puts the next
	# segment in the text's last window
	fresh "$IT_BIN" bigtext
	run notfree ENORMOUSTEXT_PAD_THRESHOLD=1 ENORMOUSTEXT_REPORT="$D/notfree.json" LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95
	[ "$RC" -eq 0 ] || fail "default layout: bigtext exited $RC: $(bigtext_says)"
	for role in exe lib; do
		p=$(obj_num "$D/notfree.json" "$role" padded_bytes)
		[ "$p" = 0 ] || fail "$role: padded over another mapping (padded_bytes $p)"
	done
	! grep -q 'the rest of the partial window is not free' "$D/notfree.json" ||
		fail "a window that cannot be padded must not count as a window left small: $(grep -o '"reasons": \[[^]]*\]' "$D/notfree.json" | head -2)"
	;;

pad.dlclose)
	# A library padded at run time, then dlclosed: no mapping of ours left
	# (the padding lies beyond the loader's own span), and loading it again
	# works.
	layout_fresh flags-bfd bigtext
	cp "$IT_BIN/dlopen_test" "$D/" || fail "cannot copy dlopen_test"
	run baseline ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- ./dlopen_test --expect-none ./libbigtext.so
	[ "$RC" -eq 0 ] || fail "baseline: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
	run lib LD_PRELOAD="$PRE" -- ./dlopen_test --expect-padded ./libbigtext.so
	[ "$RC" -eq 0 ] || fail "$(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	;;

file.primed)
	# The zero-copy file backend: once the page cache holds the text as huge
	# folios (enormoustext prime), windows are huge straight from the file —
	# FilePmdMapped, nothing copied, reported as zero-copy.
	need_file_thp
	layout_fresh script-bfd bigtext
	baseline ENORMOUSTEXT=0 -- ./bigtext --expect-none --expect-loaded
	run prime -- "$IT_TOOL" prime ./bigtext ./libbigtext.so
	[ "$RC" -eq 0 ] || fail "enormoustext prime exited $RC"
	grep -q '^./libbigtext.so: 5 of 5 window' "$OUT" || fail "prime did not make all 5 windows of libbigtext.so huge"
	run lib ENORMOUSTEXT_BACKEND=file ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_REPORT="$D/r.json" -- ./bigtext \
		--kind file --expect-huge 100 --expect-seg-huge-exe 99 --expect-seg-huge-lib 99
	[ "$RC" -eq 0 ] || fail "ENORMOUSTEXT_BACKEND=file after prime: $(bigtext_says)"
	for role in exe lib; do
		z=$(obj_num "$D/r.json" "$role" zero_copy_bytes)
		h=$(obj_num "$D/r.json" "$role" huge_bytes)
		[ "$z" -ge "$h" ] && [ "$h" -gt 0 ] || fail "$role: zero_copy_bytes $z, huge_bytes $h: expected all of it zero-copy"
		k=$(obj_str "$D/r.json" "$role" window_kinds)
		[ "$k" = zzzzz ] || fail "$role: window_kinds '$k', expected zzzzz"
		echo "-- $role: $z bytes zero-copy, windows $k"
	done
	grep -q 'libbigtext.so: .* MiB zero-copy' "$ERR" || fail "no per-object zero-copy figure at ENORMOUSTEXT_VERBOSE=2"
	;;

file.fallback)
	# Where the page cache holds the text in small pages (fresh copies),
	# `file` cannot help: alone it leaves the text small and says why;
	# `auto` falls back to anonymous copies, window by window.
	layout_fresh script-bfd bigtext
	baseline ENORMOUSTEXT=0 -- ./bigtext --expect-none --expect-loaded
	run fileonly ENORMOUSTEXT_BACKEND=file ENORMOUSTEXT_VERBOSE=2 -- ./bigtext --expect-none
	[ "$RC" -eq 0 ] || fail "ENORMOUSTEXT_BACKEND=file with a small page cache: something went huge: $(bigtext_says)"
	grep -q 'libbigtext.so: .*page cache holds this part of the file in small pages' "$ERR" ||
		fail "no reason 'page cache holds ... small pages' for libbigtext.so at ENORMOUSTEXT_VERBOSE=2"
	run auto ENORMOUSTEXT_REPORT="$D/r.json" -- ./bigtext --kind anon --expect-huge 100 --expect-seg-huge-exe 99 --expect-seg-huge-lib 99
	[ "$RC" -eq 0 ] || fail "auto after the file backend failed: $(bigtext_says)"
	for role in exe lib; do
		z=$(obj_num "$D/r.json" "$role" zero_copy_bytes)
		[ "$z" = 0 ] || fail "$role: zero_copy_bytes $z although the cache was small"
		k=$(obj_str "$D/r.json" "$role" window_kinds)
		[ "$k" = ccccc ] || fail "$role: window_kinds '$k', expected ccccc (copied)"
	done
	;;

file.not_congruent)
	# lld's default layout puts the text at an address that differs from
	# its file offset modulo 2 MiB: the kernel can never map it from the
	# file with PMD entries, and the file backend says so.
	[ -d "$IT_BIN/plain-lld" ] || skip "the lld linker was not found when the build was configured (Debian: apt-get install lld)"
	layout_fresh plain-lld bigtext
	run fileonly ENORMOUSTEXT_BACKEND=file ENORMOUSTEXT_VERBOSE=2 -- ./bigtext --expect-none-lib
	[ "$RC" -eq 0 ] || fail "ENORMOUSTEXT_BACKEND=file on non-congruent text: $(bigtext_says)"
	grep -q 'libbigtext.so: .*address and file offset differ modulo the huge page size' "$ERR" ||
		fail "no 'differ modulo' reason for libbigtext.so at ENORMOUSTEXT_VERBOSE=2"
	run auto -- ./bigtext --expect-huge-lib 100 --kind anon
	[ "$RC" -eq 0 ] || fail "auto on non-congruent text: $(bigtext_says)"
	;;

file.prime_option)
	# ENORMOUSTEXT_PRIME=1: windows copied because the page cache held them
	# small are dropped from the cache and read back huge, and the file
	# slot replaces the copy; then every later process, with the library
	# or not, gets them zero-copy.  Pages another process holds cannot be
	# dropped: those windows stay copies, and nothing breaks.
	need_file_thp
	layout_fresh script-bfd bigtext
	baseline ENORMOUSTEXT=0 -- ./bigtext --expect-none --expect-loaded
	run prime ENORMOUSTEXT_PRIME=1 ENORMOUSTEXT_REPORT="$D/p.json" -- ./bigtext --expect-huge 100 --kind file
	expect_pass "ENORMOUSTEXT_PRIME=1: every window zero-copy in the end"
	for role in exe lib; do
		k=$(obj_str "$D/p.json" "$role" window_kinds)
		[ "$k" = zzzzz ] || fail "$role: window_kinds '$k', expected zzzzz"
		echo "-- $role: windows $k"
	done
	run after ENORMOUSTEXT=0 -- ./bigtext --expect-huge 100 --kind file
	expect_pass "after one primed run, a run without the library gets the text huge from the page cache"
	# held: a process without the library keeps the (small) pages mapped
	layout_fresh script-bfd bigtext
	(cd "$D" && exec env ENORMOUSTEXT=0 ./bigtext --hold 20 >"$D/holder.out" 2>&1) &
	holder=$!
	EXIT_HOOKS+=("kill $holder 2>/dev/null")
	for _ in $(seq 100); do grep -q holding "$D/holder.out" 2>/dev/null && break; sleep 0.1; done
	grep -q holding "$D/holder.out" || fail "the holding process did not start"
	run held ENORMOUSTEXT_PRIME=1 ENORMOUSTEXT_REPORT="$D/h.json" -- ./bigtext --expect-huge 100 --kind anon
	kill $holder 2>/dev/null; wait $holder 2>/dev/null
	[ "$RC" -eq 0 ] || fail "ENORMOUSTEXT_PRIME=1 while another process holds the pages: $(bigtext_says)"
	k=$(obj_str "$D/h.json" lib window_kinds)
	[ "$k" = ccccc ] || fail "lib: window_kinds '$k' while the pages are held, expected ccccc (copies)"
	echo "-- held by another process: lib windows $k"
	;;

profile.hot)
	# ENORMOUSTEXT_PROFILE: only the hottest windows move.  A profile made
	# here by hand for the copies (their build-ids; counts in two of the
	# program's five windows and one of the library's):
	#   program 0x400000: 900, 0x800000: 100; library 0x200000: 10.
	# HOT_COVERAGE 95 (default) takes the two program windows (1000 of 1010
	# samples); 100 takes the library's too; HOT_BUDGET=2M only the hottest.
	# A profile that cannot be used moves nothing and says so once.
	layout_fresh script-bfd bigtext
	bx=$(readelf -n "$D/bigtext" | sed -n 's/.*Build ID: *//p')
	bl=$(readelf -n "$D/libbigtext.so" | sed -n 's/.*Build ID: *//p')
	[ -n "$bx" ] && [ -n "$bl" ] || fail "no build-ids in the copies"
	printf 'enormoustext-profile 1\ngranule 4096\nobject %s bigtext\n400000 900\n800000 100\nobject %s libbigtext.so\n200000 10\n' \
		"$bx" "$bl" >"$D/p.prof"
	sed 's/^/   profile| /' "$D/p.prof"
	baseline ENORMOUSTEXT=0 -- ./bigtext --expect-none --expect-loaded
	run hot ENORMOUSTEXT_PROFILE="$D/p.prof" ENORMOUSTEXT_REPORT="$D/h.json" -- ./bigtext
	[ "$RC" -eq 0 ] || fail "with a profile: $(bigtext_says)"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
	k=$(obj_str "$D/h.json" exe window_kinds); l=$(obj_str "$D/h.json" lib window_kinds)
	echo "-- coverage 95: program $k, library $l"
	[ "$k" = ".c.c." ] && [ "$l" = "....." ] || fail "coverage 95: program '$k', library '$l'; expected .c.c. and ....."
	grep -q 'cold: not among the hot windows' "$D/h.json" || fail "the cold windows' reason is not in the report"
	run all ENORMOUSTEXT_PROFILE="$D/p.prof" ENORMOUSTEXT_HOT_COVERAGE=100 ENORMOUSTEXT_REPORT="$D/a.json" -- ./bigtext
	k=$(obj_str "$D/a.json" exe window_kinds); l=$(obj_str "$D/a.json" lib window_kinds)
	echo "-- coverage 100: program $k, library $l"
	[ "$k" = ".c.c." ] && [ "$l" = "c...." ] || fail "coverage 100: program '$k', library '$l'; expected .c.c. and c...."
	run budget ENORMOUSTEXT_PROFILE="$D/p.prof" ENORMOUSTEXT_HOT_BUDGET=2M ENORMOUSTEXT_REPORT="$D/b.json" -- ./bigtext
	k=$(obj_str "$D/b.json" exe window_kinds)
	echo "-- budget 2M: program $k"
	[ "$k" = ".c..." ] || fail "budget 2M: program '$k', expected .c..."
	# strict: the library, which the profile does not have, is left alone
	grep -v "^object $bl\|^200000 10" "$D/p.prof" >"$D/exe-only.prof"
	run strict ENORMOUSTEXT_PROFILE="$D/exe-only.prof" ENORMOUSTEXT_PROFILE_STRICT=1 ENORMOUSTEXT_REPORT="$D/s.json" -- ./bigtext
	k=$(obj_str "$D/s.json" exe window_kinds); l=$(obj_str "$D/s.json" lib window_kinds)
	echo "-- strict: program $k, library $l"
	[ "$k" = ".c.c." ] && [ "$l" = "....." ] || fail "strict: program '$k', library '$l'; expected .c.c. and ....."
	run lenient ENORMOUSTEXT_PROFILE="$D/exe-only.prof" ENORMOUSTEXT_REPORT="$D/n.json" -- ./bigtext
	l=$(obj_str "$D/n.json" lib window_kinds)
	[ "$l" = "ccccc" ] || fail "not strict: the library the profile does not have should follow the normal rules, got '$l'"
	# an object the profile has with no samples (loaded, never run): cold
	{ cat "$D/exe-only.prof"; printf 'object %s libbigtext.so\n' "$bl"; } >"$D/lib-idle.prof"
	run idle ENORMOUSTEXT_PROFILE="$D/lib-idle.prof" ENORMOUSTEXT_REPORT="$D/i.json" -- ./bigtext
	l=$(obj_str "$D/i.json" lib window_kinds)
	echo "-- library known with no samples: $l"
	[ "$l" = "....." ] || fail "a library the profile has with no samples should stay cold, got '$l'"
	# samples no window can take (here beyond the program's text) do not
	# count: coverage 95 is still the two program windows, not every
	# window with a sample
	printf 'enormoustext-profile 1\ngranule 4096\nobject %s bigtext\n400000 900\n800000 100\n1000000 5000\nobject %s libbigtext.so\n200000 10\n' \
		"$bx" "$bl" >"$D/outside.prof"
	run outside ENORMOUSTEXT_PROFILE="$D/outside.prof" ENORMOUSTEXT_REPORT="$D/o.json" -- ./bigtext
	k=$(obj_str "$D/o.json" exe window_kinds); l=$(obj_str "$D/o.json" lib window_kinds)
	echo "-- samples outside the windows: program $k, library $l"
	[ "$k" = ".c.c." ] && [ "$l" = "....." ] ||
		fail "samples outside any window: program '$k', library '$l'; expected .c.c. and ....."
	# unusable profiles: missing, corrupt, another build
	run missing ENORMOUSTEXT_PROFILE="$D/nope.prof" -- ./bigtext --expect-none
	[ "$RC" -eq 0 ] || fail "a missing profile: $(bigtext_says)"
	stderr_one_line "^enormoustext: ENORMOUSTEXT_PROFILE=$D/nope.prof: .*nothing moved" "a missing profile"
	printf 'enormoustext-profile 1\ngranule 4096\nobject %s bigtext\n400000 many\n' "$bx" >"$D/bad.prof"
	run corrupt ENORMOUSTEXT_PROFILE="$D/bad.prof" -- ./bigtext --expect-none
	[ "$RC" -eq 0 ] || fail "a corrupt profile: $(bigtext_says)"
	stderr_one_line "^enormoustext: ENORMOUSTEXT_PROFILE=$D/bad.prof: line 4: .*nothing moved" "a corrupt profile"
	printf 'enormoustext-profile 1\ngranule 4096\nobject 00112233 %s\n400000 900\n' "$(realpath "$D/bigtext")" >"$D/other.prof"
	run other ENORMOUSTEXT_PROFILE="$D/other.prof" -- ./bigtext --expect-huge 100
	[ "$RC" -eq 0 ] || fail "a profile of another build: the normal rules should apply: $(bigtext_says)"
	stderr_one_line "^enormoustext: ENORMOUSTEXT_PROFILE=.*recorded for another build of .*bigtext: not used for it" \
		"a profile of another build"
	;;

record.env)
	# ENORMOUSTEXT_RECORD=FILE: the process samples itself (perf_event_open
	# cpu-clock, per CPU, inherited by its threads) and writes a profile at
	# exit, with the library moving text or not (here ENORMOUSTEXT=0, and
	# with the text moved: samples in moved windows count all the same).
	[ -x "$IT_BIN/inspect" ] || skip "inspect was not built (no C++ compiler or no libunwind when configured)"
	need_tool
	D=$WORK/record
	mkdir "$D" && cp "$IT_BIN/inspect" "$D/" || exit 2
	for mode in off on; do
		envs=(ENORMOUSTEXT_RECORD="$D/$mode-%p.prof" LD_PRELOAD="$PRE")
		[ $mode = off ] && envs+=(ENORMOUSTEXT=0)
		run "$mode" "${envs[@]}" -- ./inspect --spin 1
		[ "$RC" -eq 0 ] || fail "inspect --spin with ENORMOUSTEXT_RECORD ($mode): exit $RC"
		grep -q 'perf_event_open cannot sample' "$ERR" && skip "this machine refuses perf_event_open: $(head -1 "$ERR")"
		stderr_empty "ENORMOUSTEXT_RECORD alone prints nothing"
		prof=$(ls "$D/$mode-"*.prof 2>/dev/null | head -1)
		[ -n "$prof" ] || fail "no profile written ($mode)"
		[ "$(ls "$D/$mode-"*.prof | wc -l)" -eq 1 ] || fail "more than one profile for one process ($mode)"
		run "show-$mode" -- "$IT_TOOL" profile show "$prof"
		[ "$RC" -eq 0 ] || fail "the recorded profile is not valid ($mode)"
		run "order-$mode" -- "$IT_TOOL" profile order --object ./inspect "$prof"
		[ "$RC" -eq 0 ] || fail "the recorded profile has no samples for inspect ($mode)"
		head -1 "$OUT" | grep -q '^level_[abcd]$' || fail "$mode: the hottest function of inspect is $(head -1 "$OUT"), not a level_ function"
	done
	# objects loaded and never run are listed with no counts (libunwind:
	# inspect links it and spins elsewhere), by the library and by the tool
	grep -q '^object [0-9a-f]* .*libunwind[^ ]*$' "$D/off-"*.prof ||
		fail "ENORMOUSTEXT_RECORD: the profile does not list libunwind, loaded and idle"
	run tool -- "$IT_TOOL" record -o "$D/tool.prof" -- ./inspect --spin 1
	[ "$RC" -eq 0 ] || fail "enormoustext record inspect --spin: exit $RC"
	grep -q '^object [0-9a-f]* .*libunwind[^ ]*$' "$D/tool.prof" ||
		fail "enormoustext record: the profile does not list libunwind, loaded and idle; its objects: $(grep '^object' "$D/tool.prof" | tr '\n' '|')"
	# a path that cannot be written: one line, the program runs
	run badpath ENORMOUSTEXT_RECORD=/nonexistent-dir/p.prof LD_PRELOAD="$PRE" -- ./inspect --spin 1
	[ "$RC" -eq 0 ] || fail "an unwritable ENORMOUSTEXT_RECORD path: exit $RC"
	stderr_one_line "^enormoustext: ENORMOUSTEXT_RECORD: cannot write /nonexistent-dir/p.prof" "an unwritable path"
	;;

record.timer)
	# Where perf_event_open is refused (here by a seccomp filter, as in a
	# container), ENORMOUSTEXT_RECORD samples with a CPU-time POSIX timer and
	# SIGPROF instead.  Every thread: with --spin-thread the main thread
	# sleeps in pthread_join and another one spins; the profile must still
	# find the level_ functions hottest.  With the text moved too.
	[ -x "$IT_BIN/inspect" ] || skip "inspect was not built (no C++ compiler or no libunwind when configured)"
	need_tool
	D=$WORK/record
	mkdir "$D" && cp "$IT_BIN/inspect" "$D/" || exit 2
	run probe -- "$IT_BIN/noperf" true
	[ "$RC" -eq 77 ] && skip "cannot refuse perf_event_open here: $(head -1 "$ERR")"
	[ "$RC" -eq 0 ] || fail "noperf true: exit $RC: $(head -1 "$ERR")"
	for mode in off on; do
		for how in --spin --spin-thread; do
			envs=(ENORMOUSTEXT_RECORD="$D/$mode$how-%p.prof" LD_PRELOAD="$PRE")
			[ $mode = off ] && envs+=(ENORMOUSTEXT=0)
			run "$mode$how" "${envs[@]}" -- "$IT_BIN/noperf" ./inspect "$how" 2
			[ "$RC" -eq 0 ] || fail "inspect $how under noperf with ENORMOUSTEXT_RECORD ($mode): exit $RC: $(head -1 "$ERR")"
			stderr_empty "ENORMOUSTEXT_RECORD alone prints nothing, with the timer too"
			prof=$(ls "$D/$mode$how-"*.prof 2>/dev/null | head -1)
			[ -n "$prof" ] || fail "no profile written ($mode $how)"
			grep -q '^# recorded by ENORMOUSTEXT_RECORD (CPU-time timer and SIGPROF)' "$prof" ||
				fail "$mode $how: the profile was not recorded with the timer: $(sed -n 3p "$prof")"
			nsamp=$(sed -n 's/^# recorded .*: \([0-9]*\) samples.*/\1/p' "$prof")
			echo "   $mode $how: $(sed -n 3p "$prof")"
			# up to 2 s of CPU at up to 999 Hz, bounded by the kernel's tick
			# (100 to 1000 Hz) and by what this machine gives the test
			[ "${nsamp:-0}" -ge 30 ] || fail "$mode $how: only ${nsamp:-0} samples in about 2 s of spinning"
			# the spinning thread's samples: nearly all of them in inspect
			# (not in the libc where the main thread waits)
			ins=$(awk '/^object /{o=($3 ~ /\/inspect$/)} o && /^[0-9a-f]+ [0-9]+$/{n+=$2} END{print n+0}' "$prof")
			echo "   $mode $how: $ins of $nsamp samples in inspect"
			[ $((ins * 100)) -ge $((nsamp * 90)) ] || fail "$mode $how: only $ins of $nsamp samples in inspect"
			run "order-$mode$how" -- "$IT_TOOL" profile order --object ./inspect "$prof"
			[ "$RC" -eq 0 ] || fail "the timer's profile has no samples for inspect ($mode $how)"
			head -1 "$OUT" | grep -q '^level_[abcd]$' ||
				fail "$mode $how: the hottest function of inspect is $(head -1 "$OUT"), not a level_ function"
		done
	done
	# ENORMOUSTEXT_VERBOSE=1 says which way it samples
	run verbose ENORMOUSTEXT_RECORD="$D/v.prof" ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" -- \
		"$IT_BIN/noperf" ./inspect --spin 1
	grep -q 'ENORMOUSTEXT_RECORD=.*perf_event_open: .*sampling with a CPU-time timer and SIGPROF instead' "$ERR" ||
		fail "verbose: no line says the timer is used: '$(head -3 "$ERR" | tr '\n' '|')'"
	# SIGPROF already taken (here ignored, which exec keeps): nothing
	# recorded, one line, the program runs as it would
	run sigprof ENORMOUSTEXT_RECORD="$D/x.prof" ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- \
		"$IT_BIN/noperf" sh -c "trap '' PROF; exec ./inspect --spin 1"
	[ "$RC" -eq 0 ] || fail "SIGPROF ignored: exit $RC"
	stderr_one_line "^enormoustext: ENORMOUSTEXT_RECORD=$D/x.prof: cannot sample this process: perf_event_open: .*; the program has its own SIGPROF disposition: nothing recorded" \
		"SIGPROF taken"
	[ ! -e "$D/x.prof" ] || fail "SIGPROF taken: a profile was written anyway"
	# the program's own ways with signals: a worker that blocks every signal
	# spins while the main thread sleeps (each thread has its own timer: the
	# sleep is not interrupted); SIGPROF set back to SIG_DFL, or to a handler
	# of the program's, later on (the timers stop first: not killed, and the
	# program's handler sees none of them)
	cp "$IT_BIN/sigprof_test" "$D/" || exit 2
	for how in blocked-worker reset own-handler; do
		run "$how" ENORMOUSTEXT_RECORD="$D/$how.prof" ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- \
			"$IT_BIN/noperf" ./sigprof_test "--$how" 2
		[ "$RC" -eq 0 ] || fail "sigprof_test --$how under the timer: exit $RC: $(cat "$OUT" "$ERR" | head -3 | tr '\n' '|')"
		stderr_empty "sigprof_test --$how"
		[ -s "$D/$how.prof" ] || fail "sigprof_test --$how: no profile written"
	done
	ns=$(awk '/^object /{o=($3 ~ /\/sigprof_test$/)} o && /^[0-9a-f]+ [0-9]+$/{n+=$2} END{print n+0}' "$D/reset.prof")
	echo "   reset: $ns samples in sigprof_test before SIGPROF was set back"
	[ "$ns" -ge 10 ] || fail "sigprof_test --reset: only $ns samples before the reset"
	run reset-verbose ENORMOUSTEXT_RECORD="$D/rv.prof" ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" -- \
		"$IT_BIN/noperf" ./sigprof_test --reset 1
	grep -q 'ENORMOUSTEXT_RECORD: the program sets its own SIGPROF disposition: sampling stops here' "$ERR" ||
		fail "verbose: no line says sampling stopped: '$(head -3 "$ERR" | tr '\n' '|')'"
	# one file loaded from two paths (one build-id): one object in the
	# profile, which stays readable — with the timer and with perf_event_open
	mkdir -p "$D/a" "$D/b" && cp "$IT_BIN/libbigtext.so" "$D/a/" && cp "$IT_BIN/libbigtext.so" "$D/b/" || exit 2
	bl=$(readelf -n "$D/a/libbigtext.so" | sed -n 's/.*Build ID: *//p')
	for how in timer perf; do
		wrap=("$IT_BIN/noperf")
		[ $how = perf ] && wrap=()
		run "twice-$how" ENORMOUSTEXT_RECORD="$D/twice-$how.prof" ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- \
			"${wrap[@]}" ./sigprof_test --dlopen 1 "$D/a/libbigtext.so" "$D/b/libbigtext.so"
		[ "$RC" -eq 0 ] || fail "sigprof_test --dlopen twice ($how): exit $RC"
		[ "$how" = perf ] && grep -q 'perf_event_open cannot sample' "$ERR" && continue
		[ "$(grep -c "^object $bl " "$D/twice-$how.prof")" -eq 1 ] ||
			fail "$how: libbigtext.so loaded from two paths is not exactly one object in the profile"
		run "twice-show-$how" -- "$IT_TOOL" profile show "$D/twice-$how.prof"
		[ "$RC" -eq 0 ] || fail "$how: the profile of a file loaded twice does not parse: $(head -1 "$ERR")"
	done
	# objects loaded and never run are in the profile, with no counts
	# (libunwind: inspect links it and spins elsewhere)
	grep -q '^object [0-9a-f]* .*libunwind[^ ]*$' "$D/off--spin-"*.prof ||
		fail "the recorded profile does not list libunwind, loaded and idle"
	# `enormoustext record` where perf_event_open is refused: the command runs
	# with the library recording each process (moving nothing), and their
	# profiles are merged; the command's exit status is the tool's
	run tool "TMPDIR=$D" -- "$IT_BIN/noperf" "$IT_TOOL" record -o "$D/tool.prof" -- \
		sh -c './inspect --spin-thread 1; ./inspect --spin 1; exit 3'
	[ "$RC" -eq 3 ] || fail "enormoustext record under noperf: exit $RC, not the command's 3"
	grep -q '^enormoustext record: perf_event_open: .*sampling with the library.s CPU-time timer' "$ERR" ||
		fail "enormoustext record does not say it falls back: '$(head -3 "$ERR" | tr '\n' '|')'"
	# the two inspects (and sh, where it leaves through exit())
	grep -qE '^# merged from [23] profile\(s\)' "$D/tool.prof" ||
		fail "expected the profiles of the two inspects merged: '$(sed -n 3p "$D/tool.prof")'"
	run tool-order -- "$IT_TOOL" profile order --object ./inspect "$D/tool.prof"
	head -1 "$OUT" | grep -q '^level_[abcd]$' ||
		fail "record (timer): the hottest function of inspect is $(head -1 "$OUT"), not a level_ function"
	[ -z "$(ls "$D" | grep enormoustext-record)" ] || fail "record left its temporary directory behind"
	# a static program cannot load the library: one line, nothing written
	printf 'int main(void) { return 0; }\n' >"$D/static.c"
	cc -static -o "$D/static" "$D/static.c" || fail "cannot build a static program (cc -static; libc6-dev has libc.a)"
	file "$D/static" | grep -q 'statically linked' || fail "cc -static did not give a static program: $(file "$D/static")"
	run tool-static -- "$IT_BIN/noperf" "$IT_TOOL" record -o "$D/static.prof" -- ./static
	[ "$RC" -eq 1 ] || fail "record of a static program without perf_event_open: exit $RC, not 1"
	grep -q "no process of ./static wrote a profile.*nothing recorded" "$ERR" ||
		fail "record of a static program: '$(head -3 "$ERR" | tr '\n' '|')'"
	[ ! -e "$D/static.prof" ] || fail "record of a static program wrote a profile"
	# a command killed by a signal writes nothing (the library writes at
	# exit): its status, and a line that says so; a command not found: 127
	run tool-killed -- "$IT_BIN/noperf" "$IT_TOOL" record -o "$D/killed.prof" -- sh -c 'kill -TERM $$'
	[ "$RC" -eq 143 ] || fail "record of a command killed by SIGTERM: exit $RC, not 143"
	grep -q "sh was killed by signal 15 before it could write its profile" "$ERR" ||
		fail "record of a killed command: '$(head -3 "$ERR" | tr '\n' '|')'"
	run tool-missing -- "$IT_BIN/noperf" "$IT_TOOL" record -o "$D/missing.prof" -- ./no-such-command
	[ "$RC" -eq 127 ] || fail "record of a missing command: exit $RC, not 127"
	[ -z "$(ls "$D" | grep enormoustext-record)" ] || fail "record left a temporary directory behind"
	;;

file.shared)
	# Zero-copy text is the page cache's: every process maps the very same
	# huge pages (smaps Shared_*; Pss divided by the number of processes);
	# anonymous copies are each process's own.  With 2 and with 10.
	need_file_thp
	layout_fresh script-bfd bigtext
	run prime -- "$IT_TOOL" prime ./bigtext ./libbigtext.so
	[ "$RC" -eq 0 ] || fail "enormoustext prime exited $RC"
	for n in 2 10; do
		for backend in file thp; do
			holders=()
			for i in $(seq $((n - 1))); do
				(cd "$D" && exec env ENORMOUSTEXT_BACKEND=$backend ./bigtext --hold 30 >"$D/holder.$backend.$i.out" 2>&1) &
				holders+=($!)
				EXIT_HOOKS+=("kill $! 2>/dev/null")
			done
			for i in $(seq $((n - 1))); do
				for _ in $(seq 100); do grep -q holding "$D/holder.$backend.$i.out" 2>/dev/null && break; sleep 0.1; done
				grep -q holding "$D/holder.$backend.$i.out" || fail "process $i ($backend) did not start: $(cat "$D/holder.$backend.$i.out")"
			done
			if [ $backend = file ]; then
				run "last-of-$n" ENORMOUSTEXT_BACKEND=file -- ./bigtext --kind file --expect-huge 100 --expect-shared-lib 95
				[ "$RC" -eq 0 ] || fail "zero-copy, $n processes: the last does not share the others' huge text: $(bigtext_says)"
			else
				run "last-of-$n" ENORMOUSTEXT_BACKEND=thp -- ./bigtext --kind anon --expect-huge 100 --expect-private-lib 95
				[ "$RC" -eq 0 ] || fail "anonymous copies, $n processes: the last shares text it should own: $(bigtext_says)"
			fi
			pss=$(sed -n 's/^bigtext: lib: eligible windows shared .*Pss \([0-9.]*\) MiB$/\1/p' "$OUT")
			echo "-- $n processes, $backend: the lib's 10 MiB of windows cost each process Pss $pss MiB"
			if [ $backend = file ]; then
				awk -v p="$pss" -v n=$n 'BEGIN { exit !(p <= 10.0 / n * 1.05) }' ||
					fail "zero-copy, $n processes: Pss $pss MiB, expected about $(awk -v n=$n 'BEGIN { print 10 / n }') MiB"
			fi
			kill "${holders[@]}" 2>/dev/null
			wait "${holders[@]}" 2>/dev/null
		done
	done
	;;

*)
	echo "run.sh: unknown test '$T'"
	exit 2
	;;
esac
echo "PASS [$T]"
exit 0
