#!/bin/bash
# integration.verbose.none_moved — the summary line counts the objects it
# looked at and those it moved: "0 of N objects" when none moved, N being
# every object of the report (and of the API), whether nothing moved for
# ENORMOUSTEXT_MIN_BYTES (at VERBOSE=2) or because THP is off for the
# process and the backend is collapse (at VERBOSE=1, with the reason).
. "$(dirname "$0")/lib.sh"

[ -x "$JSON_FLAT" ] || fail "$JSON_FLAT missing"
[ -x "$THP_OFF" ] || fail "$THP_OFF missing"
# count REPORT: the objects the report lists
count() {
	"$JSON_FLAT" "$1" >"$1.flat" || fail "$1 is not valid JSON"
	awk -F '\t' '$1 ~ /^\.objects\[[0-9]+\]\.path$/ { n++ } END { print n + 0 }' "$1.flat"
}
summary() {   # summary LABEL N: the one summary line says 0 of N objects, 0 MiB huge
	local n
	n=$(grep -cE '^enormoustext: [0-9]+ of [0-9]+ objects?, ' "$ERR")
	[ "$n" -eq 1 ] || fail "$1: $n summary lines 'enormoustext: M of N objects, ...', expected 1: $(grep -v ': left' "$ERR" | head -3)"
	grep -qE "^enormoustext: 0 of $2 objects, 0 MiB of [0-9.]+ MiB text on $H_MIB MiB pages \\(none\\)" "$ERR" ||
		fail "$1: the summary line does not say '0 of $2 objects, 0 MiB of ...': $(grep -E '^enormoustext: [0-9]' "$ERR")"
	echo "-- $1: $(grep -E '^enormoustext: [0-9]+ of ' "$ERR")"
}

std_baseline bigtext
run minbytes ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_MIN_BYTES=1G ENORMOUSTEXT_REPORT="$D/r1.json" LD_PRELOAD="$PRE" \
	-- ./bigtext --expect-none --expect-loaded
expect_pass "ENORMOUSTEXT_MIN_BYTES=1G"
n=$(count "$D/r1.json")
[ "$n" -ge 2 ] || fail "the report lists $n objects, expected bigtext, libbigtext.so and more"
[ "$(grep -c ': left alone: less eligible text than ENORMOUSTEXT_MIN_BYTES' "$ERR")" -ge 2 ] ||
	fail "ENORMOUSTEXT_MIN_BYTES=1G did not leave bigtext and libbigtext.so alone"
summary minbytes "$n"
# and its reason is that one, not "no whole window" (bigtext has windows)
grep -qE '^enormoustext: 0 of [0-9]+ objects, .*; less eligible text than ENORMOUSTEXT_MIN_BYTES$' "$ERR" ||
	fail "the summary line does not give ENORMOUSTEXT_MIN_BYTES as the reason: $(grep -E '^enormoustext: [0-9]' "$ERR")"
[ "$(awk -F '\t' '$1 == ".objects_huge" { print $3 }' "$D/r1.json.flat")" = 0 ] || fail "the report's objects_huge is not 0"

std_baseline bigtext
run thpoff -- "$THP_OFF" env LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_BACKEND=collapse \
	ENORMOUSTEXT_REPORT="$D/r2.json" ./bigtext --expect-none --expect-loaded
expect_pass "ENORMOUSTEXT_BACKEND=collapse with THP disabled for the process"
n=$(count "$D/r2.json")
[ "$n" -ge 2 ] || fail "the report lists $n objects, expected bigtext, libbigtext.so and more"
summary thpoff "$n"
grep -qi 'disabled' "$ERR" || fail "the summary line does not say why (THP disabled): $(cat "$ERR")"

# The API says the same count (bigtext-linked, the library linked in).
# --check-api prints the API's figures first; its checks after that line
# are for moved text and fail here ("bigtext: FAIL: api: ..."): only the
# figures line is read.
fresh "$IT_BIN" bigtext bigtext-linked
run api ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_MIN_BYTES=1G ENORMOUSTEXT_REPORT="$D/r3.json" \
	-- ./bigtext-linked --expect-none --expect-loaded --check-api
n=$(count "$D/r3.json")
summary api "$n"
grep -qE "^bigtext: api: ran 1, $n objects \\(0 huge\\)" "$OUT" || fail "the API does not count $n objects, 0 huge: $(grep 'api:' "$OUT")"

pass
