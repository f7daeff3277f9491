#!/bin/bash
# tool_check_changing — `check` on what is not a plain, still file (issue
# #39 point 8): a FIFO with no writer (it waited for ever: opened without
# O_NONBLOCK), a character device, and a file rewritten while it is read
# (SIGBUS: the file was mapped, and a truncation under the mapping killed
# the command).  Each ends at once with one line naming the file, status 1,
# or (the rewritten file, caught whole) status 0; never a signal.
. "$(dirname "$0")/lib.sh"

mkfifo "$W/fifo" || fail "mkfifo failed"
t fifo -- timeout 10 "$TOOL" check "$W/fifo"
[ "$RC" -ne 124 ] || fail "check of a FIFO with no writer was still waiting after 10 s"
expect_bad 1 "check of a FIFO" "^enormoustext check: $W/fifo: not a regular file"
t fifo_json -- timeout 10 "$TOOL" check --json "$W/fifo"
expect_bad 1 "check --json of a FIFO" "not a regular file"
t dev -- timeout 10 "$TOOL" check /dev/zero
expect_bad 1 "check of a character device" "^enormoustext check: /dev/zero: not a regular file"

# a file cut short once check has its size (tt_shrink, deterministic):
# one line, status 1 (it was mapped: SIGBUS on the first page past the cut)
cp "$TT_BIN/tt_hold" "$W/big.shrinks" || fail "cannot copy tt_hold"
t shrink -- env LD_PRELOAD="$TT_BIN/libtt_shrink.so" "$TOOL" check "$W/big.shrinks"
[ "$RC" -lt 128 ] || fail "check of a file cut short while read: killed by signal $((RC - 128)) ($(kill -l $((RC - 128)) 2>/dev/null))"
expect_bad 1 "check of a file cut short while read" "^enormoustext check: $W/big.shrinks: changed while it was read"
[ "$(stat -c %s "$W/big.shrinks")" = 100 ] || fail "the shim did not cut the file (it is $(stat -c %s "$W/big.shrinks") bytes): the case proves nothing"

# a big ELF rewritten in place over and over (truncated, then written back
# in pieces) while check reads it: 0 (a whole file read) or 1 (one line:
# changed, truncated, corrupt), never a signal
big=$TT_BIN/tt_hold
cp "$big" "$W/big" || fail "cannot copy $big"
( while :; do
	cat "$big" >"$W/big"
	head -c 100000 "$big" >"$W/big"
	: >"$W/big"
done ) &
wp=$!
at_exit "kill $wp 2>/dev/null"
declare -A seen=()
for i in $(seq 60); do
	"$TOOL" check "$W/big" >"$W/out" 2>"$W/err"
	rc=$?
	seen[$rc]=$((${seen[$rc]:-0} + 1))
	[ "$rc" -le 1 ] || fail "check of a file being rewritten, try $i: exit status $rc ($(kill -l $((rc - 128)) 2>/dev/null || echo '?')): $(head -2 "$W/err")"
	[ "$rc" -eq 0 ] || [ "$(wc -l <"$W/err")" -eq 1 ] || fail "check of a file being rewritten, try $i: $(wc -l <"$W/err") lines on stderr: $(head -3 "$W/err")"
done
kill "$wp" 2>/dev/null; wait "$wp" 2>/dev/null
note "a file rewritten under check, 60 tries: $(for k in "${!seen[@]}"; do printf 'status %s: %s; ' "$k" "${seen[$k]}"; done)"
pass
