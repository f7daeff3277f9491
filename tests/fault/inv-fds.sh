#!/bin/bash
# fault.inv-fds — the deferred worker must not take file descriptors from
# under the program: a program counts on open() returning the lowest free
# number, and the daemon idiom (close 0, 1, 2; open("/dev/null"); dup;
# dup) on getting 0 1 2.  The worker opens smaps, pagemap, cgroup files,
# the objects' files, its report... while the program runs: whatever it
# holds at the moment shifts the program's numbers.
#
# iv_prog --maps 5000 (a process with many mappings: its smaps is long,
# so the worker's reading of it lasts) --idiom 600: main repeats the idiom
# and an open-is-lowest check for 600 ms while the worker's start-up pass
# runs (ENORMOUSTEXT_DEFER=1ms, 20ms, 50ms, 100ms; 3 runs each), and prints
# how many rounds got other numbers (0 plain).  Then the dlopen pass: a
# program thread repeats the idiom for 1.8 s, main dlopens a copy of
# libbigtext.so at 600 ms (the thread waits between rounds during the call
# itself, so that what dlopen opens does not count); with the deferral the
# worker moves the library after the call, while the thread loops (3 runs).
# Every run's stdout and status must be the plain run's.
. "$(dirname "$0")/lib.sh"
IV=$FAULT_BIN/iv_prog
[ -x "$IV" ] || fail "$IV is missing: build the tests first"
fresh "$IV" "$IT_BIN/libbigtext.so"
R=$WORK/res
mkdir "$R" || exit 2
MAPS=5000
run() { # OUT [VAR=VALUE...] -- ARGS...: iv_prog in $D (a 60 s hang guard)
	local out=$1 envs=()
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$D" && exec env "${envs[@]}" timeout --foreground -k 5 60 ./iv_prog "$@" >"$out.out" 2>"$out.err")
	echo $? >"$out.rc"
}
IDIOM=(--maps "$MAPS" --idiom 600)
DLO=(--maps "$MAPS" --idiom-thread 1800 --dlopen ./libbigtext.so --dlopen-at 600)
run "$R/plain" -- "${IDIOM[@]}"
run "$R/dplain" -- "${DLO[@]}"
for p in plain dplain; do
	[ "$(cat "$R/$p.rc")" = 0 ] || fail "the plain run ($p) exited $(cat "$R/$p.rc"): $(cat "$R/$p.out" "$R/$p.err" | head -5)"
	grep -q ' 0 rounds gave other numbers than 0 1 2, 0 opens not the lowest' "$R/$p.out" ||
		fail "the plain run ($p) itself got other numbers: $(cat "$R/$p.out")"
done
grep -q 'dlopen: [0-9]* functions called' "$R/dplain.out" || fail "the plain run could not dlopen: $(cat "$R/dplain.out")"
bad=()
counts() { # a run's idiom lines as "X/Y" (rounds not 0 1 2 / opens not the lowest), by phase
	awk '/^idiom.*rounds gave/ {
		w = $0; sub(/:.*/, "", w)
		w = w == "idiom" ? "" : w == "idiom before the dlopen" ? "start-up pass " : "dlopen pass "
		n = $0; sub(/^[^:]*: /, "", n); split(n, a, " ")
		m = $0; sub(/.*, /, "", m); split(m, b, " ")
		printf "%s%s%s/%s", sep, w, a[1], b[1]; sep = ", "
	}' "$1"
}
check() { # OUT PLAIN WHAT
	local out=$1 plain=$2 what=$3 ran
	ran=$(grep -o '"objects_huge": [0-9]*' "$out.json" 2>/dev/null)
	[ -n "$ran" ] || fail "$what: no report from the worker: its pass did not run ($(head -3 "$out.err"))"
	if [ "$(cat "$out.rc")" = "$(cat "$plain.rc")" ] && cmp -s "$out.out" "$plain.out"; then
		note "$what: as plain (0 wrong; report: $ran)"
	else
		note "$what: exit $(cat "$out.rc"); rounds with other numbers than 0 1 2 / opens not the lowest: $(counts "$out.out") (plain 0/0; report: $ran)"
		bad+=("$what: $(counts "$out.out")")
	fi
}
for defer in 1ms 20ms 50ms 100ms; do
	for i in 1 2 3; do
		o=$R/i.$defer.$i
		run "$o" ENORMOUSTEXT_DEFER=$defer ENORMOUSTEXT_REPORT="$o.json" LD_PRELOAD="$PRE" -- "${IDIOM[@]}"
		check "$o" "$R/plain" "main's idiom, DEFER=$defer, run $i"
	done
done
for i in 1 2 3; do
	o=$R/d.$i
	run "$o" ENORMOUSTEXT_DEFER=1ms ENORMOUSTEXT_REPORT="$o.json" LD_PRELOAD="$PRE" -- "${DLO[@]}"
	grep -q '"path": "[^"]*libbigtext.so"' "$o.json" 2>/dev/null || note "(the report of dlopen run $i does not name libbigtext.so)"
	check "$o" "$R/dplain" "a thread's idiom around dlopen, DEFER=1ms, run $i"
done
[ ${#bad[@]} = 0 ] || fail "${#bad[@]} of 15 runs got other descriptor numbers than the plain run (wrong rounds of the idiom / wrong lowest opens): $(printf '%s; ' "${bad[@]}")"
echo "PASS [$T]"
