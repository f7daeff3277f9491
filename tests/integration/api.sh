#!/bin/bash
# integration.api — bigtext-linked --check-api: the public API's figures agree
# with the program's own smaps count (the text huge as in integration.linked).
. "$(dirname "$0")/lib.sh"

fresh "$IT_BIN" bigtext bigtext-linked
baseline -- ./bigtext --expect-none --expect-not-loaded
baseline ENORMOUSTEXT=0 -- ./bigtext-linked --expect-none --expect-loaded
run lib -- ./bigtext-linked --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded --check-api
expect_pass "linked with -lenormoustext"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
