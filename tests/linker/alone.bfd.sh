#!/bin/bash
# linker.alone.bfd — -T enormous.ld and nothing else (GNU ld): PIE,
# non-PIE, shared library, -static, -static-pie; also a PIE with bfd's
# second PLT (.plt.sec, -z ibtplt) inside the aligned segment.
. "$(dirname "$0")/lib.sh"

alone_test bfd ibt

pass
