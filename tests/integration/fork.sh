#!/bin/bash
# integration.fork — after fork the child sees the windows huge and shared
# with the parent, no second copy; a fork+exec'd child runs the library
# afresh.
#
# fork: the child shares the parent's huge text (smaps Shared_*), no
# second copy; an exec'd child runs the library afresh; a library that
# forks in its constructor works.
. "$(dirname "$0")/lib.sh"

fresh "$IT_BIN" fork_test libfork_ctor.so
run lib LD_PRELOAD="$PRE" -- ./fork_test ./libbigtext.so
[ "$RC" -eq 0 ] || fail "fork_test exited $RC: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
