#!/bin/bash
# integration.off — ENORMOUSTEXT=0: nothing huge, silent; with
# ENORMOUSTEXT_VERBOSE=2 one line saying so.
. "$(dirname "$0")/lib.sh"

std_baseline bigtext
run off ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- ./bigtext --expect-none --expect-loaded
expect_pass "with ENORMOUSTEXT=0 the library must do nothing"
stderr_empty "ENORMOUSTEXT=0"
run off-verbose ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" -- ./bigtext --expect-none --expect-loaded
expect_pass "with ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=2 the library must do nothing"
stderr_one_line '^enormoustext: .*ENORMOUSTEXT=0' \
	"with ENORMOUSTEXT=0 ENORMOUSTEXT_VERBOSE=2 the library must say, in one line, that it is off (ENORMOUSTEXT=0)"

pass
