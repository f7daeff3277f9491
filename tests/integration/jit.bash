# jit.bash — what integration.jit and integration.jit.thp share (sourced
# after lib.sh, with J, D, PATS and want set).

# field PATTERN NAME — from jitprog's line for PATTERN in $OUT
jit_line() { grep "^$1: [0-9]* functions right" "$OUT"; }
jit_huge() { jit_line "$1" | sed -n 's/.*huge \([0-9]*\) kB.*/\1/p'; }
jit_aligned() { jit_line "$1" | sed -n 's/.*aligned \([a-z]*\),.*/\1/p'; }

# jit_check LABEL MODE THP [PATTERN...] — $OUT of one run (of PATTERNs,
# default PATS): results right; huge as MODE says
jit_check() {
	local label=$1 mode=$2 thp=$3 p h
	shift 3
	local pats=("$@")
	((${#pats[@]})) || pats=("${PATS[@]}")
	[ "$RC" -eq 0 ] || fail "$label: jitprog exit $RC: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
	for p in "${pats[@]}"; do
		[ "$p" = churn ] && { grep -q '^churn: 50000 mappings made and unmapped, errno kept' "$OUT" ||
			fail "$label: churn did not end right"; continue; }
		jit_line "$p" >/dev/null || fail "$label: no result line for $p"
		[ -n "${want[$p]:-}" ] || continue
		h=$(jit_huge "$p")
		if [ "$mode" = 2 ] || [ "$mode" = 3 ]; then
			[ "$h" -ge "${want[$p]}" ] || fail "$label: $p has $h kB of its code on huge pages, expected ${want[$p]}"
			case $p in reserve | grow | memfd)
				[ "$(jit_aligned "$p")" = yes ] || fail "$label: $p's mapping is not 2 MiB-aligned" ;;
			esac
		elif [ "$thp" != always ]; then
			[ "$h" -eq 0 ] || fail "$label: $p has $h kB huge without mode 2 (THP $thp): the test proves nothing"
		fi
	done
	echo "   ok: $label"
}

jit_runs() {
	local thp=$1 m
	run "plain-$thp" -- "$J" "${PATS[@]}"
	jit_check "plain (THP $thp)" 0 "$thp"
	for m in 1 2 3; do
		run "mode$m-$thp" ENORMOUSTEXT_MODE=$m LD_PRELOAD="$PRE" -- "$J" "${PATS[@]}"
		jit_check "ENORMOUSTEXT_MODE=$m (THP $thp)" "$m" "$thp"
		[ -s "$ERR" ] && fail "ENORMOUSTEXT_MODE=$m: the library wrote to stderr without being asked: $(head -2 "$ERR")"
	done
	# at verbosity 1: one line at exit, figures matching what jitprog saw
	run "verbose-$thp" ENORMOUSTEXT_MODE=2 ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" -- "$J" flip memfd
	jit_check "ENORMOUSTEXT_MODE=2 verbose (THP $thp)" 2 "$thp" flip memfd
	grep -qE '^enormoustext: jit: [0-9]+ kB of JIT code, (1[2-9]|[2-9])[0-9]{3} kB on 2 MiB pages; [0-9]+ executable ranges, [0-9]+ reservations aligned, [1-9][0-9]* windows collapsed' "$ERR" ||
		fail "ENORMOUSTEXT_MODE=2 ENORMOUSTEXT_VERBOSE=1: no exit line with >= 12 MiB huge: $(cat "$ERR")"
	# told to be silent: nothing, even with a bad neighbour value
	run "silent-$thp" ENORMOUSTEXT_MODE=3 ENORMOUSTEXT_VERBOSE=0 LD_PRELOAD="$PRE" -- "$J" flip
	jit_check "ENORMOUSTEXT_MODE=3 ENORMOUSTEXT_VERBOSE=0 (THP $thp)" 3 "$thp" flip
	[ -s "$ERR" ] && fail "ENORMOUSTEXT_VERBOSE=0: the library wrote to stderr: $(head -2 "$ERR")"
	# off wins
	run "off-$thp" ENORMOUSTEXT=0 ENORMOUSTEXT_MODE=2 LD_PRELOAD="$PRE" -- "$J" flip reserve
	jit_check "ENORMOUSTEXT=0 ENORMOUSTEXT_MODE=2 (THP $thp)" 0 "$thp" flip reserve
	# a bad value: a warning naming what it accepts, then the default (mode 1)
	run "bad-$thp" ENORMOUSTEXT_MODE=4 LD_PRELOAD="$PRE" -- "$J" flip
	jit_check "ENORMOUSTEXT_MODE=4 (THP $thp)" 1 "$thp" flip
	grep -q 'ENORMOUSTEXT_MODE=4 is not valid: it accepts 1 (file text), 2 (JIT code), 3 (both)' "$ERR" ||
		fail "ENORMOUSTEXT_MODE=4: no warning naming what it accepts: $(cat "$ERR")"
}
