#!/bin/bash
# integration.dlopen.off — a library dlopened with ENORMOUSTEXT=0: nothing
# huge.
#
# Text of libraries loaded after start-up: dlopen (preloaded, or linked
# with -lenormoustext), dlmopen into a new namespace, and a dlopen from
# inside another library's constructor.  dlopen_test also dlcloses and
# checks that nothing of ours is left, then loads the library again.
. "$(dirname "$0")/lib.sh"

dlopen_baseline dlopen_test
run lib ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- ./dlopen_test --expect-none ./libbigtext.so
dlopen_check

pass
