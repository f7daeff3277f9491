#!/bin/bash
# fault.prime-again — a copied window read back small when it is primed,
# with no page of it mapped elsewhere, is dropped and read back again
# (runtime/remap_prime.c, read_again; up to 2 times), as the command's
# prime does: one free huge page missed on a loaded host does not leave a
# window a copy until the next try, seconds later.
#
# bigtext and libbigtext.so linked with 2 MiB-aligned segments (flags-bfd:
# every window congruent), copied, written out (clean) and read whole into
# the page cache, small; nobody maps them.  bigtext preloaded (copies at
# start-up, then ENORMOUSTEXT_PRIME=auto drops and reads back its
# windows: 8, a padded partial one aside) under faultrun (the fault harness's supervisor), which fails the
# library's first MADV_HUGEPAGE of the priming round with EINVAL: that
# window's read-back comes out small ("the page cache holds this part of
# the file in small pages").  The library's calls before that round are
# counted first, in a run with ENORMOUSTEXT_PRIME=0 (the same start-up
# without the round).  Then: the one call failed, the line saying the
# window is read back again, and every window zero-copy (bigtext's own
# smaps check, --kind file), results as plain.
. "$(dirname "$0")/lib.sh"
FR=$FAULT_BIN/faultrun
[ -x "$FR" ] || fail "$FR is missing: build the tests first"
[ -d "$IT_BIN/flags-bfd" ] || fail "$IT_BIN/flags-bfd is missing: build the tests first"
fresh "$IT_BIN/flags-bfd/bigtext" "$IT_BIN/flags-bfd/libbigtext.so"
cp -P "$(dirname "$PRE")"/libenormoustext.so* "$D/" 2>/dev/null   # (bigtext links the API)
sync "$D/bigtext" "$D/libbigtext.so" "$D"/libenormoustext.so*
cat "$D/bigtext" "$D/libbigtext.so" >/dev/null
cd "$D" || exit 2
./bigtext >plain.out 2>&1 || fail "the plain run failed: $(grep -E 'FAIL|ERROR' plain.out | head -2)"

lib() {   # NAME [VAR=VALUE...] [-- faultrun rules...]
	local name=$1 envs=() rules=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ $# -gt 0 ] && shift && rules=("$@")
	"$FR" --log "$name.log" "${rules[@]}" -- env ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=3 LD_PRELOAD="$PRE" \
		"${envs[@]}" ./bigtext --expect-huge 100 >"$name.out" 2>"$name.err"
	RC=$?
	[ "$(grep '^bigtext: results:' "$name.out")" = "$(grep '^bigtext: results:' plain.out)" ] ||
		fail "$name: the results differ from the plain run's"
}
madv_count() { sed -n 's/^faultrun: count madvise\[MADV_HUGEPAGE\]: library \([0-9]*\) .*/\1/p' "$1" | head -1; }

# the start-up without the priming round: the library's MADV_HUGEPAGE calls
# before it (its copies are made; nothing is dropped: PRIME=0)
lib count ENORMOUSTEXT_PRIME=0 -- --count
[ "$RC" = 0 ] || fail "the counting run (ENORMOUSTEXT_PRIME=0) exited $RC: $(grep -E 'FAIL' count.out | head -2)"
C=$(madv_count count.log)
[[ $C =~ ^[0-9]+$ ]] && [ "$C" -gt 0 ] || fail "no MADV_HUGEPAGE call of the library's counted before the priming round: '$C'"
grep -Eq '/bigtext: .* huge \(thp\), [0-9]+ window\(s\)' count.err ||
	fail "the counting run did not copy the windows (the page cache not small?): $(grep -E 'bigtext: ' count.err | head -2 | tr '\n' '|')"
note "the start-up before the priming round: $C MADV_HUGEPAGE calls of the library's"

lib again ENORMOUSTEXT_PRIME=auto -- --count --rule "madvise/arg2=MADV_HUGEPAGE:EINVAL:$((C + 1))"
failed=$(awk '$2 == "rule" { x = $7 } END { print x + 0 }' again.log)
grep 'prime:' again.err | sed 's/^/   /'
[ "$failed" = 1 ] || fail "faultrun failed $failed calls, not 1 (the $((C + 1))th MADV_HUGEPAGE): $(grep '^faultrun: rule' again.log | head -2)"
K=$(sed -n 's/.*prime: \([0-9]*\) copied window(s) read back huge from their files/\1/p' again.err | head -1)
[ -n "$K" ] && [ "$K" -ge 2 ] ||
	fail "the library did not prime its copied windows: $(grep prime: again.err | tr '\n' '|')"
grep -q 'prime: 1 window(s) read back small, no page of them mapped elsewhere: read back again' again.err ||
	fail "the window whose read-back failed was not read back again: $(grep prime: again.err | tr '\n' '|')"
[ "$RC" = 0 ] || fail "with one read-back made small, bigtext exited $RC: $(grep -E 'FAIL' again.out | head -2 | tr '\n' '|')"
grep -q "prime: $K of $K now zero-copy" again.err ||
	fail "not every window ended zero-copy: $(grep prime: again.err | tr '\n' '|')"
note "the $((C + 1))th MADV_HUGEPAGE failed (EINVAL): the window read back small was read back again; $K of $K zero-copy"
pass
