#!/bin/bash
# fault.fork_dlopen_api — fork × dlopen × the stats API at once (one lock
# order for the loader's lock and the library's, fork handlers included):
# two threads dlopen/dlclose big libraries with a constructor, two call
# enormoustext_get_stats/_object_count/_get_object, two fork (the child
# calls enormoustext_get_stats once and exits with a known code), for
# FAULT_CC_SECONDS (default 10) seconds, plainly and preloaded.  The
# program's watchdog fails it within seconds if a thread stops making
# progress (a deadlock), naming the threads and where they are.  Both runs
# must pass, with the same RESULT line, and the library must stay silent.
# Prints the dlopen/dlclose and fork rates of both runs.
. "$(dirname "$0")/lib.sh"

SECS=${FAULT_CC_SECONDS:-10}
fresh "$FAULT_BIN/cc_fork_dlopen_api" "$FAULT_BIN/libcc_ctor.so"
cp "$D/libcc_ctor.so" "$D/libcc_ctor_b.so" || fail "cannot copy libcc_ctor.so"
cd "$D" || exit 2

# go LABEL [VAR=VALUE...]: run the program; stdout in $LABEL.out, stderr in
# $LABEL.err, status in RC.
go() {
	local label=$1
	shift
	note "$label: ${*:+$* }./cc_fork_dlopen_api --seconds $SECS ./libcc_ctor.so ./libcc_ctor_b.so"
	env "$@" ./cc_fork_dlopen_api --seconds "$SECS" ./libcc_ctor.so ./libcc_ctor_b.so >"$label.out" 2>"$label.err"
	RC=$?
	sed "s/^/  /" "$label.out" "$label.err"
}

go plain
[ "$RC" -eq 0 ] || fail "plain run (without the library) exited $RC: $(grep FAIL plain.out | head -1)"
go preloaded LD_PRELOAD="$PRE"
case $RC in
0) ;;
3 | 4) fail "preloaded: a thread got stuck (exit $RC): the fork/dlopen/API lock order is broken: $(grep -A7 FAIL preloaded.out | tr -s ' ' | tr '\n' ' ')" ;;
*) fail "preloaded run exited $RC: $(grep FAIL preloaded.out | head -1)" ;;
esac
grep -q 'API calls made' preloaded.out || fail "preloaded, the program did not find the library's API"
[ -s preloaded.err ] && fail "the library wrote to stderr with ENORMOUSTEXT_VERBOSE unset"
a=$(grep RESULT plain.out)
b=$(grep RESULT preloaded.out)
if [ -z "$a" ] || [ "$a" != "$b" ]; then fail "results differ: plain '$a', preloaded '$b'"; fi
rate() { sed -n "s/.*(\([0-9.]*\)\/s), [0-9]* forks (\([0-9.]*\)\/s).*/dlopen\/dlclose \1\/s, fork \2\/s/p" "$1"; }
note "plain:     $(rate plain.out)"
note "preloaded: $(rate preloaded.out)"
note "PASS"
