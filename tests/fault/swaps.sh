#!/bin/bash
# fault.swaps — 10,000 window swaps while threads run the windows.  A swap
# is one whole huge-page window replaced by a fresh copy (one unit of
# enormoustext_remap_range's return value): the program (8 MiB of text)
# and a libbigtext.so copy are swapped in turn, each window back and forth
# between one copy and the next, while 3 threads call their functions and
# check every result; each swapped window must land on a new page frame
# (/proc/self/pagemap).  Plainly nothing is swapped and the threads must
# still be right; both runs give the same RESULT line.  FAULT_CC_SWAPS
# sets the number of swaps (default 10000).
. "$(dirname "$0")/lib.sh"

SWAPS=${FAULT_CC_SWAPS:-10000}
# Copies: their page cache is small, so the windows are anonymous copies
# from the start, which remap_range copies again (windows already moved may
# move again: runtime/pass.c, et_pass_range).
fresh "$FAULT_BIN/cc_swaps" "$IT_BIN/libbigtext.so"
cd "$D" || exit 2

go() {
	local label=$1
	shift
	note "$label: ${*:+$* }./cc_swaps --threads 3 --swaps $SWAPS ./libbigtext.so"
	env "$@" ./cc_swaps --threads 3 --swaps "$SWAPS" ./libbigtext.so >"$label.out" 2>"$label.err"
	RC=$?
	sed "s/^/  /" "$label.out" "$label.err"
}

go plain
[ "$RC" -eq 0 ] || fail "plain run (without the library) exited $RC: $(grep FAIL plain.out | head -1)"
go preloaded LD_PRELOAD="$PRE"
[ "$RC" -eq 0 ] || fail "preloaded run exited $RC: $(grep FAIL preloaded.out | tr '\n' ' ')"
grep -q 'library is in the process: swapping' preloaded.out || fail "preloaded, the program did not find enormoustext_remap_range"
done_swaps=$(sed -n 's/^swaps: \([0-9]*\) swaps in.*/\1/p' preloaded.out)
[ "${done_swaps:-0}" -ge "$SWAPS" ] || fail "only ${done_swaps:-0} of $SWAPS swaps"
[ -s preloaded.err ] && fail "the library wrote to stderr with ENORMOUSTEXT_VERBOSE unset"
a=$(grep RESULT plain.out)
b=$(grep RESULT preloaded.out)
if [ -z "$a" ] || [ "$a" != "$b" ]; then fail "results differ: plain '$a', preloaded '$b'"; fi
note "PASS: $done_swaps swaps; $(sed -n 's/^swaps: .* s; \([0-9]* calls by [0-9]* threads\).*/\1/p' preloaded.out)"
