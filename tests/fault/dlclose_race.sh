#!/bin/bash
# fault.dlclose_race — dlclose racing a pass: two threads dlopen and
# dlclose four big libraries (copies of libbigtext.so, two of them laid
# out so that their last window is padded), two threads call the ones that
# are open, one calls the API; no crash, no wrong result, and at the end,
# every library closed, no anonymous executable mapping is left (no copy
# or padding where a closed library was).  Then each library alone, to be
# sure padding happened here at all (the API shows it), closed again.  Plainly and preloaded, same
# RESULT line.  FAULT_CC_SECONDS sets the duration (default 8).
. "$(dirname "$0")/lib.sh"

SECS=${FAULT_CC_SECONDS:-8}
[ -e "$IT_BIN/flags-bfd/libbigtext.so" ] || fail "$IT_BIN/flags-bfd/libbigtext.so is missing: build the tests first"
fresh "$FAULT_BIN/cc_dlclose_race"
for pair in libbigtext.so:libbt_a.so libbigtext.so:libbt_b.so \
	flags-bfd/libbigtext.so:libbt_pad_c.so flags-bfd/libbigtext.so:libbt_pad_d.so; do
	cp "$IT_BIN/${pair%%:*}" "$D/${pair#*:}" || fail "cannot copy $IT_BIN/${pair%%:*}"
done
cd "$D" || exit 2
LIBS="./libbt_a.so ./libbt_b.so ./libbt_pad_c.so ./libbt_pad_d.so"

go() {
	local label=$1
	shift
	note "$label: ${*:+$* }./cc_dlclose_race --seconds $SECS $LIBS"
	# shellcheck disable=SC2086 # LIBS is a list of paths without spaces
	env "$@" ./cc_dlclose_race --seconds "$SECS" $LIBS >"$label.out" 2>"$label.err"
	RC=$?
	sed "s/^/  /" "$label.out" "$label.err"
}

go plain
[ "$RC" -eq 0 ] || fail "plain run (without the library) exited $RC: $(grep FAIL plain.out | head -2 | tr '\n' ' ')"
go preloaded LD_PRELOAD="$PRE"
[ "$RC" -eq 0 ] || fail "preloaded run exited $RC: $(grep -E 'FAIL|anonymous' preloaded.out | tr '\n' ' ')"
grep -q 'API calls made' preloaded.out || fail "preloaded, the program did not find the library's API"
grep -qE 'padded, as the API said, [0-9]+ times \([1-9]' preloaded.out ||
	fail "preloaded, the API never showed a padded library: the padding was not exercised"
[ -s preloaded.err ] && fail "the library wrote to stderr with ENORMOUSTEXT_VERBOSE unset"
a=$(grep RESULT plain.out)
b=$(grep RESULT preloaded.out)
if [ -z "$a" ] || [ "$a" != "$b" ]; then fail "results differ: plain '$a', preloaded '$b'"; fi
note "PASS"
