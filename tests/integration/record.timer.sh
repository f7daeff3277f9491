#!/bin/bash
# integration.record.timer — ENORMOUSTEXT_RECORD where perf_event_open is
# refused: the CPU-time timer and SIGPROF.
#
# Where perf_event_open is refused (here by a seccomp filter, as in a
# container), ENORMOUSTEXT_RECORD samples with a CPU-time POSIX timer and
# SIGPROF instead.  Every thread: with --spin-thread the main thread
# sleeps in pthread_join and another one spins; the profile must still
# find the level_ functions hottest.  With the text moved too.
. "$(dirname "$0")/lib.sh"

[ -x "$IT_BIN/inspect" ] || skip "inspect was not built (no C++ compiler or no libunwind when configured)"
need_tool
# noperf's filter refuses perf_event_open with EACCES and kills nothing:
# the library may act under it (by default it stands down under any
# seccomp filter: tests/fault/seccomp-kill.sh)
export ENORMOUSTEXT_SECCOMP=trust
D=$WORK/record
mkdir "$D" && cp "$IT_BIN/inspect" "$D/" || exit 2
run probe -- "$IT_BIN/noperf" true
[ "$RC" -eq 77 ] && skip "cannot refuse perf_event_open here: $(head -1 "$ERR")"
[ "$RC" -eq 0 ] || fail "noperf true: exit $RC: $(head -1 "$ERR")"
for mode in off on; do
	for how in --spin --spin-thread; do
		envs=(ENORMOUSTEXT_RECORD="$D/$mode$how-%p.prof" LD_PRELOAD="$PRE")
		[ $mode = off ] && envs+=(ENORMOUSTEXT=0)
		run "$mode$how" "${envs[@]}" -- "$IT_BIN/noperf" ./inspect "$how" 2
		[ "$RC" -eq 0 ] || fail "inspect $how under noperf with ENORMOUSTEXT_RECORD ($mode): exit $RC: $(head -1 "$ERR")"
		stderr_empty "ENORMOUSTEXT_RECORD alone prints nothing, with the timer too"
		prof=$(ls "$D/$mode$how-"*.prof 2>/dev/null | head -1)
		[ -n "$prof" ] || fail "no profile written ($mode $how)"
		grep -q '^# recorded by ENORMOUSTEXT_RECORD (CPU-time timer and SIGPROF)' "$prof" ||
			fail "$mode $how: the profile was not recorded with the timer: $(sed -n 3p "$prof")"
		nsamp=$(sed -n 's/^# recorded .*: \([0-9]*\) samples.*/\1/p' "$prof")
		echo "   $mode $how: $(sed -n 3p "$prof")"
		# up to 2 s of CPU at up to 999 Hz, bounded by the kernel's tick
		# (100 to 1000 Hz) and by what this machine gives the test
		[ "${nsamp:-0}" -ge 30 ] || fail "$mode $how: only ${nsamp:-0} samples in about 2 s of spinning"
		# the spinning thread's samples: nearly all of them in inspect
		# (not in the libc where the main thread waits)
		ins=$(awk '/^object /{o=($3 ~ /\/inspect$/)} o && /^[0-9a-f]+ [0-9]+$/{n+=$2} END{print n+0}' "$prof")
		echo "   $mode $how: $ins of $nsamp samples in inspect"
		[ $((ins * 100)) -ge $((nsamp * 90)) ] || fail "$mode $how: only $ins of $nsamp samples in inspect"
		run "order-$mode$how" -- "$IT_TOOL" profile order --object ./inspect "$prof"
		[ "$RC" -eq 0 ] || fail "the timer's profile has no samples for inspect ($mode $how)"
		head -1 "$OUT" | grep -q '^level_[abcd]$' ||
			fail "$mode $how: the hottest function of inspect is $(head -1 "$OUT"), not a level_ function"
	done
done
# ENORMOUSTEXT_VERBOSE=1 says which way it samples
run verbose ENORMOUSTEXT_RECORD="$D/v.prof" ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" -- \
	"$IT_BIN/noperf" ./inspect --spin 1
grep -q 'ENORMOUSTEXT_RECORD=.*perf_event_open: .*sampling with a CPU-time timer and SIGPROF instead' "$ERR" ||
	fail "verbose: no line says the timer is used: '$(head -3 "$ERR" | tr '\n' '|')'"
# SIGPROF already taken (here ignored, which exec keeps): nothing
# recorded, one line, the program runs as it would
run sigprof ENORMOUSTEXT_RECORD="$D/x.prof" ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- \
	"$IT_BIN/noperf" sh -c "trap '' PROF; exec ./inspect --spin 1"
[ "$RC" -eq 0 ] || fail "SIGPROF ignored: exit $RC"
stderr_one_line "^enormoustext: ENORMOUSTEXT_RECORD=$D/x.prof: cannot sample this process: perf_event_open: .*; the program has its own SIGPROF disposition: nothing recorded" \
	"SIGPROF taken"
[ ! -e "$D/x.prof" ] || fail "SIGPROF taken: a profile was written anyway"
# the program's own ways with signals: a worker that blocks every signal
# spins while the main thread sleeps (each thread has its own timer: the
# sleep is not interrupted); SIGPROF set back to SIG_DFL, or to a handler
# of the program's, later on (the timers stop first: not killed, and the
# program's handler sees none of them)
cp "$IT_BIN/sigprof_test" "$D/" || exit 2
for how in blocked-worker reset own-handler; do
	run "$how" ENORMOUSTEXT_RECORD="$D/$how.prof" ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- \
		"$IT_BIN/noperf" ./sigprof_test "--$how" 2
	[ "$RC" -eq 0 ] || fail "sigprof_test --$how under the timer: exit $RC: $(cat "$OUT" "$ERR" | head -3 | tr '\n' '|')"
	stderr_empty "sigprof_test --$how"
	[ -s "$D/$how.prof" ] || fail "sigprof_test --$how: no profile written"
