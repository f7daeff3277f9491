#!/bin/bash
# fault.badvalues — bad values in the library's numeric and boolean
# variables never change what the program does, and cost at most one
# warning line each, naming the variable (none at ENORMOUSTEXT_VERBOSE=0).
#
# The variables come from the options table in libenormoustext/src/core/options.c
# (every entry whose "accepts" text is an on/off value, an integer, a size,
# a percentage, or the backend names; the path- and glob-valued ones are
# other tests' business), so a new one is covered when it is added there.
# Values: 0, -1, 2^64, 2^64-1, each bare and with K, M, G; 100 kB long
# (digits overflowing, and leading zeros before a 1); empty; spaces;
# trailing garbage.  Each is run with ENORMOUSTEXT_VERBOSE unset (at most
# one line, naming the variable) and, where it was warned about (and the
# four bare values), with =0 (nothing: that run is of `true`, only its
# stderr in question); then all the variables bad at once (at most one
# line each).
# Self-check: a broken stand-in library that warns twice, whatever
# ENORMOUSTEXT_VERBOSE says, must fail both checks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fr_common.bash"

OPTS=${FAULT_SOURCE_DIR:?}/libenormoustext/src/core/options.c
[ -f "$OPTS" ] || fail "$OPTS is missing"
R=$WORK/res
mkdir "$R" || exit 2
PROG=(./faultprog --exit 7 ./libbigtext.so)

# NAME<TAB>ACCEPTS for each entry of the table
table=$(sed -n '/^static const struct et_option_desc table/,/^};/p' "$OPTS" | tr '\n\t' '  ' |
	sed 's/\[ET_OPT_/\n/g' | sed -n 's/^[A-Z_0-9]*\] *= *{ *"\(ENORMOUSTEXT[A-Z_0-9]*\)", *"[^"]*", *"\([^"]*\)".*/\1\t\2/p')
[ -n "$table" ] || fail "cannot read the options table in $OPTS"
VARS=()
declare -A KIND
while IFS=$'\t' read -r name accepts; do
	case $accepts in
	*1/0*) k=bool ;;
	*integer*) k=integer ;;
	*size*) k=size ;;
	*percentage*) k=percentage ;;
	*auto,*) k=backend ;;
	*) continue ;;
	esac
	VARS+=("$name")
	KIND[$name]=$k
done <<<"$table"
[ "${#VARS[@]}" -ge 5 ] || fail "only ${#VARS[@]} numeric/boolean variables found in $OPTS: '$table'"
line=
for v in "${VARS[@]}"; do line+=" $v (${KIND[$v]})"; done
note "variables:$line"
skipped=$(awk -F '\t' '{ print $1 }' <<<"$table" | grep -vxF -f <(printf '%s\n' "${VARS[@]}") | tr '\n' ' ')
note "left to the path and glob tests: $skipped"

VALUES=()
LABELS=()
add() { VALUES+=("$1"); LABELS+=("$2"); }
for b in 0 -1 18446744073709551616 18446744073709551615; do
	for s in "" K M G; do add "$b$s" "$b$s"; done
done
add "$(printf '9%.0s' $(seq 100000))" "100000 nines"
add "$(printf '0%.0s' $(seq 99999))1" "99999 zeros and a 1"
add "" "empty"
add " 1" "space-1"
add "1 " "1-space"
add " " "a space"
add "1 0" "1-space-0"
add "$(printf '\t')1" "tab-1"
add "1x" "1x"
add "4096#" "4096#"
add "1K!" "1K!"
add "2Mi" "2Mi"

fr_copy "$WORK/p"
fr_run "$R/plain" "$WORK/p" -- env "${PROG[@]}"
[ "$(cat "$R/plain.rc")" = 7 ] || fail "the plain run exited $(cat "$R/plain.rc")"
fr_run "$R/true" "$WORK/p" -- env true
# A bad value leaves the variable at its default: for ENORMOUSTEXT_DEFER
# (lib.sh sets it to 0) that is the library's own default, 1 s: a waiting
# worker thread, which the program sees (faultprog counts its threads).
# Those runs are compared with a run of the library's defaults.
fr_run "$R/defaults" "$WORK/p" -- env -u ENORMOUSTEXT_DEFER -u ENORMOUSTEXT_PRIME -u ENORMOUSTEXT_COPY_MIN LD_PRELOAD="$PRE" "${PROG[@]}"
[ "$(cat "$R/defaults.rc")" = 7 ] || fail "the run with the library's defaults exited $(cat "$R/defaults.rc")"
fr_same "$R/defaults" "$R/plain" noerr && fail "the run with the default deferral shows no waiting worker: the comparison below proves nothing"
note "with the default deferral the program counts its threads: $(grep threads "$R/defaults.out")"

