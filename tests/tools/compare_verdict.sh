#!/bin/bash
# tool_compare_verdict — `enormoustext compare`'s verdict is a rule's, and
# the same when asked again: each program below is compared three times
# and must get the same verdict each time, the one the rule gives it.
#
#  - where the library moves nothing, "nothing to compare", never "worth
#    it": `false` (exits 1 either way), /bin/true, and a sleep with the
#    library loaded and off (ENORMOUSTEXT=0); the pairs stop at --runs
#    (stopped "nothing moved");
#  - where the library moves bigtext's text and the plain runs sleep 0.2 s
#    more: "worth it", the 95% interval above 1.01, settled by it (stopped
#    "clear", not the budget); slower with the library: "costs more than it
#    saves", the interval below 0.99;
#  - where the pairs disagree for ever (one pair the plain run sleeps, the
#    next the library's: ratios about 1.5 and 0.7 in turn), pairs are
#    added until --budget is spent, and the verdict is "within the noise"
#    (the interval reaches past both 0.99 and 1.01), never "worth it" nor
#    "costs more";
#  - the same plain-sleeps program with --runs 3 --budget 0: 3 pairs are
#    too few for a 95% interval, so "within the noise", though every pair
#    was faster (the rule, not the times).
#
# Times are never asserted: the programs' differences (0.2 s sleeps) are
# far from the rule's 1%, and the rule is checked on the figures each run
# reports (its interval against 0.99 and 1.01).
. "$(dirname "$0")/lib.sh"

BIG=${TT_BUILD_DIR:-}/tests/integration/bin/bigtext
[ -x "$BIG" ] || fail "$BIG is missing: build the integration tests (they make bigtext)"

# ask NAME [VAR=VALUE...] -- ARGS...: compare three times (--json, no
# counters); the verdicts in $W/NAME.verdicts, each run's JSON flat in
# $W/NAME.N.json.flat
ask() {
	local name=$1 i
	shift
	: >"$W/$name.verdicts"
	for i in 1 2 3; do
		t "$name$i" "$@"
		cp "$OUT" "$W/$name.$i.json"
		json "$W/$name.$i.json"
		jget "$W/$name.$i.json.flat" .verdict >>"$W/$name.verdicts"
		echo "   -> $(jget "$W/$name.$i.json.flat" .verdict): $(jget "$W/$name.$i.json.flat" .verdict_why)"
	done
}
# same NAME VERDICT: the three verdicts are VERDICT
same() {
	local got
	got=$(sort -u "$W/$1.verdicts" | tr '\n' '/')
	[ "$got" = "$2/" ] || fail "$1: asked three times, the verdicts were '$(tr '\n' '/' <"$W/$1.verdicts")', expected '$2' each time"
}
# field NAME N PATH
field() { jget "$W/$1.$2.json.flat" "$3"; }
# interval NAME N: "LOW HIGH" (null null where there is none)
interval() { echo "$(field "$1" "$2" .time_ratio_low) $(field "$1" "$2" .time_ratio_high)"; }

C=("$TOOL" compare --json --counters none)

# --- the library moves nothing: nothing to compare, three times
ask false -- "${C[@]}" -- false
same false "nothing to compare"
ask true -- "${C[@]}" -- /bin/true
same true "nothing to compare"
ask off ENORMOUSTEXT=0 -- "${C[@]}" -- sleep 0.2
same off "nothing to compare"
for n in false true off; do
	for i in 1 2 3; do
		[ "$(field $n $i .stopped)" = "nothing moved" ] || fail "$n: stopped '$(field $n $i .stopped)', expected 'nothing moved'"
		[ "$(field $n $i .library.runs_moved)" = 0 ] || fail "$n: the library moved text in $(field $n $i .library.runs_moved) runs"
		[ "$(field $n $i .pairs)" = 6 ] || fail "$n: $(field $n $i .pairs) pairs, expected the 6 of --runs' default (nothing moved: no more)"
	done
done
grep -q "worth it" "$W"/false.verdicts "$W"/true.verdicts "$W"/off.verdicts && fail "'worth it' where nothing moved"

