#!/bin/bash
# integration.inspect — a C++ program whose functions level_a..d each fill a
# window: the windows are moved; backtrace() and unw_backtrace with dladdr
# name them; C++ exceptions thrown in moved code are caught; with
# ENORMOUSTEXT_PERFMAP=1, /tmp/perf-PID.map names the four functions.
#
# Moved code stays inspectable: C++ exceptions, backtrace()/unw_backtrace
# with dladdr, a perf map (ENORMOUSTEXT_PERFMAP=1), gdb breakpoints, and
# perf report naming functions in moved text.
. "$(dirname "$0")/lib.sh"

inspect_setup
run base -- ./inspect
grep -q 'NOT moved' "$OUT" || fail "without the library the level_ functions should not be moved"
run lib ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_PERFMAP=1 LD_PRELOAD="$PRE" -- ./inspect --perfmap
[ "$RC" -eq 0 ] || fail "$(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"

pass
