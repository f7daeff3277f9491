#!/bin/bash
# Every writer pointed at a dangling symbolic link (relative, into a
# subdirectory): the file it names is created there (mode 0600 with umask
# 022), the link stays as it was.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
op_setup
mkdir -p "$WORK/l/sub" || exit 2
umask 022
n=0
for w in $OP_WRITERS; do
	ln -s "sub/new-$w" "$WORK/l/link-$w" || exit 2
	n=$((n + 1))
	op_run "$w" "$WORK/l/link-$w"
	op_same "$w"
	[ -L "$WORK/l/link-$w" ] && [ "$(readlink "$WORK/l/link-$w")" = "sub/new-$w" ] ||
		fail "$w: $WORK/l/link-$w is no longer the link it was: $(stat -c %F "$WORK/l/link-$w")"
	op_content "$w" "$WORK/l/sub/new-$w"
	[ "$(stat -c %a "$WORK/l/sub/new-$w")" = 600 ] || fail "$w: the new file has mode $(stat -c %a "$WORK/l/sub/new-$w"), not 600"
	op_entries "$WORK/l" "$((n + 1))"
	op_entries "$WORK/l/sub" "$n"
	[ -s "$ERR" ] && op_is_lib "$w" && fail "$w: the library said something: $(head -2 "$ERR")"
done
note "a dangling link: its target created, the link kept"
