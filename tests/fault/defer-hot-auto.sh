#!/bin/bash
# fault.defer-hot-auto — ENORMOUSTEXT_HOT=auto: the process samples itself
# while the worker waits, and the worker then moves only the windows that
# took the samples.  dp_prog --hot-middle runs 32 functions (128 KiB) of
# the middle of its 8 MiB text over and over: checked from outside, in the
# running process's smaps, one window (two where those functions straddle
# a boundary) goes huge, not all three; the report calls the others cold.
# Without the option the same run moves every window; with no deferral
# one line says HOT=auto has nothing to sample in.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
R=$WORK/res
mkdir "$R" || exit 2
dp_plain "$R/plain" --hold 2000 --hot-middle
[ "$(cat "$R/plain.rc")" = 0 ] || fail "plain run exited $(cat "$R/plain.rc"): $(cat "$R/plain.err")"
run_bg() {
	local out=$1
	shift
	dp_start "$out" "$@" LD_PRELOAD="$PRE" -- ./dp_prog --hold 2000 --hot-middle
	sleep 1.4
	KB=$(huge_kb "$P")
	wait
	dp_same "$out" "$R/plain"
}
run_bg "$R/auto" ENORMOUSTEXT_DEFER=700ms ENORMOUSTEXT_HOT=auto ENORMOUSTEXT_REPORT="$R/auto.json" ENORMOUSTEXT_VERBOSE=2
auto=$KB
grep -q 'ENORMOUSTEXT_HOT=auto: [0-9]* samples during the deferral: the hot windows move' "$R/auto.err" ||
	fail "no line saying the samples chose the windows: $(head -3 "$R/auto.err")"
run_bg "$R/all" ENORMOUSTEXT_DEFER=700ms
all=$KB
[ "$all" -ge 6144 ] || fail "without HOT=auto every window must move: $all kB huge"
[ "$auto" -ge 2048 ] && [ "$auto" -le 4096 ] ||
	fail "with HOT=auto only the hot window(s) must move: $auto kB huge (all: $all kB)"
grep -q 'cold: not among the hot windows' "$R/auto.json" || fail "the report does not call the other windows cold"
(cd "$D" && ENORMOUSTEXT_HOT=auto ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" ./dp_prog >"$R/now.out" 2>"$R/now.err")
grep -q 'ENORMOUSTEXT_HOT=auto samples during ENORMOUSTEXT_DEFER, which is 0: every window moves' "$R/now.err" ||
	fail "HOT=auto without a deferral must say it has nothing to sample in: $(cat "$R/now.err")"
note "HOT=auto: $auto kB huge ($(grep -o '[0-9]* samples' "$R/auto.err")); every window: $all kB"
echo "PASS [$T]"