# --- faster plain by 0.2 s: worth it, three times, settled at 6 pairs
ask faster -- "${C[@]}" --budget 30 -- sh -c '[ -n "$LD_PRELOAD" ] || sleep 0.2; exec "$0" --hold 0' "$BIG"
same faster "worth it"
for i in 1 2 3; do
	read -r lo hi <<<"$(interval faster $i)"
	awk -v l="$lo" 'BEGIN { exit !(l > 1.01) }' || fail "faster: 'worth it' with the interval's low end $lo, not above 1.01"
	[ "$(field faster $i .stopped)" = clear ] ||
		fail "faster: stopped '$(field faster $i .stopped)', expected 'clear' (the interval settled it, not the budget)"
	[ "$(field faster $i .library.runs_moved)" -gt 0 ] || fail "faster: the library moved nothing"
done

# --- slower with the library by 0.2 s: costs more than it saves, three times
ask slower -- "${C[@]}" --budget 30 -- sh -c '[ -z "$LD_PRELOAD" ] || sleep 0.2; exec "$0" --hold 0' "$BIG"
same slower "costs more than it saves"
for i in 1 2 3; do
	read -r lo hi <<<"$(interval slower $i)"
	awk -v h="$hi" 'BEGIN { exit !(h < 0.99) }' || fail "slower: 'costs more' with the interval's high end $hi, not below 0.99"
done

# --- pairs that disagree for ever: more pairs until the budget, then
# within the noise.  The plain run counts the pairs in a file; pair k's
# plain run sleeps when k is even, its library run when k is odd.
echo 0 >"$W/count"
flip='n=$(cat "$1"); if [ -z "$LD_PRELOAD" ]; then echo $((n + 1)) >"$1"; [ $((n % 2)) = 0 ] && sleep 0.15;
else [ $((n % 2)) = 0 ] && sleep 0.15; fi; exec "$0" --hold 0'
# (a budget of 8 s: a pair takes 0.4 s to 0.7 s, more with the ASan build's
# library, which copies slower, on a busy machine; 5 s gave 6 pairs there
# once, too few to show pairs added after the sixth)
ask flip -- "${C[@]}" --budget 8 -- sh -c "$flip" "$BIG" "$W/count"
same flip "within the noise"
for i in 1 2 3; do
	read -r lo hi <<<"$(interval flip $i)"
	awk -v l="$lo" -v h="$hi" 'BEGIN { exit !(l < 0.99 && h > 1.01) }' ||
		fail "flip: the interval $lo..$hi does not reach past both 0.99 and 1.01"
	[ "$(field flip $i .stopped)" = budget ] || fail "flip: stopped '$(field flip $i .stopped)', expected 'budget'"
	[ "$(field flip $i .pairs)" -gt 6 ] || fail "flip: $(field flip $i .pairs) pairs: undecided after 6, more were to be run until the budget"
	field flip $i .verdict_why | grep -q "reaches past both 0.99 and 1.01: undecided" || fail "flip: the why does not say undecided"
done

# --- too few pairs for an interval: within the noise, however clear the times
t few -- "${C[@]}" --runs 3 --budget 0 -- sh -c '[ -n "$LD_PRELOAD" ] || sleep 0.2; exec "$0" --hold 0' "$BIG"
cp "$OUT" "$W/few.json"
json "$W/few.json"
[ "$(jget "$W/few.json.flat" .pairs)" = 3 ] || fail "--runs 3 --budget 0: $(jget "$W/few.json.flat" .pairs) pairs"
awk -v m="$(jget "$W/few.json.flat" .time_ratio_min)" 'BEGIN { exit !(m > 1.01) }' ||
	fail "--runs 3: the plain runs sleep 0.2 s more, yet a pair's ratio was $(jget "$W/few.json.flat" .time_ratio_min)"
[ "$(jget "$W/few.json.flat" .verdict)" = "within the noise" ] ||
	fail "3 pairs, every one faster: verdict '$(jget "$W/few.json.flat" .verdict)', expected 'within the noise' (no 95% interval)"

pass
