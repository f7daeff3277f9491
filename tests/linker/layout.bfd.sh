#!/bin/bash
# linker.layout.bfd — -T enormous.ld + -z max-page-size=0x200000
# -z separate-code (GNU ld): PIE, non-PIE, shared library.
. "$(dirname "$0")/lib.sh"

layout_test bfd

pass
