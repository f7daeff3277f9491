#!/bin/bash
# fault.defer-short — a process that exits before ENORMOUSTEXT_DEFER=2s
# ends: nothing is done (no summary line, no report file written), its
# output is its plain run's; and with the deferral at 0 the same program is
# moved at start-up, so the test can tell the two apart.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
R=$WORK/res
mkdir "$R" || exit 2
dp_plain "$R/plain"
(cd "$D" && ENORMOUSTEXT_REPORT=$R/short.json ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=2s LD_PRELOAD=$PRE ./dp_prog \
	>"$R/short.out" 2>"$R/short.err"; echo $? >"$R/short.rc")
dp_same "$R/short" "$R/plain"
[ ! -s "$R/short.err" ] || fail "a process that ended before the deferral said: $(cat "$R/short.err")"
[ ! -e "$R/short.json" ] || fail "a process that ended before the deferral wrote a report"
fresh "$DP"
dp_lib "$R/now" 0
dp_same "$R/now" "$R/plain"
grep -q ': 1 of [0-9]* objects\{0,1\}, [0-9.]* MiB of' "$R/now.err" || fail "ENORMOUSTEXT_DEFER=0 did not move the text at start-up: $(cat "$R/now.err")"
note "deferred 2 s: silent, no report; deferral 0: $(head -1 "$R/now.err")"
echo "PASS [$T]"
