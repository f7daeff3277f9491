#!/bin/bash
# env_off_many — ENORMOUSTEXT=0 wins however many other ENORMOUSTEXT_*
# variables are set, wherever it stands in the environment (an earlier
# version kept the first 16 such entries and dropped the rest silently).
. "$(dirname "$0")/lib.sh"
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
cd "$D" || exit 2
./bigtext --expect-none --expect-not-loaded >plain.out 2>plain.err || fail "the plain run failed: $(head -3 plain.out)"
base=$(grep '^bigtext: results:' plain.out)
# 20 variables before the off switch: distinct names (a repeated name is
# one variable), most of them not the library's (someone's own settings,
# or a newer version's), and ENORMOUSTEXT_VERBOSE=0 so that those stay
# unmentioned: with the switch missed, the text would go huge.
vars=(ENORMOUSTEXT_MIN_BYTES=1 ENORMOUSTEXT_PAD_THRESHOLD=1 ENORMOUSTEXT_BACKEND=auto)
for i in $(seq 11 27); do vars+=("ENORMOUSTEXT_SITE_SETTING_$i=$i"); done
for where in last first middle; do
	case $where in
	last) envs=("${vars[@]}" ENORMOUSTEXT_VERBOSE=0 ENORMOUSTEXT=0) ;;
	first) envs=(ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=0 "${vars[@]}") ;;
	middle) envs=("${vars[@]:0:10}" ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=0 "${vars[@]:10}") ;;
	esac
	env "${envs[@]}" LD_PRELOAD="$PRE" ./bigtext --expect-none --expect-loaded >"$where.out" 2>"$where.err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "ENORMOUSTEXT=0 $where of ${#envs[@]} variables: bigtext exited $rc ($(grep -E 'FAIL|ERROR' "$where.out" | head -2 | tr '\n' ' '))"
	[ "$(grep '^bigtext: results:' "$where.out")" = "$base" ] || fail "results differ from the plain run"
	[ ! -s "$where.err" ] || fail "ENORMOUSTEXT=0 $where, ENORMOUSTEXT_VERBOSE=0: stderr must be empty: $(head -3 "$where.err" | tr '\n' '|')"
	note "ENORMOUSTEXT=0 $where of ${#envs[@]} ENORMOUSTEXT* variables: off, text small, silent"
done
# Not silenced: the off line, and the variables that are not the library's
# named (a few, then how many more).
env "${vars[@]}" ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT=0 LD_PRELOAD="$PRE" ./bigtext --expect-none --expect-loaded >loud.out 2>loud.err ||
	fail "ENORMOUSTEXT=0 with ENORMOUSTEXT_VERBOSE=2: bigtext failed"
grep -q 'ENORMOUSTEXT=0' loud.err || fail "ENORMOUSTEXT_VERBOSE=2: no line says it is off: $(head -3 loud.err | tr '\n' '|')"
grep -q 'ENORMOUSTEXT_SITE_SETTING_11 is not a variable' loud.err || fail "the first unknown variable is not named: $(cat loud.err | tr '\n' '|')"
grep -q '13 more' loud.err || fail "the rest of the unknown variables are not counted: $(cat loud.err | tr '\n' '|')"
[ "$(grep -c '' loud.err)" -le 6 ] || fail "too many lines: $(grep -c '' loud.err)"
note "ENORMOUSTEXT_VERBOSE=2: $(grep -c '' loud.err) lines: $(tr '\n' '|' <loud.err)"
# And with many variables and no off switch the library acts (so the
# test above can tell).
env "${vars[@]}" LD_PRELOAD="$PRE" ./bigtext --expect-huge 90 --expect-loaded >on.out 2>on.err ||
	fail "with ${#vars[@]} variables and no ENORMOUSTEXT=0 the text should go huge: $(grep -E 'FAIL|ERROR' on.out | head -2 | tr '\n' ' ')"
note "without ENORMOUSTEXT=0 (${#vars[@]} variables): huge"
