#!/bin/bash
# Every writer pointed at a read-only file system (a tmpfs remounted
# read-only): a new file and an existing one alike fail with EROFS, said
# in one line naming the path; the existing file keeps its content; the
# library's writers leave the program as a plain run, the command exits 1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
[ "$(id -u)" = 0 ] || skip "mounting a read-only file system needs root"
op_setup
mkdir "$WORK/ro" || exit 2
mount -t tmpfs -o size=1m tmpfs "$WORK/ro" 2>"$WORK/mount.err" || skip "cannot mount a tmpfs: $(cat "$WORK/mount.err")"
at_exit "umount '$WORK/ro'"
for w in $OP_WRITERS; do echo old >"$WORK/ro/old-$w"; done
mount -o remount,ro "$WORK/ro" 2>"$WORK/mount.err" || fail "cannot remount the tmpfs read-only: $(cat "$WORK/mount.err")"
touch "$WORK/ro/probe" 2>/dev/null && fail "the remounted tmpfs is writable"
n=$(ls -A "$WORK/ro" | wc -l)
for w in $OP_WRITERS; do
	op_run "$w" "$WORK/ro/new-$w"
	op_refused "$w" "$WORK/ro/new-$w" 'read-only file system' before
	op_run "$w" "$WORK/ro/old-$w"
	op_refused "$w" "$WORK/ro/old-$w" 'read-only file system' before
	[ "$(cat "$WORK/ro/old-$w")" = old ] || fail "$w: $WORK/ro/old-$w changed"
	op_entries "$WORK/ro" "$n"
done
note "a read-only file system: EROFS said, nothing changed"
