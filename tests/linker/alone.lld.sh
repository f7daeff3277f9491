#!/bin/bash
# linker.alone.lld — -T enormous.ld and nothing else (lld): PIE, non-PIE,
# shared library, -static, -static-pie.
. "$(dirname "$0")/lib.sh"

have_lld || skip "no lld here (Debian: apt-get install lld)"
alone_test lld

pass