done
ns=$(awk '/^object /{o=($3 ~ /\/sigprof_test$/)} o && /^[0-9a-f]+ [0-9]+$/{n+=$2} END{print n+0}' "$D/reset.prof")
echo "   reset: $ns samples in sigprof_test before SIGPROF was set back"
[ "$ns" -ge 10 ] || fail "sigprof_test --reset: only $ns samples before the reset"
run reset-verbose ENORMOUSTEXT_RECORD="$D/rv.prof" ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" -- \
	"$IT_BIN/noperf" ./sigprof_test --reset 1
grep -q 'ENORMOUSTEXT_RECORD: the program sets its own SIGPROF disposition: sampling stops here' "$ERR" ||
	fail "verbose: no line says sampling stopped: '$(head -3 "$ERR" | tr '\n' '|')'"
# one file loaded from two paths (one build-id): one object in the
# profile, which stays readable — with the timer and with perf_event_open
mkdir -p "$D/a" "$D/b" && cp "$IT_BIN/libbigtext.so" "$D/a/" && cp "$IT_BIN/libbigtext.so" "$D/b/" || exit 2
bl=$(readelf -n "$D/a/libbigtext.so" | sed -n 's/.*Build ID: *//p')
for how in timer perf; do
	wrap=("$IT_BIN/noperf")
	[ $how = perf ] && wrap=()
	run "twice-$how" ENORMOUSTEXT_RECORD="$D/twice-$how.prof" ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- \
		"${wrap[@]}" ./sigprof_test --dlopen 1 "$D/a/libbigtext.so" "$D/b/libbigtext.so"
	[ "$RC" -eq 0 ] || fail "sigprof_test --dlopen twice ($how): exit $RC"
	[ "$how" = perf ] && grep -q 'perf_event_open cannot sample' "$ERR" && continue
	[ "$(grep -c "^object $bl " "$D/twice-$how.prof")" -eq 1 ] ||
		fail "$how: libbigtext.so loaded from two paths is not exactly one object in the profile"
	run "twice-show-$how" -- "$IT_TOOL" profile show "$D/twice-$how.prof"
	[ "$RC" -eq 0 ] || fail "$how: the profile of a file loaded twice does not parse: $(head -1 "$ERR")"
done
# objects loaded and never run are in the profile, with no counts
# (libunwind: inspect links it and spins elsewhere)
grep -q '^object [0-9a-f]* .*libunwind[^ ]*$' "$D/off--spin-"*.prof ||
	fail "the recorded profile does not list libunwind, loaded and idle"
# `enormoustext record` where perf_event_open is refused: the command runs
# with the library recording each process (moving nothing), and their
# profiles are merged; the command's exit status is the tool's
run tool "TMPDIR=$D" -- "$IT_BIN/noperf" "$IT_TOOL" record -o "$D/tool.prof" -- \
	sh -c './inspect --spin-thread 1; ./inspect --spin 1; exit 3'
[ "$RC" -eq 3 ] || fail "enormoustext record under noperf: exit $RC, not the command's 3"
grep -q '^enormoustext record: perf_event_open: .*sampling with the library.s CPU-time timer' "$ERR" ||
	fail "enormoustext record does not say it falls back: '$(head -3 "$ERR" | tr '\n' '|')'"
# the two inspects (and sh, where it leaves through exit())
grep -qE '^# merged from [23] profile\(s\)' "$D/tool.prof" ||
	fail "expected the profiles of the two inspects merged: '$(sed -n 3p "$D/tool.prof")'"
run tool-order -- "$IT_TOOL" profile order --object ./inspect "$D/tool.prof"
head -1 "$OUT" | grep -q '^level_[abcd]$' ||
	fail "record (timer): the hottest function of inspect is $(head -1 "$OUT"), not a level_ function"
[ -z "$(ls "$D" | grep enormoustext-record)" ] || fail "record left its temporary directory behind"
# a static program cannot load the library: one line, nothing written
printf 'int main(void) { return 0; }\n' >"$D/static.c"
cc -static -o "$D/static" "$D/static.c" || fail "cannot build a static program (cc -static; libc6-dev has libc.a)"
file "$D/static" | grep -q 'statically linked' || fail "cc -static did not give a static program: $(file "$D/static")"
run tool-static -- "$IT_BIN/noperf" "$IT_TOOL" record -o "$D/static.prof" -- ./static
[ "$RC" -eq 1 ] || fail "record of a static program without perf_event_open: exit $RC, not 1"
grep -q "no process of ./static wrote a profile.*nothing recorded" "$ERR" ||
	fail "record of a static program: '$(head -3 "$ERR" | tr '\n' '|')'"
[ ! -e "$D/static.prof" ] || fail "record of a static program wrote a profile"
# a command killed by a signal writes nothing (the library writes at
# exit): its status, and a line that says so; a command not found: 127
run tool-killed -- "$IT_BIN/noperf" "$IT_TOOL" record -o "$D/killed.prof" -- sh -c 'kill -TERM $$'
[ "$RC" -eq 143 ] || fail "record of a command killed by SIGTERM: exit $RC, not 143"
grep -q "sh was killed by signal 15 before it could write its profile" "$ERR" ||
	fail "record of a killed command: '$(head -3 "$ERR" | tr '\n' '|')'"
run tool-missing -- "$IT_BIN/noperf" "$IT_TOOL" record -o "$D/missing.prof" -- ./no-such-command
[ "$RC" -eq 127 ] || fail "record of a missing command: exit $RC, not 127"
[ -z "$(ls "$D" | grep enormoustext-record)" ] || fail "record left a temporary directory behind"

pass
