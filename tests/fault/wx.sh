#!/bin/bash
# fault.wx — the library never asks for memory writable and executable at
# once.  faultrun --wx adds a seccomp filter that kills the process
# (SECCOMP_RET_KILL_PROCESS) on any mmap, mprotect or pkey_mprotect asking
# for PROT_WRITE|PROT_EXEC together; the preloaded program runs under it
# with every backend, and with ENORMOUSTEXT_RECORD (perf_event_open, and
# the timer fallback), and must finish as its plain run does.  First the
# filter is shown to kill: fr_wxprog's mmap(RWX) and mprotect(RWX) die of
# SIGSYS, its read-write-then-read-exec mapping lives.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fr_common.bash"

R=$WORK/res
mkdir "$R" || exit 2
WXP=$FAULT_BIN/fr_wxprog
SIGSYS_RC=$((128 + $(kill -l SYS)))

# ---- the filter can fail a program -----------------------------------------
for how in mmap mprotect rx; do
	fr_run "$R/free-$how" "$WORK" -- "$WXP" $how
	[ "$(cat "$R/free-$how.rc")" = 0 ] && grep -q "$how: granted" "$R/free-$how.out" ||
		fail "fr_wxprog $how without the filter: exit $(cat "$R/free-$how.rc"): $(cat "$R/free-$how.out" "$R/free-$how.err")"
	fr_run "$R/wx-$how" "$WORK" -- "$FR" --wx --log "$R/wx-$how.log" -- "$WXP" $how
	rc=$(cat "$R/wx-$how.rc")
	if [ $how = rx ]; then
		[ "$rc" = 0 ] || fail "the W+X filter killed a program that never asked for W+X (fr_wxprog rx): exit $rc"
	else
		[ "$rc" = "$SIGSYS_RC" ] && [ ! -s "$R/wx-$how.out" ] ||
			fail "the W+X filter did not kill fr_wxprog $how: exit $rc, stdout '$(cat "$R/wx-$how.out")'"
	fi
	note "fr_wxprog $how: without the filter exit 0 (granted); under it $(sed -n 's/^faultrun: status //p' "$R/wx-$how.log")"
done

# ---- the plain run, then the library under the filter ------------------------
PROG=(./faultprog --exit 7 ./libbigtext.so)
fr_copy "$WORK/plain"
fr_run "$R/plain" "$WORK/plain" -- "${PROG[@]}"
[ "$(cat "$R/plain.rc")" = 7 ] || fail "the plain run of faultprog exited $(cat "$R/plain.rc")"
fr_run "$R/plainwx" "$WORK/plain" -- "$FR" --wx --log "$R/plainwx.log" -- "${PROG[@]}"
fr_same "$R/plainwx" "$R/plain" || fail "the plain run under the W+X filter: $FR_WHY"

nfail=0
ncase=0
# name | faultrun rules | variables
CASES=(
	"auto||"
	"thp||ENORMOUSTEXT_BACKEND=thp"
	"collapse||ENORMOUSTEXT_BACKEND=collapse"
	"file||ENORMOUSTEXT_BACKEND=file"
	"hugetlb||ENORMOUSTEXT_BACKEND=hugetlb"
	"prime||ENORMOUSTEXT_PRIME=1"
	"record||ENORMOUSTEXT_RECORD=RECDIR"
	"record-timer|perf_event_open:EACCES|ENORMOUSTEXT_RECORD=RECDIR"
)
for c in "${CASES[@]}"; do
	IFS='|' read -r name rules vars <<<"$c"
	ncase=$((ncase + 1))
	dir=$WORK/$name
	fr_copy "$dir"
	ra=()
	[ -n "$rules" ] && ra=(--rule "$rules")
	va=()
	vb=()
	[ -n "$vars" ] && va=("${vars/RECDIR/$dir/rec.prof}") && vb=("${vars/RECDIR/$dir/v/rec.prof}")
	fr_run "$R/$name" "$dir" -- timeout -k 5 60 "$FR" --wx "${ra[@]}" --log "$R/$name.log" -- \
		env LD_PRELOAD="$PRE" ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=0 "${va[@]}" "${PROG[@]}"
	# what the library did there (a fresh copy again: the first run may
	# have left the page cache huge), said at ENORMOUSTEXT_VERBOSE=1
	fr_copy "$dir/v"
	fr_run "$R/$name-v" "$dir/v" -- "$FR" --wx "${ra[@]}" --log "$R/$name-v.log" -- \
		env LD_PRELOAD="$PRE" ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=1 "${vb[@]}" "${PROG[@]}"
	did=$(grep -v '^faultprog' "$R/$name-v.err" | head -2 | cut -c1-160 | tr '\n' ' ')
	if fr_same "$R/$name" "$R/plain"; then
		note "$name: ok, as the plain run  [${did:-nothing said}]"
	else
		nfail=$((nfail + 1))
		echo "FAIL $name under the W+X filter: $FR_WHY $(sed -n 's/^faultrun: status //p' "$R/$name.log")"
		echo "   reproduce: cp $FP $LIBBT DIR; cd DIR && $FR --wx ${ra[*]} -- env LD_PRELOAD=$PRE ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=0 ${va[*]} ${PROG[*]}"
	fi
	[ "$(cat "$R/$name-v.rc")" = "$SIGSYS_RC" ] && {
		nfail=$((nfail + 1))
		echo "FAIL $name (ENORMOUSTEXT_VERBOSE=1): killed by the W+X filter"
	}
	case $name in record*) [ -s "$dir/rec.prof" ] || note "$name: (no profile written under the filter)" ;; esac
