#!/bin/bash
# linker.alternative.bfd — the flag-only layout, without the script
# (GNU ld: -z max-page-size=0x200000 -z separate-code).
. "$(dirname "$0")/lib.sh"

alternative_test bfd "${FLAGS[@]}"

pass
