#!/bin/bash
# fault.defer-short — a process that exits before ENORMOUSTEXT_DEFER=2s
# ends: nothing is done, and asked to speak and report it says so (one
# line: it ended before the 2 s deferral, nothing moved; the report: ran
# false, that reason), its output is its plain run's; asked for neither, it
# says nothing; and with the deferral at 0 the same program is moved at
# start-up, so the test can tell the two apart.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
R=$WORK/res
mkdir "$R" || exit 2
dp_plain "$R/plain"
(cd "$D" && ENORMOUSTEXT_REPORT=$R/short.json ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=2s LD_PRELOAD=$PRE ./dp_prog \
	>"$R/short.out" 2>"$R/short.err"; echo $? >"$R/short.rc")
dp_same "$R/short" "$R/plain"
[ "$(grep -c . "$R/short.err")" -eq 1 ] &&
	grep -qE '^enormoustext: ended after [0-9.]+ m?s, before the 2 s deferral \(ENORMOUSTEXT_DEFER\): nothing moved$' "$R/short.err" ||
	fail "a process that ended before the deferral (ENORMOUSTEXT_VERBOSE=1) said: '$(cat "$R/short.err")'"
[ -s "$R/short.json" ] || fail "a process that ended before the deferral wrote no report"
grep -q '"ran": false' "$R/short.json" && grep -q '"reason": "ended before the deferral (ENORMOUSTEXT_DEFER): nothing moved: it ended after .*, the deferral is 2 s"' "$R/short.json" ||
	fail "the report of a process that ended before the deferral: $(head -c 400 "$R/short.json")"
(cd "$D" && ENORMOUSTEXT_DEFER=2s LD_PRELOAD=$PRE ./dp_prog >"$R/quiet.out" 2>"$R/quiet.err"; echo $? >"$R/quiet.rc")
dp_same "$R/quiet" "$R/plain"
[ ! -s "$R/quiet.err" ] || fail "a process that ended before the deferral, not asked to speak, said: $(cat "$R/quiet.err")"
fresh "$DP"
dp_lib "$R/now" 0
dp_same "$R/now" "$R/plain"
grep -q ': 1 of [0-9]* objects\{0,1\}, [0-9.]* MiB of' "$R/now.err" || fail "ENORMOUSTEXT_DEFER=0 did not move the text at start-up: $(cat "$R/now.err")"
note "deferred 2 s: '$(cat "$R/short.err")', the report's reason given; silent unasked; deferral 0: $(head -1 "$R/now.err")"
echo "PASS [$T]"
