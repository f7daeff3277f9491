#!/bin/bash
# integration.linked — bigtext-linked (-lenormoustext, its constructor runs at
# start-up): >= 95% of both objects' eligible text huge, stderr silent.
# Baselines: plain bigtext, and bigtext-linked with ENORMOUSTEXT=0.
. "$(dirname "$0")/lib.sh"

fresh "$IT_BIN" bigtext bigtext-linked
baseline -- ./bigtext --expect-none --expect-not-loaded
baseline ENORMOUSTEXT=0 -- ./bigtext-linked --expect-none --expect-loaded
run lib -- ./bigtext-linked --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
expect_pass "linked with -lenormoustext"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
