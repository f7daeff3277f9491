#!/bin/bash
# integration.select.min_bytes — ENORMOUSTEXT_MIN_BYTES=1G: nothing huge; 4M:
# both objects huge.
. "$(dirname "$0")/lib.sh"

std_baseline bigtext
run min-1G ENORMOUSTEXT_MIN_BYTES=1G LD_PRELOAD="$PRE" -- ./bigtext --expect-none --expect-loaded
expect_pass "ENORMOUSTEXT_MIN_BYTES=1G: no object has 1 GiB of text, nothing may go huge"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"
# Both objects have at least 6 MiB eligible: a 4M minimum keeps them.
std_baseline bigtext
run min-4M ENORMOUSTEXT_MIN_BYTES=4M LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
expect_pass "ENORMOUSTEXT_MIN_BYTES=4M: both objects have more eligible text than that"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
