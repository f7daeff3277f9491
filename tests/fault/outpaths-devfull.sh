#!/bin/bash
# Every writer pointed at /dev/full: the write fails with ENOSPC, said in
# one line naming /dev/full (the library's writers leave the program as a
# plain run; the command exits 1), and /dev/full stays the device it is.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
[ -c /dev/full ] || skip "/dev/full is not a character device here"
dn=$(stat -c '%t %T' /dev/full)
op_setup
for w in $OP_WRITERS; do
	op_run "$w" /dev/full
	op_refused "$w" /dev/full 'no space left on device'
	[ -c /dev/full ] && [ "$(stat -c '%t %T' /dev/full)" = "$dn" ] || fail "$w: /dev/full is no longer the device it was"
done
note "/dev/full: ENOSPC said, the device kept"
