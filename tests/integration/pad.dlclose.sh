#!/bin/bash
# integration.pad.dlclose — a library padded at run time, dlclosed: nothing of
# ours left, loaded again.
#
# A library padded at run time, then dlclosed: no mapping of ours left
# (the padding lies beyond the loader's own span), and loading it again
# works.
. "$(dirname "$0")/lib.sh"

layout_fresh flags-bfd bigtext
cp "$IT_BIN/dlopen_test" "$D/" || fail "cannot copy dlopen_test"
run baseline ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- ./dlopen_test --expect-none ./libbigtext.so
[ "$RC" -eq 0 ] || fail "baseline: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
run lib LD_PRELOAD="$PRE" -- ./dlopen_test --expect-padded ./libbigtext.so
[ "$RC" -eq 0 ] || fail "$(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
