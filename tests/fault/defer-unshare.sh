#!/bin/bash
# fault.defer-unshare — a single-threaded program that calls
# unshare(CLONE_NEWUSER) (which fails with EINVAL in a process of several
# threads) while the deferred worker waits: the worker stands down first,
# the call succeeds as in the plain run, the program is single-threaded
# again, and one line says that nothing was moved and why.  The same with
# the deferral on the program's thread (ENORMOUSTEXT_DEFER_ON=main: no
# thread to end; the tick stops, since the call may change what the pass
# would open).
#
# 2. The same call from inside a dl_iterate_phdr callback (the loader's
# lock held) made after the deadline passed: with a worker
# (ENORMOUSTEXT_DEFER_ON=thread) the worker waits for that lock to start
# its pass and cannot stand down until the caller lets go.  The call must
# not wait for ever: after 10 s it goes on (and gets EINVAL, the process
# having two threads), and one line says why.  With ENORMOUSTEXT_DEFER_ON=main
# (no worker) the call goes on at once and succeeds, as plain.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
R=$WORK/res
mkdir "$R" || exit 2
dp_plain "$R/plain" --unshare
grep -q 'unshare(CLONE_NEWUSER): ok' "$R/plain.out" ||
	skip "unshare(CLONE_NEWUSER) fails here even without the library: $(head -1 "$R/plain.out")"
ENORMOUSTEXT_DEFER_ON=main dp_lib "$R/lib" 500ms --unshare --hold 800
dp_plain "$R/plain2" --unshare --hold 800
dp_same "$R/lib" "$R/plain2"
grep -q 'ENORMOUSTEXT_DEFER: unshare before the deferral ended: nothing moved' "$R/lib.err" ||
	fail "no line saying why nothing moved: $(cat "$R/lib.err")"
note "$(head -2 "$R/lib.out" | tr '\n' ' '); $(head -1 "$R/lib.err")"
(cd "$D" && ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=500ms ENORMOUSTEXT_DEFER_ON=thread LD_PRELOAD=$PRE ./dp_prog --unshare --hold 800 \
	>"$R/libt.out" 2>"$R/libt.err"; echo $? >"$R/libt.rc")
dp_same "$R/libt" "$R/plain2"
grep -q 'ENORMOUSTEXT_DEFER: unshare before the deferral ended: nothing moved' "$R/libt.err" ||
	fail "thread: no line saying why nothing moved: $(cat "$R/libt.err")"

dp_plain "$R/plain3" --unshare-in-phdr 300
grep -q 'in dl_iterate_phdr: ok' "$R/plain3.out" || fail "2. plain: $(head -1 "$R/plain3.out")"
t0=$SECONDS
(cd "$D" && ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_ON=thread LD_PRELOAD=$PRE timeout 40 ./dp_prog --unshare-in-phdr 300 \
	>"$R/locked.out" 2>"$R/locked.err")
rc=$?
[ "$rc" != 124 ] || fail "2. unshare inside dl_iterate_phdr with the worker waiting for the loader's lock: still waiting after 40 s (a deadlock)"
[ "$rc" = "$(cat "$R/plain3.rc")" ] || fail "2. exit $rc, plain $(cat "$R/plain3.rc"): $(cat "$R/locked.err")"
grep -q 'all results right' "$R/locked.out" || fail "2. the program's results: $(cat "$R/locked.out")"
grep -q 'ENORMOUSTEXT_DEFER: unshare: the worker did not stop within 10 s' "$R/locked.err" ||
	fail "2. no line saying why the call waited: $(cat "$R/locked.err")"
note "2. unshare inside dl_iterate_phdr while the worker waits for the loader's lock: went on after $((SECONDS - t0)) s: $(head -1 "$R/locked.out")"
t0=$SECONDS
(cd "$D" && ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_ON=main LD_PRELOAD=$PRE timeout 40 ./dp_prog --unshare-in-phdr 300 \
	>"$R/main3.out" 2>"$R/main3.err"; echo $? >"$R/main3.rc")
dp_same "$R/main3" "$R/plain3"
[ $((SECONDS - t0)) -lt 5 ] || fail "2. main: the call waited $((SECONDS - t0)) s"
note "2. main: $(head -1 "$R/main3.out"), in $((SECONDS - t0)) s; $(head -1 "$R/main3.err")"
echo "PASS [$T]"
