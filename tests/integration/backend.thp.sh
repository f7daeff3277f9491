#!/bin/bash
# integration.backend.thp — ENORMOUSTEXT_BACKEND=thp puts >= 95% of both
# objects' eligible text on anonymous huge pages.
. "$(dirname "$0")/lib.sh"

std_baseline bigtext
run lib ENORMOUSTEXT_BACKEND=thp LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind anon --expect-loaded
expect_pass "ENORMOUSTEXT_BACKEND=thp must put >= 95% of both objects' eligible text on anonymous huge pages"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
