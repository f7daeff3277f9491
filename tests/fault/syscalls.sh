#!/bin/bash
# fault.syscalls — the library's own system calls fail, one kind at a time;
# the preloaded program must not notice.
#
# faultrun (faultrun.c) runs the program under a seccomp filter whose
# notifications come back to it, and fails only the calls the library makes
# (their return address is in libenormoustext), with a chosen errno: every
# such call of one system call (and one madvise advice), or only the Nth
# (N spread over all of them, so each call site is hit once).  Each cell
# compares stdout, exit status and stderr (ENORMOUSTEXT_VERBOSE=0) with the
# plain run, and (faultprog prints them) what a program can observe: its
# lowest free descriptor, its threads, the change in its mapping count over
# protection changes, its signal dispositions and mask, a forked child that
# dlopens.  Five set-ups: start-up/dlopen/fork/exit as usual; with
# ENORMOUSTEXT_RECORD (perf_event_open sampling); with ENORMOUSTEXT_RECORD
# and perf_event_open refused to the library (the timer fallback:
# timer_create, SIGPROF); with ENORMOUSTEXT_DEFER=1ms (the worker's calls:
# its descriptor table of its own, its pidfd, its pass) and a main thread
# that ends with pthread_exit (the process must end as plain); with the
# library's defaults (the deferral on the program's own thread, copies of
# what ran, priming: fadvise64, fstatfs, cachestat) but a deferral of
# 50 ms instead of 1 s, and a program at work until it has used 0.15 s of
# CPU (faultprog --work counts CPU time, as the deferral's tick does: on
# a busy machine the pass still comes within the work; the same calls as
# with 1 s and 1.5 s, and as with 0.3 s: 12 mremap and 3 fadvise64 of the
# library's, with both CPUs kept busy beside it too; only the wait is
# shorter, in about 150 cells).
#
# First the attribution is checked (a plain run: 0 calls the library's; a
# preloaded bigtext: > 0 mmap, mremap, mprotect, madvise, openat, read;
# the program's own distinctive calls never the library's), and last the
# harness itself (a deliberately broken stand-in library must fail its
# mmap cells and pass its openat cells).
#
# Environment: FAULT_NTH_CAP (8) Nth cells per row at most; FAULT_JOBS (2).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fr_common.bash"

ERRNOS=(ENOMEM EPERM EINVAL EAGAIN EINTR)
NTH_CAP=${FAULT_NTH_CAP:-8}
CELL_TIMEOUT=30
R=$WORK/res
mkdir "$R" || exit 2
PROG=(./faultprog --exit 7 ./libbigtext.so)

# ---- the plain run, and faultrun around it --------------------------------
fr_copy "$WORK/plain"
fr_run "$R/plain" "$WORK/plain" -- "${PROG[@]}"
[ "$(cat "$R/plain.rc")" = 7 ] || fail "the plain run of faultprog exited $(cat "$R/plain.rc"), not 7: $(head -3 "$R/plain.out")"
[ ! -s "$R/plain.err" ] || fail "the plain run of faultprog wrote on stderr: $(head -2 "$R/plain.err")"
fr_run "$R/plaincount" "$WORK/plain" -- "$FR" --count --log "$R/plaincount.log" -- "${PROG[@]}"
fr_same "$R/plaincount" "$R/plain" || fail "faultrun --count changed what a plain run does: $FR_WHY"
n=$(awk '$2 == "count" { s += $5 } END { print s + 0 }' "$R/plaincount.log")
[ "$n" = 0 ] || fail "a plain run (no library) has $n calls attributed to the library: $(grep -v 'library 0 ' "$R/plaincount.log" | head -3)"
note "plain run under faultrun --count: 0 of $(awk '$2 == "count" { s += $7 } END { print s + 0 }' "$R/plaincount.log") calls attributed to the library"
fr_run "$R/plainfail" "$WORK/plain" -- "$FR" --rule mmap:ENOMEM --rule openat:EPERM --log "$R/plainfail.log" -- "${PROG[@]}"
fr_same "$R/plainfail" "$R/plain" || fail "faultrun failing the library's mmap/openat changed a plain run: $FR_WHY"