# one LIB ID VAR VALUE MODE — MODE: default (ENORMOUSTEXT_VERBOSE unset,
# unless VAR is it) or silent (=0 as well)
one() {
	local lib=$1 id=$2 var=$3 val=$4 mode=$5 envs n
	local prog=("${PROG[@]}") ref=$R/plain
	envs=(LD_PRELOAD="$lib" "$var=$val")
	# at =0 only stderr is in question: a small program is enough
	[ "$mode" = silent ] && envs+=(ENORMOUSTEXT_VERBOSE=0) && prog=(true) && ref=$R/true
	fr_run "$R/$id" "$WORK/p" -- timeout -k 5 30 env "${envs[@]}" "${prog[@]}"
	# a bad deferral is the default one; a good one (0) is as lib.sh's
	[ "$var" = ENORMOUSTEXT_DEFER ] && [ "$mode" = default ] && grep -q "\b$var\b" "$R/$id.err" && ref=$R/defaults
	if ! fr_same "$R/$id" "$ref" noerr; then
		echo "the program changed: $FR_WHY" >"$R/$id.why"
		return
	fi
	# (counted and matched with bash's builtins: about 1,500 runs)
	local lines
	mapfile -t lines <"$R/$id.err"
	n=${#lines[@]}
	if [ "$mode" = silent ] && [ "$n" != 0 ]; then
		echo "$n line(s) on stderr at ENORMOUSTEXT_VERBOSE=0: '$(head -2 "$R/$id.err" | cut -c1-160 | tr '\n' '|')'" >"$R/$id.why"
	elif [ "$n" -gt 1 ]; then
		echo "$n lines on stderr (at most 1): '$(head -3 "$R/$id.err" | cut -c1-160 | tr '\n' '|')'" >"$R/$id.why"
	elif [ "$n" = 1 ] && ! [[ ${lines[0]:0:300} =~ ^enormoustext:\ (.*[^A-Za-z0-9_])?$var([^A-Za-z0-9_]|$) ]]; then
		echo "the warning does not name $var: '$(head -c 200 "$R/$id.err")'" >"$R/$id.why"
	fi
	[ "$n" = 1 ] && : >"$R/$id.warned"
}

# Every value with ENORMOUSTEXT_VERBOSE unset; then at =0 every value that
# was warned about (a value taken silently is silent at 0 as well: its
# run would repeat the first) and the bare ones.
runs=0
for v in "${VARS[@]}"; do
	for i in "${!VALUES[@]}"; do
		fr_bg one "$PRE" "$v-$i-default" "$v" "${VALUES[$i]}" default
		runs=$((runs + 1))
	done
done
fr_wait
for v in "${VARS[@]}"; do
	[ "$v" = ENORMOUSTEXT_VERBOSE ] && continue
	for i in "${!VALUES[@]}"; do
		bare=0
		[ "$i" -lt 16 ] && [ $((i % 4)) = 0 ] && bare=1
		[ -f "$R/$v-$i-default.warned" ] || [ $bare = 1 ] || continue
		fr_bg one "$PRE" "$v-$i-silent" "$v" "${VALUES[$i]}" silent
		runs=$((runs + 1))
	done
done
fr_wait

# all at once: at most one line per variable, each naming a different one
envs=(LD_PRELOAD="$PRE")
for v in "${VARS[@]}"; do envs+=("$v=1x"); done
fr_run "$R/all" "$WORK/p" -- env "${envs[@]}" "${PROG[@]}"
runs=$((runs + 1))
nall=$(grep -c '' "$R/all.err")
named=0
for v in "${VARS[@]}"; do grep -q "^enormoustext: .*\b$v\b" "$R/all.err" && named=$((named + 1)); done
if ! fr_same "$R/all" "$R/defaults" noerr; then
	echo "the program changed: $FR_WHY" >"$R/all.why"
elif [ "$nall" -gt "${#VARS[@]}" ] || [ "$named" -lt "$nall" ]; then
	echo "$nall lines for ${#VARS[@]} bad variables, $named of them named: '$(head -3 "$R/all.err" | tr '\n' '|')'" >"$R/all.why"
fi
note "all ${#VARS[@]} variables =1x at once: $nall warning line(s), $named variables named"

# ---- the report ------------------------------------------------------------------
nbad=$(ls "$R"/*.why 2>/dev/null | wc -l)
printf '%-30s %s\n' variable "values: warned (default) / bad runs"
for v in "${VARS[@]}"; do
	w=$(ls "$R/$v"-*-default.warned 2>/dev/null | wc -l)
	b=$(ls "$R/$v"-*.why 2>/dev/null | wc -l)
	printf '%-30s %2d of %d values warned about once; %d bad run(s)\n' "$v" "$w" "${#VALUES[@]}" "$b"
done
if [ "$nbad" -gt 0 ]; then
	for f in "$R"/*.why; do
		id=$(basename "$f" .why)
		var=${id%%-*}
		rest=${id#"$var"-}
		i=${rest%%-*}
		echo "FAIL $var=${LABELS[$i]:-?} (${rest#*-}): $(cat "$f")"
	done | head -40
fi
note "$runs runs, $((runs - nbad)) ok"

# ---- the test can fail: a stand-in library that warns twice, always -------------
one "$SHIM" shim-default ENORMOUSTEXT_MIN_BYTES -1 default
one "$SHIM" shim-silent ENORMOUSTEXT_MIN_BYTES -1 silent
note "self-check with a broken stand-in library: default $([ -f "$R/shim-default.why" ] && echo FAIL || echo ok), silent $([ -f "$R/shim-silent.why" ] && echo FAIL || echo ok) (wanted FAIL, FAIL)"
[ -f "$R/shim-default.why" ] && [ -f "$R/shim-silent.why" ] ||
	fail "the test does not tell a library that warns twice, even at ENORMOUSTEXT_VERBOSE=0, from a good one"

[ "$nbad" = 0 ] || fail "$nbad of $runs runs with a bad value: the program changed or the warnings broke the rule"
echo "PASS [$T]: ${#VARS[@]} variables x ${#VALUES[@]} values, $runs runs, as plain, at most one warning each"
