#!/bin/bash
# Every writer pointed at a symbolic link (an absolute link to a relative
# one to a regular file): written through, as a shell's `>` would: the
# file at the end is replaced with the new content (its mode kept), both
# links stay links to what they named, nothing is left beside them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
op_setup
mkdir "$WORK/s" || exit 2
n=0
for w in $OP_WRITERS; do
	echo old >"$WORK/s/real-$w" && chmod 0640 "$WORK/s/real-$w" || exit 2
	ln -s "real-$w" "$WORK/s/mid-$w" && ln -s "$WORK/s/mid-$w" "$WORK/s/link-$w" || exit 2
	n=$((n + 3))
	op_run "$w" "$WORK/s/link-$w"
	op_same "$w"
	[ -L "$WORK/s/link-$w" ] && [ "$(readlink "$WORK/s/link-$w")" = "$WORK/s/mid-$w" ] ||
		fail "$w: $WORK/s/link-$w is no longer the link it was: $(stat -c %F "$WORK/s/link-$w")"
	[ -L "$WORK/s/mid-$w" ] && [ "$(readlink "$WORK/s/mid-$w")" = "real-$w" ] ||
		fail "$w: $WORK/s/mid-$w is no longer the link it was"
	[ -f "$WORK/s/real-$w" ] && [ ! -L "$WORK/s/real-$w" ] || fail "$w: $WORK/s/real-$w is not a regular file"
	grep -qx old "$WORK/s/real-$w" && fail "$w: the file the links name still holds its old content"
	op_content "$w" "$WORK/s/real-$w"
	[ "$(stat -c %a "$WORK/s/real-$w")" = 640 ] || fail "$w: the file's mode became $(stat -c %a "$WORK/s/real-$w"), not 640"
	op_entries "$WORK/s" "$n"
	[ -s "$ERR" ] && op_is_lib "$w" && fail "$w: the library said something: $(head -2 "$ERR")"
done
note "links followed to the file, which was replaced; the links stay"
