#!/bin/bash
# fault.uprobe — uprobes and text the library moves.
#
# A uprobe (tracefs uprobe_events) is an int3 that the kernel writes into a
# private copy of one page of every mapping of the probed file, and finds
# again by file and offset: to install it in processes that map the file
# later, to remove it, and to know, when the int3 traps, that it is its own.
# An int3 in anonymous memory (a copy of the text) is no one's: the kernel
# sends SIGTRAP, and the process dies.
#
#  (a) the race: four uprobes on dp_prog (one in every 2 MiB window of its
#      text) registered, then each enabled at its own random moment while
#      the deferred worker moves the text (ENORMOUSTEXT_DEFER=20ms,
#      backends thp and auto; dp_prog's text is not congruent, so both
#      copy) — 0-2 ms after the worker checked the windows, which up_race
#      sees through a perf uprobe of its own on the library (see below) —
#      in every other run disabled again at a random moment, then removed:
#      the program must never die (SIGTRAP) and must print what its plain
#      run prints.  Plain runs under the same schedule (3) must all live
#      and count hits: the schedule itself is harmless.
#      FAULT_UPROBE_RUNS (default 10) runs per backend; every run is done,
#      the failures are counted.
#  (b) a uprobe set before the library moves the text: the window that
#      holds it stays (at ENORMOUSTEXT_VERBOSE=2 the library says the text
#      was changed in memory) and the probe keeps firing — at start-up
#      (ENORMOUSTEXT_DEFER=0, probe hit exactly as often as in the plain
#      run) and with the worker (ENORMOUSTEXT_DEFER=500ms, probe set at once:
#      hits still grow after the worker's summary line).
#  (c) informational, never fails on the figures: a uprobe set after the
#      worker copied the window (hits: 0 expected: the copy is no longer
#      the file's), and after a zero-copy move (up_prog, dp_prog linked
#      with enormous.ld, ENORMOUSTEXT_PRIME=1: the window copied, then the
#      file read back huge and swapped in; a mapping of the file again,
#      hits expected) — beside the plain run's hits under the same
#      schedule.
#
# Needs root and tracefs (mounted here if it is not, and unmounted again).
# Every uprobe is in this test's own group (etfault_PID) on copies of the
# programs in the work directory, and all are disabled and removed at the
# end, also on failure.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "not root: uprobe_events is root's"
for t in nm readelf; do command -v $t >/dev/null || skip "no $t (binutils): needed to find the functions' file offsets"; done
UP_RACE=$FAULT_BIN/up_race
UP_PROG=$FAULT_BIN/up_prog
for f in "$UP_RACE" "$UP_PROG"; do [ -x "$f" ] || fail "$f is missing: build the tests first"; done

TR=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -e "$d/uprobe_events" ] && { TR=$d; break; }
done
if [ -z "$TR" ]; then
	grep -qw tracefs /proc/filesystems || skip "no tracefs in this kernel"
	[ -d /sys/kernel/tracing ] || skip "no /sys/kernel/tracing to mount tracefs on"
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || skip "cannot mount tracefs on /sys/kernel/tracing"
	at_exit "umount /sys/kernel/tracing 2>/dev/null"
	TR=/sys/kernel/tracing
	[ -e "$TR/uprobe_events" ] || skip "no uprobe_events in tracefs (kernel without CONFIG_UPROBE_EVENTS)"
fi
G=etfault_$$
R=$WORK/res
mkdir "$R" || exit 2

# ---- uprobes ---------------------------------------------------------------------
# Every uprobe of this test is in group $G; up_cleanup disables and removes
# them all (at exit, whatever happened).
up_cleanup() {
	[ -e "$TR/events/$G/enable" ] && echo 0 >"$TR/events/$G/enable" 2>/dev/null
	local e
	for e in $(sed -n "s|^p:$G/\([^ ]*\) .*|\1|p" "$TR/uprobe_events"); do
		echo "-:$G/$e" >>"$TR/uprobe_events" 2>/dev/null
	done
	if grep -q "^p:$G/" "$TR/uprobe_events"; then
		echo "WARNING [$T]: uprobes left in $TR/uprobe_events: $(grep "^p:$G/" "$TR/uprobe_events" | tr '\n' ' ')"
	fi
}
at_exit up_cleanup
# a run of this test killed before its end (ctest's timeout sends SIGKILL)
# cannot clean up: its group is etfault_PID with PID gone
for g in $(sed -n 's|^p:\(etfault_[0-9]*\)/.*|\1|p' "$TR/uprobe_events" | sort -u); do
	[ -d "/proc/${g#etfault_}" ] && continue
	echo 0 >"$TR/events/$g/enable" 2>/dev/null
	for e in $(sed -n "s|^p:$g/\([^ ]*\) .*|\1|p" "$TR/uprobe_events"); do echo "-:$g/$e" >>"$TR/uprobe_events" 2>/dev/null; done
	note "removed the uprobes of an earlier run that was killed ($g)"
