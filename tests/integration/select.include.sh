#!/bin/bash
# integration.select.include — ENORMOUSTEXT_INCLUDE='*libbigtext*': the
# library huge, the executable not.
. "$(dirname "$0")/lib.sh"

std_baseline bigtext
run lib ENORMOUSTEXT_INCLUDE='*libbigtext*' LD_PRELOAD="$PRE" -- \
	./bigtext --expect-huge-lib 95 --expect-none-exe --kind "$AUTO_KIND" --expect-loaded
expect_pass "ENORMOUSTEXT_INCLUDE='*libbigtext*': libbigtext.so huge, the executable not"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
