#!/bin/bash
# fault.defer-ns — setns and chroot while the deferred worker waits: the
# worker stands down before each (after chroot it would read another
# /proc; setns into a user namespace needs the process single-threaded),
# one line names the call, the call does what it does without the library,
# and the program prints what its plain run prints.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
[ "$(id -u)" = 0 ] || skip "setns and chroot need root"
R=$WORK/res
mkdir "$R" || exit 2
mkdir "$WORK/root" || exit 2
for how in setns chroot; do
	args=(--$how)
	[ $how = chroot ] && args=(--chroot "$WORK/root")
	dp_plain "$R/plain-$how" "${args[@]}" --hold 600
	grep -q "^$how.*: ok" "$R/plain-$how.out" || skip "$how fails here even without the library: $(head -1 "$R/plain-$how.out")"
	dp_lib "$R/lib-$how" 400ms "${args[@]}" --hold 600
	dp_same "$R/lib-$how" "$R/plain-$how"
	grep -q "ENORMOUSTEXT_DEFER: $how before the deferral ended: nothing moved" "$R/lib-$how.err" ||
		fail "$how: no line saying why nothing moved: $(cat "$R/lib-$how.err")"
	note "$how: $(head -1 "$R/lib-$how.out"); $(head -1 "$R/lib-$how.err")"
done
echo "PASS [$T]"