done
# shellcheck disable=SC2034 # LIVE is read by the exit hook
LIVE=()     # programs started in the background and not yet waited for
# shellcheck disable=SC2016 # expanded when the hook runs
at_exit 'for p in "${LIVE[@]}"; do kill "$p" 2>/dev/null; done'
# sym_off BIN SYM — SYM_OFF: the file offset of the function SYM of BIN
# (from its address, through the PT_LOAD segment that holds it); nm runs
# once a file (OFFS; so not in a subshell)
declare -A OFFS=()
sym_off() {
	local v typ off va ms rest sym
	if [ -z "${OFFS["$1|"]:-}" ]; then
		OFFS["$1|"]=1
		while read -r v typ sym; do
			case $typ in t | T) OFFS["$1|$sym"]=$((16#$v)) ;; esac
		done < <(nm "$1" 2>/dev/null)
	fi
	v=${OFFS["$1|$2"]:-}
	[ -n "$v" ] || return 1
	while read -r typ off va _ _ ms rest; do
		[ "$typ" = LOAD ] || continue
		if ((v >= va && v < va + ms)); then
			SYM_OFF=$(printf '0x%x' $((v - va + off)))
			return 0
		fi
	done < <(readelf -lW "$1")
	return 1
}
# up_add NAME BIN SYM — register uprobe $G/NAME at SYM of BIN (not enabled)
up_add() {
	sym_off "$2" "$3" || fail "no function $3 in $2"
	echo "p:$G/$1 $2:$SYM_OFF" >>"$TR/uprobe_events" || fail "cannot register a uprobe ($2:$SYM_OFF) in $TR/uprobe_events"
}
up_enable() { echo "$2" >"$TR/events/$G/$1/enable" || fail "cannot write $2 to $TR/events/$G/$1/enable"; }
up_del() { echo "-:$G/$1" >>"$TR/uprobe_events" || fail "cannot remove the uprobe $G/$1"; }
# up_hits BIN NAME — hits of uprobe NAME on BIN so far
up_hits() { awk -v b="$1" -v n="$2" '$1 == b && $2 == n { h = $3 } END { print h + 0 }' "$TR/uprobe_profile"; }
# huge_of ERR PROG — "X of Y MiB text huge" of PROG's verbose line
huge_of() { sed -n "s|^enormoustext: .*/$2: \([0-9.]*\) of [0-9.]* MiB text huge.*|\1|p" "$1" | head -1; }

. "$(dirname "$0")/defer.bash"     # dp_prog in $D, dp_plain, dp_same, dp_start
DPX=$D/dp_prog
MID=bt_exe_f1024     # inside a whole window at any load address

# ---- does a uprobe fire here at all? ---------------------------------------------------
dp_plain "$R/plain"
[ "$(cat "$R/plain.rc")" = 0 ] || fail "plain dp_prog exited $(cat "$R/plain.rc"): $(head -3 "$R/plain.err")"
up_add mid "$DPX" $MID
up_enable mid 1
h0=$(up_hits "$DPX" mid)
dp_plain "$R/plain-probed"
h_plain=$(($(up_hits "$DPX" mid) - h0))
dp_same "$R/plain-probed" "$R/plain"
[ "$h_plain" -gt 0 ] || skip "a uprobe on $MID, enabled, never fired in the plain run (uprobes do not work here)"

# ---- (b) set before the move ------------------------------------------------------------
# start-up: probe in place from exec
h0=$(up_hits "$DPX" mid)
(cd "$D" && ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_DEFER=0 LD_PRELOAD=$PRE ./dp_prog \
	>"$R/b-ctor.out" 2>"$R/b-ctor.err"; echo $? >"$R/b-ctor.rc")
h_b=$(($(up_hits "$DPX" mid) - h0))
dp_same "$R/b-ctor" "$R/plain"
grep -q 'changed in memory' "$R/b-ctor.err" ||
	fail "(b) probe set before start-up: no window was left alone as changed in memory: $(grep dp_prog: "$R/b-ctor.err")"
[ "$h_b" = "$h_plain" ] || fail "(b) probe set before start-up: $h_b hits, the plain run's $h_plain"
note "(b) probe at $MID before start-up (thp): $(sed -n 's|^enormoustext: .*/dp_prog: ||p' "$R/b-ctor.err"); hits $h_b (plain $h_plain)"
# with the worker: the probe set while it waits
up_enable mid 0
dp_start "$R/b-defer" ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_DEFER=500ms LD_PRELOAD="$PRE" -- ./dp_prog --hold 1500
LIVE=("$P")
up_enable mid 1
grep -q 'dp_prog:' "$R/b-defer.err" && fail "(b) the deferred pass (500 ms) ran before the probe was enabled: the machine is too slow for this check"
wait_line "$R/b-defer.err" '/dp_prog: ' 10 || fail "(b) the worker did not move the text within 10 s: $(head -3 "$R/b-defer.err")"
h1=$(up_hits "$DPX" mid)
sleep 0.4
h2=$(up_hits "$DPX" mid)
wait
LIVE=()
dp_same "$R/b-defer" "$R/plain"
grep -q 'changed in memory' "$R/b-defer.err" ||
	fail "(b) probe set before the worker's pass: no window was left alone as changed in memory: $(grep dp_prog: "$R/b-defer.err")"
[ "$h2" -gt "$h1" ] || fail "(b) probe set before the worker's pass: it stopped firing after the pass ($h1 hits, 0.4 s later $h2)"
note "(b) probe at $MID set while the worker waited (thp, 500 ms): $(sed -n 's|^enormoustext: .*/dp_prog: ||p' "$R/b-defer.err"); hits after the pass: $h1, 0.4 s later $h2"
up_enable mid 0

# ---- (c) set after the move (informational) ----------------------------------------------
# after_hits LABEL BIN [VAR=VALUE...] — BIN --hold 1500 in the background; once
# its text was moved (or at 300 ms, plain), enable a probe at MID for 0.5 s:
# AFTER_HITS; AFTER_LINE: the library's line for BIN
after_hits() {
	local label=$1 bin=$2 name
	shift 2
	name=after_$label
	up_add "$name" "$D/$bin" $MID
	rm -f "$D/pid"
	(cd "$D" && env "$@" "./$bin" --hold 1500 --pidfile "$D/pid" >"$R/c-$label.out" 2>"$R/c-$label.err"; echo $? >"$R/c-$label.rc") &
	wait_line "$D/pid" . 5 || fail "(c) $bin did not start"
	P=$(cat "$D/pid")
	LIVE=("$P")
	if [ $# -gt 0 ]; then
		wait_line "$R/c-$label.err" "/$bin: " 10 || fail "(c) $label: the text was not moved within 10 s: $(head -3 "$R/c-$label.err")"
	else
		sleep 0.3
	fi
	local h0
	h0=$(up_hits "$D/$bin" "$name")
	up_enable "$name" 1
	sleep 0.5
	up_enable "$name" 0
	AFTER_HITS=$(($(up_hits "$D/$bin" "$name") - h0))
	AFTER_LINE=$(sed -n "s|^enormoustext: .*/$bin: ||p" "$R/c-$label.err")
	wait
	LIVE=()
	up_del "$name"
	[ "$(cat "$R/c-$label.rc")" = 0 ] || fail "(c) $label: $bin exited $(cat "$R/c-$label.rc") ($(head -2 "$R/c-$label.err" | tr '\n' ' '))"
}
after_hits plain dp_prog
note "(c) probe at $MID enabled for 0.5 s in a running dp_prog, plain: $AFTER_HITS hits"
after_hits thp dp_prog ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_DEFER=20ms ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE"
note "(c) the same after the worker copied the text (thp): $AFTER_HITS hits (0 expected: the copy is no longer the file's) [$AFTER_LINE]"
cp "$UP_PROG" "$D/" || fail "cannot copy $UP_PROG"
after_hits file up_prog ENORMOUSTEXT_BACKEND=auto ENORMOUSTEXT_PRIME=1 ENORMOUSTEXT_DEFER=20ms ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE"
if grep -q ' [1-9][0-9.]* MiB zero-copy' <<<"$AFTER_LINE"; then
	note "(c) the same after a zero-copy move (up_prog, auto + ENORMOUSTEXT_PRIME=1): $AFTER_HITS hits (> 0 expected: a mapping of the file again) [$AFTER_LINE]"
else
	note "(c) zero-copy not measured: up_prog's text was not moved zero-copy here [$AFTER_LINE]"
fi

# ---- (a) the race ---------------------------------------------------------------------------
# The moment that matters is the worker's: after it checked the windows
# (smaps, /proc/self/pagemap) and before it copied them, a few ms.  To land
# there on a busy machine, up_race counts from the worker's own entry into
# et_verify_file_huge (the step between the checks and the copies) through
# a uprobe perf event of its own on the library (pid-bound: no other
# process is touched; gone with up_race); each probe of the program is
# enabled at its own random moment 0-2 ms after that, and in every other
# run all are disabled again at a random moment 2-12 ms after it.  Without
# that symbol (a library built otherwise), the moments are random in 18-50
# ms after the start (the pass starts ~20 ms in: ENORMOUSTEXT_DEFER=20ms),
# which hits less often.  The plain runs, with no library to trigger on,
# get their enables 20-22 ms after the start.
#
# The first enable of a uprobe on a machine where none is enabled is slow
# (tracing sets itself up, ms): one probe on a file that never runs (a copy
# of up_race) stays enabled throughout, so that every enable costs what it
# costs to write the int3.
RUNS=${FAULT_UPROBE_RUNS:-10}
cp "$UP_RACE" "$D/up_idle" || fail "cannot copy $UP_RACE"
up_add warm "$D/up_idle" main
up_enable warm 1
# four functions 2 MiB apart: every whole 2 MiB window of the text holds
# exactly one of them, wherever the loader puts it
RPROBES=(bt_exe_f0128 bt_exe_f0640 bt_exe_f1152 bt_exe_f1664)
TRIG=()
if [ -r /sys/bus/event_source/devices/uprobe/type ]; then
	for sym in et_verify_file_huge et_pipeline_run; do
		sym_off "$PRE" $sym && { TRIG=(--trigger "$PRE" "$SYM_OFF"); TRIG_SYM=$sym; break; }
	done
fi
if [ ${#TRIG[@]} = 0 ]; then
	note "(a) no uprobe PMU for perf_event_open, or no et_verify_file_huge or et_pipeline_run in $PRE: random moments 18-50 ms after the start instead (hits less often)"
else
	note "(a) moments counted from the worker's entry into $TRIG_SYM (file offset ${TRIG[2]} of $(basename "$PRE"))"
fi
# race LABEL [VAR=VALUE...] — one run: register the probes, run dp_prog
# --hold 200 under up_race with the schedule above, disable and remove
# them.  RACE: "ok", or what went wrong; RACE_HITS; RACE_WHEN: the moments
RACE_N=0
race() {
	local label=$1 p t ats=() times=() trig=() line lo=20000 span=2000
	shift
	RACE_N=$((RACE_N + 1))
	if [ "$label" != plain ]; then
		trig=("${TRIG[@]}")
		if [ ${#trig[@]} -gt 0 ]; then lo=0; else lo=18000 span=32000; fi
	fi
	for p in "${RPROBES[@]}"; do up_add "r_$p" "$DPX" "$p"; done
	for p in "${RPROBES[@]}"; do times+=("$((lo + (RANDOM * 32768 + RANDOM) % span)) $p"); done
	while read -r t p; do ats+=(--at "$t" "$TR/events/$G/r_$p/enable" 1); done < <(printf '%s\n' "${times[@]}" | sort -n)
	if [ $((RACE_N % 2)) = 0 ]; then
		t=$((lo + span + (RANDOM * 32768 + RANDOM) % 10000))
		for p in "${RPROBES[@]}"; do ats+=(--at "$t" "$TR/events/$G/r_$p/enable" 0); done
	fi
	local f=$R/a-$label-$RACE_N
	(cd "$D" && "$UP_RACE" "$f.st" --limit 60 "${trig[@]}" "${ats[@]}" -- env "$@" ./dp_prog --hold 200 >"$f.out" 2>"$f.err")
	RACE_HITS=0
	for p in "${RPROBES[@]}"; do
		up_enable "r_$p" 0
		RACE_HITS=$((RACE_HITS + $(up_hits "$DPX" "r_$p")))
		up_del "r_$p"
	done
	[ -s "$f.st" ] || fail "up_race wrote no status: $(cat "$f.err")"
	grep '^at ' "$f.st" | grep -qv ', ok$' && fail "up_race could not write an enable file: $(grep '^at ' "$f.st" | grep -v ', ok$' | head -2)"
	line=$(head -1 "$f.st")
	if [ "$line" != "exit 0" ] || ! cmp -s "$f.out" "$R/plain.out"; then
		RACE="$line, stdout '$(head -1 "$f.out")'"
	else
		RACE=ok
	fi
	# the moments the writes were made (from the trigger, or the start)
	RACE_WHEN=$(awk '/^trigger: at/ { t0 = $3; trig = sprintf("; windows checked at %.1f ms", $3 / 1000) }
		/^trigger: never/ { trig = "; no trigger" }
		/^at / && $(NF - 1) == "1," { s = s sep sprintf("%.1f", ($8 - t0) / 1000); sep = ","; n++ }
		/^at / && $(NF - 1) == "0," && !d { d = sprintf(", disabled at %.1f", ($8 - t0) / 1000) }
		END { printf "%d enables at %s%s ms%s", n, s, d, trig }' "$f.st")
	[ "$label" != plain ] && [ ${#trig[@]} -gt 0 ] && RACE_WHEN="$RACE_WHEN (from it)"
}
t_start=$SECONDS
for i in 1 2 3; do
	race plain
	[ "$RACE" = ok ] || fail "(a) a PLAIN run under the uprobe schedule went wrong ($RACE_WHEN): $RACE — the schedule itself is not harmless"
	[ "$RACE_HITS" -gt 0 ] || fail "(a) plain run $i: the probes never fired ($RACE_WHEN)"
	note "(a) plain run $i: as plain, $RACE_HITS hits ($RACE_WHEN)"
done
nbad=0
ntot=0
declare -A bad_by=()
for backend in thp auto; do
	bad_by[$backend]=0
	for ((i = 1; i <= RUNS; i++)); do
		race "$backend" ENORMOUSTEXT_BACKEND=$backend ENORMOUSTEXT_DEFER=20ms ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE"
		ntot=$((ntot + 1))
		f=$R/a-$backend-$RACE_N
		what=$(sed -n 's|^enormoustext: .*/dp_prog: ||p' "$f.err")
		if [ "$RACE" = ok ]; then
			note "(a) $backend run $i: as plain, $RACE_HITS hits ($RACE_WHEN) [${what:-no line}]"
		else
			nbad=$((nbad + 1))
			bad_by[$backend]=$((${bad_by[$backend]} + 1))
			echo "FAIL (a) $backend run $i: $RACE ($RACE_WHEN) [${what:-no line}]"
		fi
	done
done
note "(a) $ntot preloaded runs in $((SECONDS - t_start)) s"
if [ "$nbad" != 0 ]; then
	echo "   reproduce: cp $DP DIR; add uprobes at DIR/dp_prog's ${RPROBES[*]} to $TR/uprobe_events;"
	echo "   ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_DEFER=20ms LD_PRELOAD=$PRE DIR/dp_prog --hold 200, and enable them"
	echo "   just after the worker checked the windows (FAULT_KEEP=1 keeps the runs' files: $R/a-*)"
	fail "(a) $nbad of $ntot preloaded runs with uprobes enabled while the worker moved the text did not behave as plain (thp ${bad_by[thp]} of $RUNS, auto ${bad_by[auto]} of $RUNS; plain 0 of 3)"
fi
echo "PASS [$T]: (a) $ntot runs with uprobes enabled while the worker moved the text: all as plain; (b) a probe set before the move keeps its window and fires"
