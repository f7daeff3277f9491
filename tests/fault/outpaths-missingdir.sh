#!/bin/bash
# Every writer pointed into a directory that does not exist: one line that
# names the path given (never a temporary name) and says no such file or
# directory; the library's writers leave the program as a plain run, the
# command exits 1; no directory is created.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
op_setup
for w in $OP_WRITERS; do
	t=$WORK/nodir/$w.out
	op_run "$w" "$t"
	op_refused "$w" "$t" 'no such file or directory' before
	[ -e "$WORK/nodir" ] && fail "$w: $WORK/nodir was created"
done
note "a missing directory: one line naming the path, nothing created"
