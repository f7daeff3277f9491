#!/bin/bash
# integration.dlopen.preload — a fresh copy of libbigtext.so loaded with
# dlopen after start-up, the library preloaded: every function right, >= 95%
# of its windows huge; dlclose leaves no anonymous r-x mapping where its text
# was; loaded again, huge again.
#
# Text of libraries loaded after start-up: dlopen (preloaded, or linked
# with -lenormoustext), dlmopen into a new namespace, and a dlopen from
# inside another library's constructor.  dlopen_test also dlcloses and
# checks that nothing of ours is left, then loads the library again.
. "$(dirname "$0")/lib.sh"

dlopen_baseline dlopen_test
run lib LD_PRELOAD="$PRE" -- ./dlopen_test ./libbigtext.so
dlopen_check

pass
