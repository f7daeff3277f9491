#!/bin/bash
# integration.dlopen.exclude — a library dlopened with
# ENORMOUSTEXT_EXCLUDE='*libbigtext*': nothing huge.
#
# Text of libraries loaded after start-up: dlopen (preloaded, or linked
# with -lenormoustext), dlmopen into a new namespace, and a dlopen from
# inside another library's constructor.  dlopen_test also dlcloses and
# checks that nothing of ours is left, then loads the library again.
. "$(dirname "$0")/lib.sh"

dlopen_baseline dlopen_test
run lib ENORMOUSTEXT_EXCLUDE='*libbigtext*' LD_PRELOAD="$PRE" -- ./dlopen_test --expect-none ./libbigtext.so
dlopen_check

pass
