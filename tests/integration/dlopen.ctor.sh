#!/bin/bash
# integration.dlopen.ctor — a library whose constructor dlopens libbigtext.so:
# no deadlock, the inner library huge.
#
# Text of libraries loaded after start-up: dlopen (preloaded, or linked
# with -lenormoustext), dlmopen into a new namespace, and a dlopen from
# inside another library's constructor.  dlopen_test also dlcloses and
# checks that nothing of ours is left, then loads the library again.
. "$(dirname "$0")/lib.sh"

dlopen_baseline dlopen_test
run lib LD_PRELOAD="$PRE" -- ./dlopen_test --ctor ./libctor_dlopen.so ./libbigtext.so
dlopen_check

pass
