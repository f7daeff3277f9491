#!/bin/bash
# integration.inspect.perf — perf record attached to a preloaded process
# spinning in moved code: perf report names the level_* functions (from the
# perf map).
#
# Moved code stays inspectable: C++ exceptions, backtrace()/unw_backtrace
# with dladdr, a perf map (ENORMOUSTEXT_PERFMAP=1), gdb breakpoints, and
# perf report naming functions in moved text.
. "$(dirname "$0")/lib.sh"

inspect_setup
command -v perf >/dev/null || skip "perf is not installed"
(cd "$D" && exec env ENORMOUSTEXT_PERFMAP=1 LD_PRELOAD="$PRE" ./inspect --spin 3) >"$D/spin.out" 2>&1 &
spin=$!
wait_line "$D/spin.out" '^ready' 5
pid=$(sed -n 's/^ready //p' "$D/spin.out")
[ -n "$pid" ] || fail "inspect --spin did not start: $(cat "$D/spin.out")"
sleep 0.3
[ -s "/tmp/perf-$pid.map" ] || fail "no /tmp/perf-$pid.map written by the library"
# Attach: perf reads /proc/PID/maps, where the moved windows are
# anonymous, and names them from the perf map.
if ! perf record -q -e cpu-clock -F 499 -p "$pid" -o "$D/perf.data" -- sleep 1 >"$D/record.log" 2>&1; then
	wait "$spin"
	cat "$D/record.log"
	skip "perf record cannot attach here (see above)"
fi
wait "$spin"
rm -f "/tmp/perf-$pid.map.keep"
cp "/tmp/perf-$pid.map" "$D/perf.map" 2>/dev/null
perf report -i "$D/perf.data" --stdio --sort sym 2>/dev/null >"$D/report.txt"
rm -f "/tmp/perf-$pid.map"
grep -E 'level_[abcd]' "$D/report.txt" | head -5 | sed 's/^/   report| /'
grep -qE 'level_[abcd]' "$D/report.txt" || { sed 's/^/   report| /' "$D/report.txt" | head -30;
	fail "perf report does not name the functions in moved text"; }

pass
