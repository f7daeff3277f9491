#!/bin/bash
# integration.select.exclude — ENORMOUSTEXT_EXCLUDE='*libbigtext*': the
# executable huge, the library not.
. "$(dirname "$0")/lib.sh"

std_baseline bigtext
run lib ENORMOUSTEXT_EXCLUDE='*libbigtext*' LD_PRELOAD="$PRE" -- \
	./bigtext --expect-huge-exe 95 --expect-none-lib --kind "$AUTO_KIND" --expect-loaded
expect_pass "ENORMOUSTEXT_EXCLUDE='*libbigtext*': the executable huge, libbigtext.so not"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
