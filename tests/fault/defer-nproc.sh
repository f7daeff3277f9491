#!/bin/bash
# fault.defer-nproc — RLIMIT_NPROC of 1 for a user with no other process,
# the deferral on a worker thread (ENORMOUSTEXT_DEFER_ON=thread; the
# default needs none: fault.defer-tasks): no thread can be made (EAGAIN),
# so the text is moved at start-up, with a line saying why, and the program runs as it does without the library.
# Root is not held to RLIMIT_NPROC, so the program runs as nobody.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
command -v setpriv >/dev/null && command -v prlimit >/dev/null || skip "needs setpriv and prlimit (util-linux)"
[ "$(id -u)" = 0 ] || skip "needs root to run the program as another user"
pgrep -u 65534 >/dev/null && skip "uid 65534 has processes of its own: RLIMIT_NPROC would count them"
R=$WORK/res
mkdir "$R" || exit 2
chmod 755 "$WORK" "$D" && chmod 777 "$R"
cp "$PRE" "$D/lib.so" && chmod 755 "$D/lib.so"
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups prlimit --nproc=1 -- "$@"; }
(cd "$D" && asnobody ./dp_prog --threads >"$R/plain.out" 2>"$R/plain.err"; echo $? >"$R/plain.rc")
[ "$(cat "$R/plain.rc")" = 0 ] || fail "dp_prog as nobody, without the library: exit $(cat "$R/plain.rc"): $(cat "$R/plain.err")"
(cd "$D" && ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_ON=thread LD_PRELOAD=$D/lib.so asnobody ./dp_prog --threads \
	>"$R/lib.out" 2>"$R/lib.err"; echo $? >"$R/lib.rc")
dp_same "$R/lib" "$R/plain"
grep -q 'ENORMOUSTEXT_DEFER: no worker thread (.*): text moved at start-up' "$R/lib.err" ||
	fail "no line saying why the work was done at start-up: $(cat "$R/lib.err")"
note "$(grep DEFER "$R/lib.err")"
echo "PASS [$T]"
