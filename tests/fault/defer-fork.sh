#!/bin/bash
# fault.defer-fork — fork while the deferred worker waits: the child (no
# worker of its own: its work is not done, as documented) computes right
# and exits; the parent's worker goes on and moves the parent's text.  And
# many short processes forking and exiting while a worker with a 1 ms
# deferral copies: every run prints what the plain run prints.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
R=$WORK/res
mkdir "$R" || exit 2
dp_plain "$R/plain" --fork --hold 700
dp_lib "$R/lib" 200ms --fork --hold 700
dp_same "$R/lib" "$R/plain"
[ "$(grep -c 'MiB of .* text on' "$R/lib.err")" = 1 ] ||
	fail "expected one summary line (the parent's worker), got: $(cat "$R/lib.err")"
grep -q '^enormoustext: 1 of [0-9]* objects\{0,1\}, ' "$R/lib.err" || fail "the parent's text was not moved: $(cat "$R/lib.err")"
dp_plain "$R/p0" --fork
for i in $(seq 20); do
	dp_lib "$R/race$i" 1ms --fork --hold $((i % 5))
	dp_same "$R/race$i" "$R/p0"
done
note "fork during the deferral: $(grep fork "$R/lib.out"); $(head -1 "$R/lib.err"); 20 racing runs right"
echo "PASS [$T]"
