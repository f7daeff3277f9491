#!/bin/bash
# Every writer pointed at an existing regular file: replaced with the new
# content, keeping its mode (0644, and 0604, which no umask gives a new
# file) and, as root, its owner and group (here 1:1).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
op_setup
mkdir "$WORK/m" || exit 2
umask 022
root=
[ "$(id -u)" = 0 ] && root=1
[ -n "$root" ] || note "not root: the owner is not checked"
n=0
for w in $OP_WRITERS; do
	for mode in 644 604; do
		t=$WORK/m/$w-$mode
		echo old >"$t" && chmod "$mode" "$t" || exit 2
		[ -n "$root" ] && { chown 1:1 "$t" || exit 2; }
		n=$((n + 1))
		op_run "$w" "$t"
		op_same "$w"
		grep -qx old "$t" && fail "$w: $t still holds its old content"
		op_content "$w" "$t"
		[ "$(stat -c %a "$t")" = "$mode" ] || fail "$w: $t has mode $(stat -c %a "$t"), not $mode"
		[ -z "$root" ] || [ "$(stat -c %u:%g "$t")" = 1:1 ] || fail "$w: $t is owned by $(stat -c %u:%g "$t"), not 1:1"
		op_entries "$WORK/m" "$n"
		[ -s "$ERR" ] && op_is_lib "$w" && fail "$w: the library said something: $(head -2 "$ERR")"
	done
done
note "a regular file: replaced, mode (and owner) kept"
