#!/bin/bash
# Every writer pointed at a FIFO that has a reader: the whole content
# arrives through it (what a plain run writes into a file), the FIFO stays
# a FIFO, nothing is left beside it, and the program's status and output
# are those of a plain run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/outpaths.bash"
R=$FAULT_BIN/outpaths_reader
[ -x "$R" ] || fail "$R was not built"
op_setup
mkdir "$WORK/fifo" "$WORK/got" || exit 2
n=0
for w in $OP_WRITERS; do
	t=$WORK/fifo/$w
	mkfifo "$t" || fail "mkfifo $t"
	n=$((n + 1))
	"$R" "$t" "$WORK/got/$w" >"$WORK/reader-$w.out" 2>&1 &
	rp=$!
	at_exit "kill $rp 2>/dev/null"
	wait_line "$WORK/reader-$w.out" '^ready' 10 "$rp"
	grep -q '^ready' "$WORK/reader-$w.out" || fail "the reader of $t did not start: $(cat "$WORK/reader-$w.out")"
	op_run "$w" "$t"
	op_same "$w"
	wait "$rp"
	rrc=$?
	[ $rrc -eq 0 ] || fail "$w: the reader of $t exited $rrc (3: nothing came)"
	op_content "$w" "$WORK/got/$w"
	[ -p "$t" ] || fail "$w: $t is no longer a FIFO: $(stat -c %F "$t")"
	op_entries "$WORK/fifo" "$n"
	[ -s "$ERR" ] && op_is_lib "$w" && fail "$w: the library said something: $(head -2 "$ERR")"
	echo "   $w: $(wc -c <"$WORK/got/$w") bytes came through the FIFO"
done
note "every writer's whole content came through the FIFO"
