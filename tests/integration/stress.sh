#!/bin/bash
# integration.stress — window swaps under running threads and a signal handler
# in the moved code.
#
# >= 10,000 window swaps while two threads run the moved code and a
# signal handler in it keeps being called: no wrong result, no crash.
. "$(dirname "$0")/lib.sh"

D=$WORK/stress
mkdir "$D" && cp "$IT_BIN/stress_main" "$IT_BIN/libstress.so" "$D/" || exit 2
run lib LD_PRELOAD="$PRE" -- ./stress_main ./libstress.so "${IT_STRESS_SWAPS:-10000}"
[ "$RC" -eq 0 ] || fail "stress_main exited $RC: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"

pass
