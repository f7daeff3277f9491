#!/bin/bash
# fault.inv-execmem — a security module that will not let written memory
# become executable (SELinux's execmem denied: mprotect(PROT_EXEC) of an
# anonymous mapping fails with EACCES; faultrun refuses the library's own
# read+execute mprotect calls the same way): the program runs as plain,
# the library makes one such call in the whole process (not one per window
# and backend: it stops copying at the first refusal), and says why by
# name; zero-copy, which writes nothing, still maps a primed file huge.
. "$(dirname "$0")/lib.sh"
[ -x "$FAULT_TOOL" ] || fail "$FAULT_TOOL is missing: build the command first"
FR=$FAULT_BIN/faultrun
rule='mprotect/arg2=PROT_READ|PROT_EXEC:EACCES'
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
cd "$D" || exit 2
./bigtext >plain.out 2>&1 || fail "the plain run failed"
for b in auto thp collapse; do
	"$FR" --rule "$rule" -- env ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_BACKEND=$b \
		ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" ./bigtext >$b.out 2>$b.err
	rc=$?
	[ "$rc" -eq 0 ] || fail "$b: bigtext exited $rc under the refusal: $(grep -E 'FAIL|ERROR' $b.out | head -2)"
	[ "$(grep '^bigtext: results:' $b.out)" = "$(grep '^bigtext: results:' plain.out)" ] || fail "$b: results differ from the plain run"
	grep -q '^bigtext: exe: 8.21 MiB of text in memory identical to' $b.out || fail "$b: the text in memory is not the file's: $(grep 'exe:' $b.out | head -2)"
	n=$(sed -n 's/^faultrun: rule .*: library \([0-9]*\) failed.*/\1/p' $b.err)
	[ "$n" = 1 ] || fail "$b: the library asked $n times to make a copy executable (once is enough to know): $(grep faultrun $b.err)"
	for o in bigtext libbigtext.so; do
		grep -E "enormoustext: .*/$o: 0 of" $b.err | grep -q 'a copy may not be made executable (EACCES: SELinux execmem?)' ||
			fail "$b: $o's line does not name the refusal: $(grep -E "enormoustext: .*/$o:" $b.err)"
	done
	note "$b: $(grep -m1 -E 'enormoustext: .*/bigtext:' $b.err | sed 's/^enormoustext: //'); $(grep '^faultrun: rule' $b.err)"
done
# zero-copy writes nothing: a file the page cache holds huge is still
# mapped so (bigtext with 2 MiB-aligned segments, its page cache primed)
mkdir z && cp "$IT_BIN/flags-bfd/bigtext" "$IT_BIN/flags-bfd/libbigtext.so" z/ || fail "cannot copy flags-bfd/bigtext"
cd z || exit 2
"$FAULT_TOOL" prime ./bigtext ./libbigtext.so >prime.out 2>&1 || fail "enormoustext prime: $(tail -2 prime.out)"
"$FR" --rule "$rule" -- env ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" \
	./bigtext >z.out 2>z.err
[ $? = 0 ] || fail "after prime: bigtext failed under the refusal: $(tail -2 z.err)"
grep -qE 'bigtext: [1-9][0-9.]* of [0-9.]* MiB text huge' z.err ||
	fail "after prime, nothing of bigtext huge with copies refused: $(grep '/bigtext:' z.err)"
note "primed: $(grep -m1 '/bigtext: ' z.err | sed 's/^enormoustext: //')"
echo "PASS [$T]"
