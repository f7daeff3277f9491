#!/bin/bash
# Every writer pointed at a FIFO that nobody reads: nothing blocks.  The
# library's writers leave the program as a plain run (status, output), say
# why in one line at ENORMOUSTEXT_VERBOSE=1 and nothing at 0 or by default;
# the command says so in one line naming the FIFO and exits 1.  The FIFO
# stays a FIFO, nothing is left beside it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
op_setup
mkdir "$WORK/fifo" || exit 2
n=0
for w in $OP_WRITERS; do
	t=$WORK/fifo/$w
	mkfifo "$t" || fail "mkfifo $t"
	n=$((n + 1))
	if op_is_lib "$w"; then
		op_run "$w" "$t"
		op_same "$w"
		[ -s "$ERR" ] && fail "$w: by default the library says something: $(head -2 "$ERR")"
		op_run "$w" "$t" ENORMOUSTEXT_VERBOSE=0
		op_same "$w"
		[ -s "$ERR" ] && fail "$w at ENORMOUSTEXT_VERBOSE=0: $(head -2 "$ERR")"
		op_run "$w" "$WORK/base/v1-$w" ENORMOUSTEXT_VERBOSE=1
		base=$(grep -c . "$ERR")
		op_run "$w" "$t" ENORMOUSTEXT_VERBOSE=1
		op_same "$w"
		[ "$(grep -c . "$ERR")" -eq $((base + 1)) ] ||
			fail "$w at ENORMOUSTEXT_VERBOSE=1: $(grep -c . "$ERR") lines, a run into a file has $base: $(tr '\n' '|' <"$ERR")"
		[ "$(grep -F -- "$t" "$ERR" | grep -c 'a FIFO with no reader')" -eq 1 ] ||
			fail "$w at ENORMOUSTEXT_VERBOSE=1: no one line names $t as a FIFO with no reader: $(tr '\n' '|' <"$ERR")"
	else
		op_run "$w" "$t"
		op_refused "$w" "$t" 'a FIFO with no reader'
	fi
	[ -p "$t" ] || fail "$w: $t is no longer a FIFO: $(stat -c %F "$t")"
	op_entries "$WORK/fifo" "$n"
done
note "a FIFO with no reader: nothing blocked, nothing replaced"
