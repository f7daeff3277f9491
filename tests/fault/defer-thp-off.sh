#!/bin/bash
# fault.defer-thp-off — a program that turns THP off for itself early
# (prctl(PR_SET_THP_DISABLE, 1), as MariaDB and Redis do in main) while
# the deferred worker waits or paces: the worker does all its work first,
# unpaced, and the call then goes on, so the text ends as huge as with no
# deferral; the program sees what it sees plain (the call succeeds, THP is
# off for it afterwards).  Checked from outside, in the running process's
# smaps:
#   1. the call first thing in main, with a 500 ms deferral: all the text
#      huge, one line saying the text was moved first;
#   2. the call 600 ms in, while the worker paces at 2 MiB/s (a window a
#      second): every window huge by 900 ms, not one a second.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
R=$WORK/res
mkdir "$R" || exit 2
dp_plain "$R/plain" --thp-off --hold 1500
grep -q 'PR_GET_THP_DISABLE: 1' "$R/plain.out" ||
	skip "prctl(PR_SET_THP_DISABLE) does not work here even without the library: $(head -2 "$R/plain.out" | tr '\n' ' ')"

# 1. first thing in main
dp_start "$R/early" ENORMOUSTEXT_DEFER=500ms ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" -- ./dp_prog --thp-off --hold 1500
sleep 0.9
kb1=$(huge_kb "$P")
wait
dp_same "$R/early" "$R/plain"
[ "$kb1" -ge 6144 ] || fail "1. THP off in main: $kb1 kB of the text huge, 6144 expected: $(cat "$R/early.err")"
grep -q 'ENORMOUSTEXT_DEFER: prctl(PR_SET_THP_DISABLE) before the deferral ended: the text was moved first' "$R/early.err" ||
	fail "1. no line saying the text was moved first: $(cat "$R/early.err")"
note "1. THP off first thing in main, DEFER=500ms: $kb1 kB huge; $(head -1 "$R/early.err")"

# 2. while the worker paces
dp_plain "$R/plain2" --thp-off-at 600 --hold 3000
dp_start "$R/paced" ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_RATE=2 ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" \
	-- ./dp_prog --thp-off-at 600 --hold 3000
# (the call at 600 ms leaves room for a loaded machine, where starting
# `sleep` and reading smaps take tens of ms each)
sleep 0.25
kb_before=$(huge_kb "$P")
sleep 0.65
kb2=$(huge_kb "$P")
wait
dp_same "$R/paced" "$R/plain2"
[ "$kb_before" -lt 6144 ] || fail "2. at 2 MiB/s the text was all huge before the call ($kb_before kB): the test proves nothing"
[ "$kb2" -ge 6144 ] || fail "2. THP off while pacing: $kb2 kB huge at 900 ms (before the call: $kb_before): $(cat "$R/paced.err")"
note "2. paced at 2 MiB/s, THP off at 600 ms: $kb_before kB huge at 250 ms, $kb2 kB at 900 ms"
echo "PASS [$T]"
