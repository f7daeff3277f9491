#!/bin/bash
# Every writer pointed at a name where nothing is: a regular file with the
# content, mode 0600 (umask 022: the library and the command ask for 0600
# themselves), nothing else left in the directory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
op_setup
mkdir "$WORK/n" || exit 2
umask 022
n=0
for w in $OP_WRITERS; do
	t=$WORK/n/$w
	n=$((n + 1))
	op_run "$w" "$t"
	op_same "$w"
	op_content "$w" "$t"
	[ "$(stat -c %a "$t")" = 600 ] || fail "$w: the new file has mode $(stat -c %a "$t"), not 600"
	op_entries "$WORK/n" "$n"
done
note "a new file: 0600, whole"
