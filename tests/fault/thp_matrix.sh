#!/bin/bash
# fault.thp_matrix — every system THP policy: enabled always/madvise/never
# x defrag always/defer/defer+madvise/madvise/never.  Under each, the
# preloaded program (backends auto, thp, collapse) behaves as its plain run
# (stdout, exit status, stderr at ENORMOUSTEXT_VERBOSE=0), and the report
# says what the library could do there: its own summary line
# (ENORMOUSTEXT_VERBOSE=1) and what bigtext finds huge in its smaps.
# Root only (it writes /sys/kernel/mm/transparent_hugepage/*); each setting
# is restored when the test ends; it runs alone (fault_serial).
# Self-check: a broken stand-in library that gives up under enabled=never
# must fail there and pass under madvise.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fr_common.bash"

S=/sys/kernel/mm/transparent_hugepage
[ "$(id -u)" = 0 ] || skip "changing $S/enabled and defrag needs root (uid $(id -u))"
[ -f "$S/enabled" ] && [ -f "$S/defrag" ] || skip "no $S/enabled or $S/defrag (a kernel without THP)"
[ -w "$S/enabled" ] && [ -w "$S/defrag" ] || skip "$S is read-only here (a container?)"
cur() { sed -n 's/.*\[\([^]]*\)\].*/\1/p' "$S/$1"; }
orig_enabled=$(cur enabled)
orig_defrag=$(cur defrag)
[ -n "$orig_enabled" ] && [ -n "$orig_defrag" ] || fail "cannot read the current settings: '$(cat "$S/enabled")' '$(cat "$S/defrag")'"
at_exit "echo $orig_enabled > $S/enabled; echo $orig_defrag > $S/defrag; note \"restored enabled=\$(cur enabled) defrag=\$(cur defrag)\""
note "settings now: enabled=$orig_enabled defrag=$orig_defrag (restored at the end)"

R=$WORK/res
mkdir "$R" || exit 2
PROG=(./faultprog --exit 7 ./libbigtext.so)
nfail=0
ncmp=0
shim_never=
shim_madvise=
printf '%-8s %-14s %-7s %-7s %-9s %-22s %s\n' enabled defrag auto thp collapse "bigtext huge exe/lib" "the library says (ENORMOUSTEXT_VERBOSE=1)"
for en in always madvise never; do
	for df in always defer defer+madvise madvise never; do
		echo "$en" >"$S/enabled" && echo "$df" >"$S/defrag" || fail "cannot write enabled=$en defrag=$df"
		[ "$(cur enabled)" = "$en" ] && [ "$(cur defrag)" = "$df" ] || fail "enabled=$en defrag=$df did not take: $(cur enabled) $(cur defrag)"
		id=$en-$df
		dir=$WORK/$id
		fr_copy "$dir"
		fr_run "$R/$id-plain" "$dir" -- env "${PROG[@]}"
		cols=()
		for b in auto thp collapse; do
			ncmp=$((ncmp + 1))
			fr_run "$R/$id-$b" "$dir" -- env LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=0 ENORMOUSTEXT_BACKEND=$b "${PROG[@]}"
			if fr_same "$R/$id-$b" "$R/$id-plain"; then cols+=(ok); else
				cols+=(FAIL)
				nfail=$((nfail + 1))
				echo "FAIL enabled=$en defrag=$df backend=$b: $FR_WHY" >>"$R/fails"
			fi
		done
		fr_copy "$dir/v"
		fr_run "$R/$id-v" "$dir/v" -- env LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=1 "${PROG[@]}"
		said=$(grep '^enormoustext: ' "$R/$id-v.err" | tail -1 | sed 's/^enormoustext: //' | cut -c1-110)
		fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
		fr_run "$R/$id-bt" "$D" -- env LD_PRELOAD="$PRE" ./bigtext
		huge=$(sed -n 's/^bigtext: \(exe\|lib\) .*huge (kind any) \([0-9.]*\) of \([0-9.]*\) MiB.*/\2/p' "$R/$id-bt.out" | tr '\n' '/' | sed 's|/$||')
		ncmp=$((ncmp + 1))
		if [ "$(cat "$R/$id-bt.rc")" = 0 ]; then huge="${huge:-?} MiB"; else
			huge="FAIL (exit $(cat "$R/$id-bt.rc"))"
			nfail=$((nfail + 1))
			echo "FAIL enabled=$en defrag=$df: bigtext preloaded exited $(cat "$R/$id-bt.rc"): $(grep -E 'FAIL|ERROR' "$R/$id-bt.out" | head -2)" >>"$R/fails"
		fi
		printf '%-8s %-14s %-7s %-7s %-9s %-22s %s\n' "$en" "$df" "${cols[@]}" "$huge" "${said:-nothing}"
		if [ "$df" = madvise ] && [ "$en" != always ]; then
			fr_run "$R/$id-shim" "$dir" -- env LD_PRELOAD="$SHIM" "${PROG[@]}"
			fr_same "$R/$id-shim" "$R/$id-plain" && r=ok || r=FAIL
			[ "$en" = never ] && shim_never=$r || shim_madvise=$r
		fi
	done
done
[ -s "$R/fails" ] && cat "$R/fails"
note "self-check with a broken stand-in library: enabled=never $shim_never (wanted FAIL), enabled=madvise $shim_madvise (wanted ok)"
[ "$shim_never" = FAIL ] && [ "$shim_madvise" = ok ] ||
	fail "the test does not tell a library that breaks under enabled=never from a good one"
[ "$nfail" = 0 ] || fail "$nfail of $ncmp runs did not behave as the plain run under their THP setting"
echo "PASS [$T]: 15 settings, $ncmp runs, as plain"