# ---- attribution with the library -------------------------------------------
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
fr_run "$R/bigtext" "$D" -- "$FR" --count --log "$R/bigtext.log" -- env LD_PRELOAD="$PRE" ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=0 ./bigtext
[ "$(cat "$R/bigtext.rc")" = 0 ] || fail "bigtext preloaded under faultrun --count exited $(cat "$R/bigtext.rc"): $(grep -E 'FAIL|ERROR' "$R/bigtext.out" | head -3)"
line=
for s in mmap mremap mprotect madvise munmap openat read pread64 prctl perf_event_open timer_create; do
	line+=" $s $(fr_count "$R/bigtext.log" $s)"
done
note "bigtext preloaded, calls attributed to the library:$line"
for s in mmap mremap mprotect madvise openat read; do
	[ "$(fr_count "$R/bigtext.log" $s)" -gt 0 ] ||
		fail "bigtext preloaded: no $s call attributed to the library (faultrun cannot see its calls): $(grep " $s" "$R/bigtext.log" | head -3)"
done

fr_copy "$WORK/own"
fr_run "$R/own" "$WORK/own" -- "$FR" --count --log "$R/own.log" -- \
	env LD_PRELOAD="$PRE" ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=2 ./faultprog --own-calls 5 ./libbigtext.so
[ "$(cat "$R/own.rc")" = 0 ] || fail "faultprog --own-calls preloaded exited $(cat "$R/own.rc")"
for k in 'madvise[MADV_NORMAL]' 'prctl[PR_GET_NAME]'; do
	lib=$(fr_count "$R/own.log" "$k")
	other=$(fr_other "$R/own.log" "$k")
	[ "$lib" = 0 ] && [ "$other" -ge 5 ] ||
		fail "the program's own $k calls: $lib attributed to the library, $other to others (want 0 and >= 5)"
done
note "the program's own madvise(MADV_NORMAL) and prctl(PR_GET_NAME) calls: none attributed to the library"
# Each window swapped in is one mremap(MREMAP_MAYMOVE|MREMAP_FIXED) of the
# library: the counts agree with what it says it did (where it says so).
# (only where every window went huge: a copy that did not land on a huge
# page is never swapped in)
wins=$(sed -n 's/.* huge ([a-z]*), \([0-9]*\) window(s), .*/\1/p' "$R/own.err" | awk '{ s += $1 } END { print s + 0 }')
mr=$(fr_count "$R/own.log" mremap)
if grep -q ' window(s) left small' "$R/own.err"; then
	note "(some windows stayed small this time: mremap count $mr not cross-checked: $(grep -m1 'left small' "$R/own.err"))"
elif grep -q ' window(s), ' "$R/own.err"; then
	[ "$wins" = "$mr" ] || fail "the library reports $wins windows swapped in, faultrun attributes $mr mremap calls to it"
	note "the library reports $wins windows swapped in; faultrun attributes $mr mremap calls to it"
else
	note "(the library's ENORMOUSTEXT_VERBOSE=2 lines name no window count: mremap count $mr not cross-checked)"
fi

# ---- the matrix --------------------------------------------------------------
# set-ups: name, extra faultrun rules, extra variables (RECDIR is replaced)
SETUPS=(start record timer defer defaults)
declare -A S_RULES=([start]="" [record]="" [timer]="perf_event_open:EACCES" [defer]="" [defaults]="")
declare -A S_ENV=([start]="" [record]="ENORMOUSTEXT_RECORD=RECDIR" [timer]="ENORMOUSTEXT_RECORD=RECDIR"
	[defer]="ENORMOUSTEXT_DEFER=1ms" [defaults]="ENORMOUSTEXT_DEFER=50ms")
