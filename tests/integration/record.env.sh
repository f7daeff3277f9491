#!/bin/bash
# integration.record.env — ENORMOUSTEXT_RECORD=FILE: the process samples
# itself and writes a profile at exit.
#
# ENORMOUSTEXT_RECORD=FILE: the process samples itself (perf_event_open
# cpu-clock, per CPU, inherited by its threads) and writes a profile at
# exit, with the library moving text or not (here ENORMOUSTEXT=0, and
# with the text moved: samples in moved windows count all the same).
. "$(dirname "$0")/lib.sh"

[ -x "$IT_BIN/inspect" ] || skip "inspect was not built (no C++ compiler or no libunwind when configured)"
need_tool
D=$WORK/record
mkdir "$D" && cp "$IT_BIN/inspect" "$D/" || exit 2
for mode in off on; do
	envs=(ENORMOUSTEXT_RECORD="$D/$mode-%p.prof" LD_PRELOAD="$PRE")
	[ $mode = off ] && envs+=(ENORMOUSTEXT=0)
	run "$mode" "${envs[@]}" -- ./inspect --spin 1
	[ "$RC" -eq 0 ] || fail "inspect --spin with ENORMOUSTEXT_RECORD ($mode): exit $RC"
	grep -q 'perf_event_open cannot sample' "$ERR" && skip "this machine refuses perf_event_open: $(head -1 "$ERR")"
	stderr_empty "ENORMOUSTEXT_RECORD alone prints nothing"
	prof=$(ls "$D/$mode-"*.prof 2>/dev/null | head -1)
	[ -n "$prof" ] || fail "no profile written ($mode)"
	[ "$(ls "$D/$mode-"*.prof | wc -l)" -eq 1 ] || fail "more than one profile for one process ($mode)"
	run "show-$mode" -- "$IT_TOOL" profile show "$prof"
	[ "$RC" -eq 0 ] || fail "the recorded profile is not valid ($mode)"
	run "order-$mode" -- "$IT_TOOL" profile order --object ./inspect "$prof"
	[ "$RC" -eq 0 ] || fail "the recorded profile has no samples for inspect ($mode)"
	head -1 "$OUT" | grep -q '^level_[abcd]$' || fail "$mode: the hottest function of inspect is $(head -1 "$OUT"), not a level_ function"
done
# objects loaded and never run are listed with no counts (libunwind:
# inspect links it and spins elsewhere), by the library and by the tool
grep -q '^object [0-9a-f]* .*libunwind[^ ]*$' "$D/off-"*.prof ||
	fail "ENORMOUSTEXT_RECORD: the profile does not list libunwind, loaded and idle"
run tool -- "$IT_TOOL" record -o "$D/tool.prof" -- ./inspect --spin 1
[ "$RC" -eq 0 ] || fail "enormoustext record inspect --spin: exit $RC"
grep -q '^object [0-9a-f]* .*libunwind[^ ]*$' "$D/tool.prof" ||
	fail "enormoustext record: the profile does not list libunwind, loaded and idle; its objects: $(grep '^object' "$D/tool.prof" | tr '\n' '|')"
# a path that cannot be written: one line, the program runs
run badpath ENORMOUSTEXT_RECORD=/nonexistent-dir/p.prof LD_PRELOAD="$PRE" -- ./inspect --spin 1
[ "$RC" -eq 0 ] || fail "an unwritable ENORMOUSTEXT_RECORD path: exit $RC"
stderr_one_line "^enormoustext: ENORMOUSTEXT_RECORD: cannot write /nonexistent-dir/p.prof" "an unwritable path"

pass
