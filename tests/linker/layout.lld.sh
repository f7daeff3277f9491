#!/bin/bash
# linker.layout.lld — -T enormous.ld + -z max-page-size=0x200000
# -z separate-code (lld): PIE, non-PIE, shared library.
. "$(dirname "$0")/lib.sh"

have_lld || skip "no lld here (Debian: apt-get install lld)"
layout_test lld

pass
