#!/bin/bash
# profile_scale — a fleet-sized ENORMOUSTEXT_PROFILE (200,000 objects, the
# program's own two among them) changes nothing but the time: the program's
# results and exit status are those of the plain run, and the library
# chooses the same hot windows as with a profile of the program's two
# objects alone (so it found them among the 200,000).  A duplicate
# build-id at the end of the big file is still found: the profile is
# refused with its line, and nothing moves.  (An earlier parser compared
# each object with every earlier one: 20,000 objects took 0.7 s of
# start-up, 200,000 80 s, and this test ran past its time limit.)  The
# library's elapsed time with each profile is printed, as information only.
. "$(dirname "$0")/lib.sh"
GEN=$FAULT_BIN/profile_gen
JSON_FLAT=$IT_BIN/json_flat
[ -x "$GEN" ] || fail "$GEN is missing: build the tests first"
[ -x "$JSON_FLAT" ] || fail "$JSON_FLAT is missing: build the tests first"
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
cd "$D" || exit 2

# flat REPORT KEY — a value of the report (json_flat's third column)
flat() {
	[ -s "$1" ] || fail "no report $1"
	"$JSON_FLAT" "$1" | awk -F '\t' -v k="$2" '$1 == k { print $3; f = 1 } END { exit !f }' ||
		fail "$1 has no $2"
}
# kinds REPORT — "path=window_kinds" of the two objects, in report order
kinds() {
	[ -s "$1" ] || fail "no report $1"
	"$JSON_FLAT" "$1" | awk -F '\t' '
		$1 ~ /\.path$/ { o = $1; sub(/\.path$/, "", o); path[o] = $3 }
		$1 ~ /\.window_kinds$/ { o = $1; sub(/\.window_kinds$/, "", o); if (path[o] ~ /bigtext/) printf "%s=%s ", path[o], $3 }'
}

./bigtext --expect-none --expect-not-loaded >plain.out 2>plain.err ||
	fail "the plain run failed: $(grep -E 'FAIL|ERROR' plain.out | head -2 | tr '\n' ' ')"
base=$(grep '^bigtext: results:' plain.out)
[ -n "$base" ] || fail "the plain run printed no results line"

# The program's own profile: samples in two of its windows, one of the
# library's (as in integration.profile.hot).
bx=$(readelf -n bigtext | sed -n 's/.*Build ID: *//p')
bl=$(readelf -n libbigtext.so | sed -n 's/.*Build ID: *//p')
if [ -z "$bx" ] || [ -z "$bl" ]; then fail "no build-ids in the copies"; fi
printf 'enormoustext-profile 1\ngranule 4096\nobject %s bigtext\n400000 900\n600000 100\nobject %s libbigtext.so\n200000 10\n' \
	"$bx" "$bl" >small.prof
"$GEN" -n 200000 -i small.prof -o big.prof || fail "profile_gen failed"
nobj=$(grep -c '^object ' big.prof)
[ "$nobj" -eq 200002 ] || fail "big.prof has $nobj objects, expected 200002"
note "big.prof: $nobj objects, $(wc -c <big.prof) bytes; the program's two at line $(grep -n "^object $bx" big.prof | cut -d: -f1)"

# The two runs compared must place bigtext and its library alike: which
# windows a PIE has, and which of them hold the profile's addresses,
# depend on its load address modulo 2 MiB (4 KiB-aligned layouts).
norand=(setarch "$(uname -m)" -R)
"${norand[@]}" true 2>/dev/null || skip "setarch -R (no address randomisation) does not work here"

# with_profile NAME FILE — run preloaded with ENORMOUSTEXT_PROFILE=FILE;
# the same results as the plain run, exit 0
with_profile() {
	local t0 t1
	t0=$(date +%s%N)
	"${norand[@]}" env ENORMOUSTEXT_PROFILE="$2" ENORMOUSTEXT_REPORT="$1.json" ENORMOUSTEXT_VERBOSE=3 LD_PRELOAD="$PRE" \
		./bigtext --expect-loaded >"$1.out" 2>"$1.err"
	local rc=$?
	t1=$(date +%s%N)
	[ "$rc" -eq 0 ] || fail "$1: bigtext exited $rc ($(grep -E 'FAIL|ERROR' "$1.out" | head -2 | tr '\n' ' '))"
	[ "$(grep '^bigtext: results:' "$1.out")" = "$base" ] || fail "$1: results differ from the plain run"
	wall_ms=$(((t1 - t0) / 1000000))
}

with_profile small small.prof
with_profile big big.prof
for r in small big; do
	grep -q '^enormoustext: ENORMOUSTEXT_PROFILE=' "$r.err" &&
		fail "$r: the profile was refused: $(grep '^enormoustext: ENORMOUSTEXT_PROFILE=' "$r.err" | head -1)"
done
hot_small=$(grep '^enormoustext: profile: ' small.err)
hot_big=$(grep '^enormoustext: profile: ' big.err)
[ -n "$hot_small" ] || fail "small: no 'profile:' line at ENORMOUSTEXT_VERBOSE=3: the profile was not used ($(head -3 small.err | tr '\n' '|'))"
[ "$hot_big" = "$hot_small" ] || fail "the big profile chose otherwise: '$hot_big', the program's own: '$hot_small'"
k_small=$(kinds small.json) k_big=$(kinds big.json)
[[ $k_small == */bigtext=*/libbigtext.so=* ]] || fail "no report entries with window kinds for the two objects: '$k_small'"
[[ $k_small == *'.'* ]] || fail "with the program's own profile no window stayed cold: $k_small"
[ "$k_big" = "$k_small" ] || fail "window kinds with the big profile: $k_big; with the program's own: $k_small"
grep -q 'cold: not among the hot windows' big.json || fail "the big profile's report has no cold windows"
note "the same choice with both: ${hot_big#enormoustext: }; $k_big"
es=$(flat small.json .elapsed_ns) eb=$(flat big.json .elapsed_ns)
note "library elapsed (report): $((es / 1000)) us with the program's own profile, $((eb / 1000)) us with 200,002 objects (information, not a check); the big run took $wall_ms ms in all"

# A duplicate at the end of the big file: refused, by its line; nothing moves.
"$GEN" -n 200000 -i small.prof -d -o dup.prof || fail "profile_gen -d failed"
first=$(sed -n 's/^object \([0-9a-f]*\) .*/\1/p;T;q' dup.prof)
line=$(grep -n "^object $first " dup.prof | sed -n '2s/:.*//p')
[ -n "$line" ] || fail "dup.prof has no duplicate of $first"
ENORMOUSTEXT_PROFILE=dup.prof LD_PRELOAD="$PRE" ./bigtext --expect-none --expect-loaded >dup.out 2>dup.err ||
	fail "a duplicate build-id: bigtext failed or text moved ($(grep -E 'FAIL|ERROR' dup.out | head -2 | tr '\n' ' '))"
[ "$(grep '^bigtext: results:' dup.out)" = "$base" ] || fail "dup: results differ from the plain run"
want="enormoustext: ENORMOUSTEXT_PROFILE=dup.prof: line $line: the same build-id twice: nothing moved"
[ "$(cat dup.err)" = "$want" ] || fail "a duplicate build-id: stderr '$(tr '\n' '|' <dup.err)', expected the one line '$want'"
note "a duplicate at line $line of $(grep -c '' dup.prof): refused, one line, nothing moved"
