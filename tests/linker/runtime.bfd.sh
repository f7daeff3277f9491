#!/bin/bash
# linker.runtime.bfd — -T enormous.ld alone (GNU ld), gcc and clang
# drivers, PIE, non-PIE, shared library, -static, -static-pie, run with the
# library (preloaded, or libenormoustext.a for the static ones): the share
# of the executable segment on huge pages, read from smaps, must be 100%.
. "$(dirname "$0")/lib.sh"

runtime_test bfd

pass
