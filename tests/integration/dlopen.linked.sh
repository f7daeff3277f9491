#!/bin/bash
# integration.dlopen.linked — the same as dlopen.preload with the library
# linked (-lenormoustext) instead of preloaded.
#
# Text of libraries loaded after start-up: dlopen (preloaded, or linked
# with -lenormoustext), dlmopen into a new namespace, and a dlopen from
# inside another library's constructor.  dlopen_test also dlcloses and
# checks that nothing of ours is left, then loads the library again.
. "$(dirname "$0")/lib.sh"

dlopen_baseline dlopen_test-linked
run lib -- ./dlopen_test-linked ./libbigtext.so
dlopen_check

pass
