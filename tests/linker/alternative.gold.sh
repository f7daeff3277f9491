#!/bin/bash
# linker.alternative.gold — the flag-only layout, without the script
# (gold: -z max-page-size=0x200000 alone).
. "$(dirname "$0")/lib.sh"

command -v ld.gold >/dev/null || skip "no gold here (Debian: binutils)"
alternative_test gold -Wl,-z,max-page-size=0x200000   # gold has no -z separate-code

pass
