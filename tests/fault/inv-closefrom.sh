#!/bin/bash
# fault.inv-closefrom — a program that closes every descriptor it did not
# open (closefrom(3): daemons, sshd) owns the numbers it gets afterwards:
# the library must never use, nor close, a descriptor it had before.
# ENORMOUSTEXT_HOT=auto and ENORMOUSTEXT_RECORD sample with perf events
# (one descriptor a CPU, from 3 on); after closefrom(3) the program's fopen
# gets 3, and when the deferral ends (HOT=auto) or at exit (RECORD) the
# library's ioctl and close of "its" descriptor hit the program's file.
#
# iv_prog --closefrom FILE: closefrom(3), fopen FILE, 3000 numbered lines
# over 600 ms (a 200 ms deferral ends meanwhile), then fclose FILE — or,
# with --exit-flush, no fclose: exit's flush writes the last buffer, as
# many programs rely on.  Cells: HOT=auto with DEFER=200ms; RECORD (the
# profile in another directory) without a deferral and with DEFER=200ms;
# each with fclose and with --exit-flush.  FILE must be byte for byte the
# plain run's, and stdout and the exit status the plain run's.  Which
# sampling method each cell used is said (from ENORMOUSTEXT_VERBOSE=1 and
# the profile's comment): a CPU-time timer has no descriptor, and cannot
# show the defect.
. "$(dirname "$0")/lib.sh"
IV=$FAULT_BIN/iv_prog
[ -x "$IV" ] || fail "$IV is missing: build the tests first"
fresh "$IV"
R=$WORK/res
mkdir "$R" "$R/prof" || exit 2
ARGS=(--lines 3000 --over 600)
# The program starts with 0, 1, 2 alone, as a daemon started by init does
# (whatever the test was given above 2 is closed first: with 3 inherited,
# the library's descriptors would start at 4 and the program's fopen would
# get 3 all the same).
run() { # NAME EXTRA [VAR=VALUE...]: iv_prog --closefrom $R/NAME.txt (a 60 s hang guard)
	local name=$1 extra=$2
	shift 2
	# shellcheck disable=SC2086 # EXTRA is empty or one word
	(cd "$D" && close_above_2 && exec env "$@" timeout --foreground -k 5 60 ./iv_prog --closefrom "$R/$name.txt" "${ARGS[@]}" $extra \
		>"$R/$name.out" 2>"$R/$name.err")
	echo $? >"$R/$name.rc"
}
close_above_2() { # in a subshell: close every descriptor above 2
	local f fd
	for f in /proc/"$BASHPID"/fd/*; do
		fd=${f##*/}
		[ "$fd" -gt 2 ] && eval "exec $fd>&-"
	done
	return 0
}
run plain ""
run plainx --exit-flush
for p in plain plainx; do
	[ "$(cat "$R/$p.rc")" = 0 ] || fail "the plain run ($p) exited $(cat "$R/$p.rc"): $(cat "$R/$p.out" "$R/$p.err" | head -5)"
	[ "$(wc -l <"$R/$p.txt")" = 3000 ] || fail "the plain run ($p) wrote $(wc -l <"$R/$p.txt") lines, not 3000"
done
bad=()
perf_cells=0
cells=0
cell() { # NAME WHAT EXTRA PLAIN VAR=VALUE...
	local name=$1 what=$2 extra=$3 plain=$4 method res
	shift 4
	run "$name" "$extra" ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" "$@"
	cells=$((cells + 1))
	if grep -q 'sampling with a CPU-time timer and SIGPROF instead' "$R/$name.err"; then
		method="a CPU-time timer and SIGPROF (no descriptor: this cell cannot show the defect)"
	elif grep -q 'cannot sample this process' "$R/$name.err"; then
		method="none: $(grep -m1 'cannot sample' "$R/$name.err")"
	elif [ -f "$R/prof/$name.prof" ] && ! grep -q '(perf_event_open cpu-clock)' "$R/prof/$name.prof"; then
		method="$(sed -n 's/^# recorded by ENORMOUSTEXT_RECORD (\([^)]*\)).*/\1/p' "$R/prof/$name.prof")"
	else
		method="perf_event_open"
		perf_cells=$((perf_cells + 1))
	fi
	local lines
	lines=$(wc -l <"$R/$name.txt" 2>/dev/null || echo 0)
	res=""
	cmp -s "$R/$name.txt" "$R/$plain.txt" ||
		res="the file differs: $lines of 3000 lines, $(stat -c %s "$R/$name.txt" 2>/dev/null || echo 0) of $(stat -c %s "$R/$plain.txt") bytes ($(cmp "$R/$name.txt" "$R/$plain.txt" 2>&1 | head -1))"
	if [ "$(cat "$R/$name.rc")" != "$(cat "$R/$plain.rc")" ]; then
		res="${res:+$res; }exit $(cat "$R/$name.rc") (plain $(cat "$R/$plain.rc"))"
	fi
	cmp -s "$R/$name.out" "$R/$plain.out" ||
		res="${res:+$res; }stdout differs: $(diff "$R/$plain.out" "$R/$name.out" | grep '^[<>]' | tr '\n' ' ')"
	if [ -z "$res" ]; then
		note "$what: as plain (3000 lines, byte for byte); sampling: $method"
	else
		note "$what: $res; sampling: $method; stderr: $(grep -v '^enormoustext: [0-9]* of [0-9]* objects' "$R/$name.err" | head -2 | tr '\n' ' ')"
		bad+=("$what: $res")
	fi
}
cell hot "HOT=auto, DEFER=200ms, fclose" "" plain ENORMOUSTEXT_DEFER=200ms ENORMOUSTEXT_HOT=auto
cell hotx "HOT=auto, DEFER=200ms, exit's flush" --exit-flush plainx ENORMOUSTEXT_DEFER=200ms ENORMOUSTEXT_HOT=auto
cell rec "RECORD, no deferral, fclose" "" plain ENORMOUSTEXT_RECORD="$R/prof/rec.prof"
cell recx "RECORD, no deferral, exit's flush" --exit-flush plainx ENORMOUSTEXT_RECORD="$R/prof/recx.prof"
cell drec "RECORD, DEFER=200ms, fclose" "" plain ENORMOUSTEXT_DEFER=200ms ENORMOUSTEXT_RECORD="$R/prof/drec.prof"
cell drecx "RECORD, DEFER=200ms, exit's flush" --exit-flush plainx ENORMOUSTEXT_DEFER=200ms ENORMOUSTEXT_RECORD="$R/prof/drecx.prof"
[ ${#bad[@]} = 0 ] || fail "${#bad[@]} of $cells cells did not end as the plain run: $(printf '%s; ' "${bad[@]}")"
[ "$perf_cells" -gt 0 ] ||
	skip "every cell sampled with the CPU-time timer (perf_event_open refused here: kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null), a seccomp filter?): the timer holds no descriptor, so no cell could show the defect (each file was complete)"
note "$perf_cells of $cells cells sampled with perf_event_open"
echo "PASS [$T]"