# the library's defaults (lib.sh's ENORMOUSTEXT_DEFER=0, _PRIME=0 and
# _COPY_MIN taken away: the deferral on the program's thread, copies only
# of windows that ran, copied windows primed into zero-copy) with a 50 ms
# deferral, a program at work for 0.15 s of CPU
declare -A S_UNSET=([defaults]="ENORMOUSTEXT_DEFER ENORMOUSTEXT_PRIME ENORMOUSTEXT_COPY_MIN")
# the deferred worker's calls, and a main thread that ends with pthread_exit
# (the process must end when it does: its own plain run is the reference)
# (--no-counts: while the worker lives the program sees one more thread, and
# while it swaps windows in the number of mappings changes: documented)
declare -A S_PROG=([defer]="--end-pthread-exit --no-counts" [defaults]="--work 150 --no-counts")
declare -A S_ROWS=(
	[start]="mmap mremap mprotect madvise ADVICES munmap openat read pread64 prctl process_madvise memfd_create perf_event_open timer_create"
	[record]="perf_event_open ioctl mmap munmap openat read write"
	[timer]="timer_create timer_settime rt_sigaction mmap munmap"
	[defer]="mmap mremap mprotect madvise openat read pread64 close_range unshare pidfd_open pidfd_getfd getdents64 prctl"
	[defaults]="mmap mremap madvise openat read pread64 fadvise64 fstatfs cachestat close_range pidfd_open pidfd_getfd")
ADVICES="MADV_HUGEPAGE MADV_COLLAPSE MADV_POPULATE_READ MADV_POPULATE_WRITE MADV_NOHUGEPAGE MADV_DONTNEED"
# (no close row: Linux frees the descriptor even when close fails, which a
# supervisor cannot do for it — a failed close here would leave it open,
# and faultprog's lowest-free-descriptor invariant would blame the library
# for the harness)

