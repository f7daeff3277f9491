#!/bin/bash
# fault.signal_swap — a signal handler runs moved code during the swap.  A
# SIGALRM timer (every 100 us) interrupts the one thread while it runs a
# pass — enormoustext_remap_range over a libbigtext.so copy, then dlopen
# of a big library whose constructor hands over its functions — and the
# handler calls functions in the windows being moved and checks them.
# Twice: with SA_RESTART, and without (the library's system calls may get
# EINTR: every pass must still move every window and keep errno, and the
# program must see nothing).  Each plainly and preloaded; the RESULT lines
# must match.
. "$(dirname "$0")/lib.sh"

# (a daemon priming host-wide would make the windows zero-copy, not moved)
no_foreign_primer "the dlopen passes"
fresh "$FAULT_BIN/cc_signal_swap" "$IT_BIN/libbigtext.so" "$FAULT_BIN/libcc_ctor.so"
cd "$D" || exit 2

go() {
	local label=$1 mode=$2
	shift 2
	note "$label: ${*:+$* }./cc_signal_swap $mode ./libbigtext.so ./libcc_ctor.so"
	# shellcheck disable=SC2086 # $mode is one option or none
	env "$@" ./cc_signal_swap $mode ./libbigtext.so ./libcc_ctor.so >"$label.out" 2>"$label.err"
	RC=$?
	sed "s/^/  /" "$label.out" "$label.err"
}

for mode in "" --no-restart; do
	tag=${mode:+norestart}
	tag=${tag:-restart}
	go "plain-$tag" "$mode"
	[ "$RC" -eq 0 ] || fail "plain run ($tag) exited $RC: $(grep FAIL "plain-$tag.out" | head -2 | tr '\n' ' ')"
	# (ENORMOUSTEXT_PRIME=0: the copies stay copies; primed, the next run
	# would find the files huge in the page cache and map them zero-copy)
	go "preloaded-$tag" "$mode" LD_PRELOAD="$PRE" ENORMOUSTEXT_PRIME=0
	[ "$RC" -eq 0 ] || fail "preloaded run ($tag) exited $RC: $(grep FAIL "preloaded-$tag.out" | tr '\n' ' ')"
	grep -q 'the library is in the process' "preloaded-$tag.out" || fail "preloaded ($tag), the program did not find the library"
	[ -s "preloaded-$tag.err" ] && fail "the library wrote to stderr with ENORMOUSTEXT_VERBOSE unset ($tag)"
	a=$(grep RESULT "plain-$tag.out")
	b=$(grep RESULT "preloaded-$tag.out")
	if [ -z "$a" ] || [ "$a" != "$b" ]; then fail "results differ ($tag): plain '$a', preloaded '$b'"; fi
done
note "PASS"
