#!/bin/bash
# linker.alone.aarch64_16k — enormous-32m.ld (made from enormous.ld by the
# build), aarch64: the same checks as alone.aarch64 for 32 MiB.
. "$(dirname "$0")/lib.sh"

# 16 KiB pages: the PMD is 32 MiB, every check is for 32 MiB windows
[ -f "${LT_SCRIPT_32M:-}" ] || { echo "$T: LT_SCRIPT_32M (${LT_SCRIPT_32M:-unset}) is not a file"; exit 2; }
grep -q 'ALIGN(0x2000000)' "$LT_SCRIPT_32M" || fail "$LT_SCRIPT_32M does not align to 32 MiB"
H=$((0x2000000))
aarch64_links alone -Wl,-T,"$LT_SCRIPT_32M"

pass
