#!/bin/bash
# smaps_reason — when /proc/self/smaps cannot be read, the windows left
# small say so ("could not read /proc/self/smaps"), not "the window is not
# one private read+execute file mapping" (what an earlier version said),
# and the program runs as plain.  The library's own openat calls are
# refused by faultrun (the fault harness's supervisor).
. "$(dirname "$0")/lib.sh"
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
cd "$D" || exit 2
./bigtext >plain.out 2>&1 || fail "the plain run failed"
"$FAULT_BIN/faultrun" --rule openat:EACCES -- env ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" ./bigtext >lib.out 2>lib.err
rc=$?
[ "$rc" -eq 0 ] || fail "bigtext exited $rc under the fault: $(grep -E 'FAIL|ERROR' lib.out | head -2)"
[ "$(grep '^bigtext: results:' lib.out)" = "$(grep '^bigtext: results:' plain.out)" ] || fail "results differ from the plain run"
grep -E 'enormoustext: .*/bigtext: .*left small' lib.err | grep -q 'could not read /proc/self/smaps' ||
	fail "the reason is not about smaps: $(grep -E 'enormoustext: .*/bigtext:' lib.err)"
grep -q 'not one private read+execute file mapping' lib.err && fail "the old, wrong reason is still given"
note "$(grep -E 'enormoustext: .*/bigtext:' lib.err)"
