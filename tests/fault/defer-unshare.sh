#!/bin/bash
# fault.defer-unshare — a single-threaded program that calls
# unshare(CLONE_NEWUSER) (which fails with EINVAL in a process of several
# threads) while the deferred worker waits: the worker stands down first,
# the call succeeds as in the plain run, the program is single-threaded
# again, and one line says that nothing was moved and why.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
R=$WORK/res
mkdir "$R" || exit 2
dp_plain "$R/plain" --unshare
grep -q 'unshare(CLONE_NEWUSER): ok' "$R/plain.out" ||
	skip "unshare(CLONE_NEWUSER) fails here even without the library: $(head -1 "$R/plain.out")"
dp_lib "$R/lib" 500ms --unshare --hold 800
dp_plain "$R/plain2" --unshare --hold 800
dp_same "$R/lib" "$R/plain2"
grep -q 'ENORMOUSTEXT_DEFER: unshare before the deferral ended: nothing moved' "$R/lib.err" ||
	fail "no line saying why nothing moved: $(cat "$R/lib.err")"
note "$(head -2 "$R/lib.out" | tr '\n' ' '); $(head -1 "$R/lib.err")"
echo "PASS [$T]"
