#!/bin/bash
# integration.dlmopen.preload — libbigtext.so loaded through
# dlmopen(LM_ID_NEWLM), a new namespace that dl_iterate_phdr does not show:
# huge as with dlopen.
#
# Text of libraries loaded after start-up: dlopen (preloaded, or linked
# with -lenormoustext), dlmopen into a new namespace, and a dlopen from
# inside another library's constructor.  dlopen_test also dlcloses and
# checks that nothing of ours is left, then loads the library again.
. "$(dirname "$0")/lib.sh"

dlopen_baseline dlopen_test
run lib LD_PRELOAD="$PRE" -- ./dlopen_test --dlmopen ./libbigtext.so
dlopen_check

pass
