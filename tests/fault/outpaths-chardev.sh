#!/bin/bash
# Every writer pointed at a character device (a copy of /dev/null made with
# mknod in the work directory, so that the real one is never at risk):
# written through, never replaced by a regular file; the program's status
# and output are those of a plain run; /dev/null itself stays a device.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
[ "$(id -u)" = 0 ] || skip "mknod of a character device needs root"
read -r maj min < <(stat -c '%t %T' /dev/null)
[ -c /dev/null ] || fail "/dev/null is not a character device before the test"
op_setup
mkdir "$WORK/dev" || exit 2
n=0
for w in $OP_WRITERS; do
	t=$WORK/dev/null-$w
	mknod "$t" c $((0x$maj)) $((0x$min)) || fail "mknod $t"
	n=$((n + 1))
	op_run "$w" "$t"
	op_same "$w"
	[ -c "$t" ] || fail "$w: $t is no longer a character device: $(stat -c %F "$t")"
	[ "$(stat -c '%t %T' "$t")" = "$maj $min" ] || fail "$w: $t changed its device number"
	op_entries "$WORK/dev" "$n"
	[ -s "$ERR" ] && op_is_lib "$w" && fail "$w: the library said something: $(head -2 "$ERR")"
done
[ -c /dev/null ] || fail "/dev/null is no longer a character device: $(stat -c %F /dev/null)"
[ "$(stat -c '%t %T' /dev/null)" = "$maj $min" ] || fail "/dev/null changed its device number"
note "every writer wrote through the device; it and /dev/null stay character devices"
