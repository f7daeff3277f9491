#!/bin/bash
# fault.inv-mdwe — under memory-deny-write-execute (prctl PR_SET_MDWE:
# nothing that was writable may become executable, so no copy can be
# made): the program runs as plain; the library finds it once and tries no
# copying backend (no "round ... with thp/collapse/hugetlb" at
# ENORMOUSTEXT_VERBOSE=3), says why by name, and still maps huge what the
# page cache holds huge (zero-copy needs no write: a primed file).
. "$(dirname "$0")/lib.sh"
MR=$FAULT_BIN/mdwe_run
[ -x "$MR" ] || fail "$MR is missing: build the tests first"
[ -x "$FAULT_TOOL" ] || fail "$FAULT_TOOL is missing: build the command first"
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
cd "$D" || exit 2
"$MR" true 2>"$WORK/probe.err"
rc=$?
[ $rc = 77 ] && skip "this kernel has no memory-deny-write-execute (PR_SET_MDWE, Linux 6.3): $(head -1 "$WORK/probe.err")"
[ $rc = 0 ] || fail "mdwe_run true: exit $rc: $(head -1 "$WORK/probe.err")"

"$MR" ./bigtext >plain.out 2>plain.err
prc=$?
[ $prc = 0 ] || fail "bigtext under MDWE, plain: exit $prc: $(head -2 plain.err)"
for b in auto thp collapse; do
	ENORMOUSTEXT_BACKEND=$b ENORMOUSTEXT_VERBOSE=3 LD_PRELOAD="$PRE" "$MR" ./bigtext >$b.out 2>$b.err
	rc=$?
	[ $rc = $prc ] || fail "$b: exit $rc, plain $prc: $(grep -v '^enormoustext' $b.err | head -2)"
	grep -q 'bigtext: PASS' $b.out || fail "$b: bigtext did not pass: $(tail -2 $b.out)"
	! grep -E 'round [0-9]+: [0-9]+ window\(s\) with (thp|collapse|hugetlb)' $b.err ||
		fail "$b: a copying backend was tried under memory-deny-write-execute"
	grep -q 'bigtext: 0 of [0-9.]* MiB text huge.*memory-deny-write-execute: a copy cannot be made executable' $b.err ||
		fail "$b: no line naming memory-deny-write-execute: $(grep 'bigtext:' $b.err | head -2)"
	note "$b: $(grep -m1 '/bigtext: ' $b.err | sed 's/^enormoustext: //')"
done
# zero-copy needs no write: a file the page cache holds huge is mapped so
# (bigtext linked with 2 MiB-aligned segments, so that its windows are
# congruent, and its page cache primed huge)
mkdir z && cp "$IT_BIN/flags-bfd/bigtext" "$IT_BIN/flags-bfd/libbigtext.so" z/ || fail "cannot copy flags-bfd/bigtext"
cd z || exit 2
"$FAULT_TOOL" prime ./bigtext ./libbigtext.so >prime.out 2>&1 || fail "enormoustext prime: $(tail -2 prime.out)"
ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" "$MR" ./bigtext >z.out 2>z.err
[ $? = $prc ] || fail "after prime: exit differs from plain: $(tail -2 z.err)"
grep -qE 'bigtext: [1-9][0-9.]* of [0-9.]* MiB text huge' z.err ||
	fail "after prime, nothing of bigtext huge under memory-deny-write-execute: $(grep '/bigtext:' z.err)"
note "primed: $(grep -m1 '/bigtext: ' z.err | sed 's/^enormoustext: //')"
echo "PASS [$T]"
