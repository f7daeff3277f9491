#!/bin/bash
# linker.alternative.mold — the flag-only layout, without the script
# (mold: -z max-page-size=0x200000 -z separate-code).
. "$(dirname "$0")/lib.sh"

command -v ld.mold >/dev/null || skip "no mold here (Debian: apt-get install mold)"
alternative_test mold "${FLAGS[@]}"

pass
