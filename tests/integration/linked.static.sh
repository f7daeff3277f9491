#!/bin/bash
# integration.linked.static — linked with libenormoustext.a: the constructor
# runs, the text holding the library's own code goes huge.
#
# libenormoustext.a inside the executable: no separate object to see, so
# ENORMOUSTEXT=0 is the baseline for the executable.
. "$(dirname "$0")/lib.sh"

fresh "$IT_BIN" bigtext bigtext-static
baseline -- ./bigtext --expect-none --expect-not-loaded
baseline ENORMOUSTEXT=0 -- ./bigtext-static --expect-none
run lib -- ./bigtext-static --expect-huge 95 --kind "$AUTO_KIND" --check-api
expect_pass "linked with libenormoustext.a"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
