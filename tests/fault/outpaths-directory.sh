#!/bin/bash
# Every writer pointed at a directory: refused, with one line naming the
# path and saying it is a directory; the library's writers leave the
# program as a plain run (status, output; silent at ENORMOUSTEXT_VERBOSE=0),
# the command exits 1.  The directory and what is in it stay as they were.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
op_setup
mkdir "$WORK/d" || exit 2
for w in $OP_WRITERS; do
	t=$WORK/d/$w
	mkdir "$t" && echo keep >"$t/inside" || exit 2
	op_run "$w" "$t"
	op_refused "$w" "$t" 'directory' before
	[ -d "$t" ] || fail "$w: $t is no longer a directory"
	op_entries "$t" 1
	[ "$(cat "$t/inside")" = keep ] || fail "$w: the file inside $t changed"
done
op_entries "$WORK/d" "$(echo $OP_WRITERS | wc -w)"
note "a directory: refused with its type named, nothing changed"