# cell ID SETUP DIR SPEC [PRELOAD [ENVS]]
cell() {
	local id=$1 setup=$2 dir=$3 spec=$4 lib=${5:-$PRE} envs rules=() r
	envs=(LD_PRELOAD="$lib")
	# (faultrun's own filter only notifies: the library may act under it;
	# the stand-in gets no ENORMOUSTEXT_* variable at all, see the self-check)
	[ $# -ge 6 ] || envs+=(ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=0)
	[ -n "${S_ENV[$setup]:-}" ] && envs+=("${S_ENV[$setup]/RECDIR/$dir/$id.prof}")
	for r in ${S_RULES[$setup]:-}; do rules+=(--rule "$r"); done
	[ -n "$spec" ] && rules+=(--rule "$spec")
	local prog=("${PROG[@]}") ref=$R/plain
	# shellcheck disable=SC2206 # the set-up's extra arguments are words
	[ -n "${S_PROG[$setup]:-}" ] && prog=(./faultprog ${S_PROG[$setup]} ./libbigtext.so) ref=$R/plain-$setup
	local un=()
	for r in ${S_UNSET[$setup]:-}; do un+=(-u "$r"); done
	# the defaults: each run on a fresh copy, written out (the defaults
	# prime only clean files), so that each copies and primes (a run after
	# a primed one would find the page cache huge: zero-copy)
	if [ "$setup" = defaults ]; then
		dir=$dir/$id
		fr_copy "$dir"
		sync "$dir"/*
	fi
	echo "cd $dir && $FR ${rules[*]} -- env ${un[*]} ${envs[*]} ${prog[*]}" >"$R/$id.cmd"
	fr_run "$R/$id" "$dir" -- timeout -k 5 $CELL_TIMEOUT "$FR" --log "$R/$id.log" "${rules[@]}" -- env "${un[@]}" "${envs[@]}" "${prog[@]}"
	if fr_same "$R/$id" "$ref"; then echo ok >"$R/$id.v"; else echo "$FR_WHY" >"$R/$id.why"; echo FAIL >"$R/$id.v"; fi
	rm -f "$dir/$id.prof"*
	[ "$setup" = defaults ] && rm -rf "$dir"
	return 0
}
# the errno-th cells of a row: the Nth call, N spread over 1..COUNT
nth_list() {
	local c=$1
	if [ "$c" -le "$NTH_CAP" ]; then seq 1 "$c"; else
		awk -v c="$c" -v k="$NTH_CAP" 'BEGIN { for (i = 0; i < k; i++) print 1 + int(i * (c - 1) / (k - 1)) }'
	fi
}

declare -a ROWS=()        # "setup|spec|label|count"
t0=$SECONDS
for setup in "${SETUPS[@]}"; do
	fr_copy "$WORK/$setup"
	# written out, as installed programs are: the defaults prime only
	# clean files (a copy just written has dirty pages)
	[ "$setup" = defaults ] && sync "$WORK/$setup"/*
	sprog=("${PROG[@]}")
	if [ -n "${S_PROG[$setup]:-}" ]; then
		# shellcheck disable=SC2206
		sprog=(./faultprog ${S_PROG[$setup]} ./libbigtext.so)
		fr_run "$R/plain-$setup" "$WORK/$setup" -- timeout -k 5 $CELL_TIMEOUT "${sprog[@]}"
		[ "$(cat "$R/plain-$setup.rc")" = 0 ] || fail "$setup: the plain run of ${sprog[*]} exited $(cat "$R/plain-$setup.rc")"
	fi
	cell "count-$setup" "$setup" "$WORK/$setup" ""
	# the count run itself: preloaded, no fault
	[ "$(cat "$R/count-$setup.v")" = ok ] || fail "$setup: the preloaded run (no fault) differs from the plain run: $(cat "$R/count-$setup.why")"
	srules=() sun=()
	for r in ${S_RULES[$setup]}; do srules+=(--rule "$r"); done
	for r in ${S_UNSET[$setup]:-}; do sun+=(-u "$r"); done
	fr_run "$R/c-$setup" "$WORK/$setup" -- "$FR" --count --log "$R/c-$setup.log" "${srules[@]}" -- \
		env "${sun[@]}" LD_PRELOAD="$PRE" ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=0 ${S_ENV[$setup]:+${S_ENV[$setup]/RECDIR/$WORK/$setup/c.prof}} "${sprog[@]}"
	sref=$R/plain
	[ -n "${S_PROG[$setup]:-}" ] && sref=$R/plain-$setup
	fr_same "$R/c-$setup" "$sref" || fail "$setup: the preloaded run under faultrun --count differs from the plain run: $FR_WHY"
	# the defaults' pass and its priming came within the program's work:
	# else their rows below would find no call to fail
	if [ "$setup" = defaults ]; then
		for s in mremap fadvise64; do
			[ "$(fr_count "$R/c-$setup.log" $s)" -gt 0 ] ||
				fail "defaults: no $s call of the library's within faultprog's ${S_PROG[defaults]}: the deferred pass (or its priming) came too late to be tested"
		done
		note "defaults: the deferred pass within the work: $(fr_count "$R/c-$setup.log" mremap) mremap, $(fr_count "$R/c-$setup.log" fadvise64) fadvise64 calls of the library's"
	fi
	for s in ${S_ROWS[$setup]}; do
		if [ "$s" = ADVICES ]; then
			# the named advices, and any other the library used
			advs=$ADVICES
			for a in $(sed -n 's/^faultrun: count madvise\[\([A-Z_]*\)\]: library \([1-9][0-9]*\) .*/\1/p' "$R/c-$setup.log"); do
				case " $advs " in *" $a "*) ;; *) advs+=" $a" ;; esac
			done
			for a in $advs; do
				ROWS+=("$setup|madvise/arg2=$a|madvise[$a]|$(fr_count "$R/c-$setup.log" "madvise[$a]")")
			done
		else
			ROWS+=("$setup|$s|$s|$(fr_count "$R/c-$setup.log" "$s")")
		fi
	done
done

