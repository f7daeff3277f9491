#!/bin/bash
# integration.preload.nopie — LD_PRELOAD=libenormoustext.so into bigtext-nopie
# (-no-pie): >= 95% of both objects' eligible text huge, results and bytes
# unchanged, stderr silent.
. "$(dirname "$0")/lib.sh"

std_baseline bigtext-nopie
run lib LD_PRELOAD="$PRE" -- ./bigtext-nopie --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
expect_pass "preloaded, >= 95% of both objects' eligible text must be huge"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