done

# bigtext: its own checks (text in memory == file) and how much went huge
# under the filter with the copying backend (else the test proves little)
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
fr_run "$R/bigtext" "$D" -- "$FR" --wx --log "$R/bigtext.log" -- env LD_PRELOAD="$PRE" ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_BACKEND=thp ./bigtext --expect-loaded
ncase=$((ncase + 1))
if [ "$(cat "$R/bigtext.rc")" = 0 ]; then
	note "bigtext (thp) under the filter: $(grep -o 'huge (kind any) [0-9.]* of [0-9.]* MiB' "$R/bigtext.out" | tr '\n' ';')"
	grep -q 'huge (kind any) [1-9]' "$R/bigtext.out" ||
		fail "bigtext (thp): nothing went huge under the W+X filter: the test did not exercise the copies"
else
	nfail=$((nfail + 1))
	echo "FAIL bigtext (thp) under the W+X filter: exit $(cat "$R/bigtext.rc"): $(grep -E 'FAIL|ERROR' "$R/bigtext.out" | head -3) $(sed -n 's/^faultrun: status //p' "$R/bigtext.log")"
fi

# the zero-copy file backend: a congruent bigtext (linker-scripts/enormous.ld)
# whose page cache `enormoustext prime` made huge, and the library's own
# re-priming (ENORMOUSTEXT_PRIME=1: copies read back huge, swapped for the file)
if [ -x "${FAULT_TOOL:-}" ] && [ -d "$IT_BIN/script-bfd" ]; then
	for how in primed reprime; do
		fresh "$IT_BIN/script-bfd/bigtext" "$IT_BIN/script-bfd/libbigtext.so"
		cp "$PRE" "$D/libenormoustext.so.0" || fail "cannot copy $PRE"
		fr_run "$R/sb-$how-base" "$D" ENORMOUSTEXT=0 -- ./bigtext
		base=$(grep '^bigtext: results:' "$R/sb-$how-base.out")
		envs=(ENORMOUSTEXT_VERBOSE=0 ENORMOUSTEXT_BACKEND=file)
		if [ $how = primed ]; then
			fr_run "$R/sb-prime" "$D" -- "$FAULT_TOOL" prime ./bigtext ./libbigtext.so
		else
			envs=(ENORMOUSTEXT_VERBOSE=0 ENORMOUSTEXT_PRIME=1)
		fi
		fr_run "$R/sb-$how" "$D" -- "$FR" --wx --log "$R/sb-$how.log" -- env "${envs[@]}" ./bigtext --expect-loaded
		ncase=$((ncase + 1))
		if [ "$(cat "$R/sb-$how.rc")" = 0 ] && [ -n "$base" ] && grep -qxF "$base" "$R/sb-$how.out" && [ ! -s "$R/sb-$how.err" ]; then
			note "bigtext (enormous.ld, $how, ${envs[*]}) under the filter: ok; $(grep -o 'huge (kind any) [^[]*\[anon [0-9]*, file [0-9]*' "$R/sb-$how.out" | tr '\n' ';')"
		else
			nfail=$((nfail + 1))
			echo "FAIL bigtext (enormous.ld, $how) under the W+X filter: exit $(cat "$R/sb-$how.rc"): $(grep -E 'FAIL|ERROR' "$R/sb-$how.out" | head -3) $(head -2 "$R/sb-$how.err") $(sed -n 's/^faultrun: status //p' "$R/sb-$how.log")"
		fi
	done
else
	note "(no enormoustext tool or no script-bfd bigtext: the zero-copy runs are left out)"
fi

[ "$nfail" = 0 ] || fail "$nfail of $ncase runs under the W+X filter did not finish as the plain run"
echo "PASS [$T]: $ncase runs under the W+X filter, as plain; RWX mmap and mprotect killed"