ncell=0
for i in "${!ROWS[@]}"; do
	IFS='|' read -r setup spec label count <<<"${ROWS[$i]}"
	dir=$WORK/row$i
	fr_copy "$dir"
	for e in "${ERRNOS[@]}"; do
		fr_bg cell "r$i-$e" "$setup" "$dir" "$spec:$e"
		ncell=$((ncell + 1))
	done
	if [ "$count" -gt 0 ]; then
		k=0
		for n in $(nth_list "$count"); do
			e=${ERRNOS[$((k % ${#ERRNOS[@]}))]}
			k=$((k + 1))
			fr_bg cell "r$i-n$n" "$setup" "$dir" "$spec:$e:$n"
			ncell=$((ncell + 1))
		done
	fi
done
fr_wait

# ---- the report ----------------------------------------------------------------
nok=0
nfail=0
injected=0
printf '%-8s %-28s %6s  %-6s %-6s %-6s %-6s %-6s  %s\n' set-up "system call" calls "${ERRNOS[@]}" "Nth call"
for i in "${!ROWS[@]}"; do
	IFS='|' read -r setup spec label count <<<"${ROWS[$i]}"
	cols=()
	for e in "${ERRNOS[@]}"; do
		v=$(cat "$R/r$i-$e.v" 2>/dev/null || echo FAIL)
		f=$(awk '$2 == "rule" && $3 ~ /:'"$e"':?$/ { print $7 }' "$R/r$i-$e.log" 2>/dev/null | tail -1)
		injected=$((injected + ${f:-0}))
		[ "$v" = ok ] && nok=$((nok + 1)) || nfail=$((nfail + 1))
		cols+=("$v")
	done
	nth="-"
	if [ "$count" -gt 0 ]; then
		good=0 all=0 bad=""
		for n in $(nth_list "$count"); do
			all=$((all + 1))
			v=$(cat "$R/r$i-n$n.v" 2>/dev/null || echo FAIL)
			f=$(awk '$2 == "rule" { x = $7 } END { print x + 0 }' "$R/r$i-n$n.log" 2>/dev/null)
			injected=$((injected + ${f:-0}))
			if [ "$v" = ok ]; then good=$((good + 1)); nok=$((nok + 1)); else bad+=" $n"; nfail=$((nfail + 1)); fi
		done
		nth="N=$(nth_list "$count" | head -1)..$(nth_list "$count" | tail -1): $good/$all ok${bad:+ (FAIL at N =$bad)}"
	fi
	note_calls=$count
	[ "$count" = 0 ] && nth="never called by the library here (count 0)"
	printf '%-8s %-28s %6s  %-6s %-6s %-6s %-6s %-6s  %s\n' "$setup" "$label" "$note_calls" "${cols[@]}" "$nth"
done
note "$ncell cells, $nok ok, $nfail FAIL; $injected calls failed in all; $((SECONDS - t0)) s"
if [ "$nfail" -gt 0 ]; then
	for f in "$R"/r*.why; do
		id=$(basename "$f" .why)
		echo "FAIL cell $id: $(cat "$f")"
		echo "   reproduce: cp $FP $LIBBT DIR; $(sed "s|cd [^ ]* |cd DIR |" "$R/$id.cmd")"
		grep -h '^faultrun: rule' "$R/$id.log" 2>/dev/null | sed 's/^/   /'
	done | head -60
fi
[ "$ncell" = $((nok + nfail)) ] || fail "$ncell cells run but $((nok + nfail)) verdicts"

# ---- the harness can fail: a broken stand-in library ------------------------------
# fr_shim exits 3 when its 64 MiB mmap fails: its mmap cells must FAIL; it
# does without what an openat failure denies it: its openat cells pass.
fr_copy "$WORK/shim"
shim_ok=0
shim_fail=0
for e in "${ERRNOS[@]}"; do
	fr_bg cell "shim-mmap-$e" start "$WORK/shim" "mmap:$e" "$SHIM" noverbose
	fr_bg cell "shim-openat-$e" start "$WORK/shim" "openat:$e" "$SHIM" noverbose
done
fr_wait
for e in "${ERRNOS[@]}"; do
	[ "$(cat "$R/shim-mmap-$e.v")" = FAIL ] && shim_fail=$((shim_fail + 1))
	[ "$(cat "$R/shim-openat-$e.v")" = ok ] && shim_ok=$((shim_ok + 1))
done
note "self-check with a broken stand-in library: mmap cells FAIL $shim_fail/5 ($(cat "$R/shim-mmap-ENOMEM.why" 2>/dev/null | cut -c1-80)), openat cells ok $shim_ok/5"
[ "$shim_fail" = 5 ] && [ "$shim_ok" = 5 ] ||
	fail "the harness does not tell a broken library from a good one (mmap cells FAIL $shim_fail/5, openat cells ok $shim_ok/5)"

[ "$nfail" = 0 ] || fail "$nfail of $ncell cells: the preloaded program did not behave as the plain run (see FAIL cell lines above)"
echo "PASS [$T]: $ncell cells, $nok ok"
