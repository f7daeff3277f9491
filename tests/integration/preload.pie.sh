#!/bin/bash
# integration.preload.pie — LD_PRELOAD=libenormoustext.so into the PIE
# bigtext: >= 95% of both objects' eligible text huge, results and bytes
# unchanged, stderr silent.
. "$(dirname "$0")/lib.sh"

std_baseline bigtext
run lib LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
expect_pass "preloaded, >= 95% of both objects' eligible text must be huge"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
