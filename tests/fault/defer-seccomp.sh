#!/bin/bash
# fault.defer-seccomp — under a seccomp filter that forbids new threads
# (dp_noclone: clone(CLONE_THREAD) is EPERM, clone3 ENOSYS).  By default the
# library stands down under any seccomp filter (it cannot know which of its
# calls the filter allows): nothing moves, one line at verbosity 1 says
# why.  With ENORMOUSTEXT_SECCOMP=trust it acts: the deferred worker
# (ENORMOUSTEXT_DEFER_ON=thread; the default makes none) cannot be made, so the text is moved at start-up instead, with one line saying
# why.  Either way the program runs as its plain run does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
NC=$FAULT_BIN/dp_noclone
R=$WORK/res
mkdir "$R" || exit 2
(cd "$D" && "$NC" ./dp_prog --threads >"$R/plain.out" 2>"$R/plain.err"; echo $? >"$R/plain.rc")
[ "$(cat "$R/plain.rc")" = 0 ] || fail "dp_prog under the filter, without the library: exit $(cat "$R/plain.rc"): $(cat "$R/plain.err")"
(cd "$D" && ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_ON=thread LD_PRELOAD=$PRE "$NC" ./dp_prog --threads \
	>"$R/avoid.out" 2>"$R/avoid.err"; echo $? >"$R/avoid.rc")
dp_same "$R/avoid" "$R/plain"
grep -q 'a seccomp filter is in force.*: the library stands down' "$R/avoid.err" ||
	fail "by default, no line saying the library stands down under the filter: $(cat "$R/avoid.err")"
! grep -q ' objects\{0,1\}, [0-9.]* MiB of' "$R/avoid.err" || fail "the library acted under the filter: $(cat "$R/avoid.err")"
note "default: $(grep 'stands down' "$R/avoid.err" | tail -1)"
(cd "$D" && ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_ON=thread LD_PRELOAD=$PRE "$NC" ./dp_prog --threads \
	>"$R/lib.out" 2>"$R/lib.err"; echo $? >"$R/lib.rc")
dp_same "$R/lib" "$R/plain"
grep -q 'ENORMOUSTEXT_DEFER: no worker thread (operation not permitted): text moved at start-up' "$R/lib.err" ||
	fail "no line saying why the work was done at start-up: $(cat "$R/lib.err")"
grep -q '^enormoustext: 1 of [0-9]* objects\{0,1\}, [0-9.]* MiB of' "$R/lib.err" || fail "the text was not moved at start-up: $(cat "$R/lib.err")"
note "trust: $(grep DEFER "$R/lib.err"); $(grep ': 1 of [0-9]* objects' "$R/lib.err")"
echo "PASS [$T]"
