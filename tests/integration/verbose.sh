#!/bin/bash
# integration.verbose — ENORMOUSTEXT_VERBOSE=1: exactly one summary line;
# ENORMOUSTEXT_VERBOSE=0: silent.
. "$(dirname "$0")/lib.sh"

std_baseline bigtext
run verbose1 ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
expect_pass "ENORMOUSTEXT_VERBOSE=1"
stderr_one_line "^enormoustext: [0-9]+ of [0-9]+ objects?, .* MiB of .* MiB text on $H_MIB MiB pages" \
	"ENORMOUSTEXT_VERBOSE=1 must print one summary line"
std_baseline bigtext
run verbose0 ENORMOUSTEXT_VERBOSE=0 LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
expect_pass "ENORMOUSTEXT_VERBOSE=0"
stderr_empty "ENORMOUSTEXT_VERBOSE=0"

pass
