#!/bin/bash
# ENORMOUSTEXT_RECORD with its CPU-time timers (perf_event_open refused by
# noperf's seccomp filter): a forked child starts with none of the parent's
# timer slots, so the forking thread ending in the child deletes nothing —
# not the timers the child made itself, whose ids are the ones the parent's
# timers had.  Forked from the main thread and from another thread; the
# parent's own profile is written as before.
. "$(dirname "$0")/lib.sh"
P=$FAULT_BIN/record_fork
[ -x "$P" ] || fail "$P was not built"
"$IT_BIN/noperf" true >"$WORK/probe.out" 2>&1
rc=$?
[ $rc -eq 77 ] && skip "cannot refuse perf_event_open here: $(head -1 "$WORK/probe.out")"
[ $rc -eq 0 ] || fail "noperf true: exit $rc: $(head -1 "$WORK/probe.out")"
for how in main thread; do
	# without the library: what the program does by itself
	"$P" "$how" >"$WORK/plain-$how.out" 2>&1 || fail "record_fork $how alone: exit $?: $(cat "$WORK/plain-$how.out")"
	env ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_RECORD="$WORK/$how-%p.prof" ENORMOUSTEXT=0 LD_PRELOAD="$PRE" \
		"$IT_BIN/noperf" "$P" "$how" >"$WORK/$how.out" 2>"$WORK/$how.err"
	rc=$?
	sed 's/^/   | /' "$WORK/$how.out" "$WORK/$how.err"
	[ $rc -eq 0 ] || fail "fork from the $how thread while recording with the timers: exit $rc: $(tr '\n' '|' <"$WORK/$how.out")"
	[ -s "$WORK/$how.err" ] && fail "fork from the $how thread: the library said: $(head -2 "$WORK/$how.err")"
	profs=("$WORK/$how-"*.prof)
	[ ${#profs[@]} -eq 1 ] && [ -f "${profs[0]}" ] || fail "$how: expected the parent's profile alone, found: ${profs[*]}"
	grep -q '^# recorded by ENORMOUSTEXT_RECORD (CPU-time timer and SIGPROF)' "${profs[0]}" ||
		fail "$how: the profile was not recorded with the timer: $(sed -n 3p "${profs[0]}")"
done
note "the child's own timers survive its forking thread's end, forked from main and from a thread"
