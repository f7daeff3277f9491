#!/bin/bash
# linker.layout.aarch64 — -T enormous.ld + -z max-page-size=0x200000
# -z separate-code, cross-linked for aarch64 (bfd: PIE, non-PIE, shared
# library; lld through -B: PIE, shared library).
. "$(dirname "$0")/lib.sh"

aarch64_links strict "${FLAGS[@]}" "${SCRIPT[@]}"

pass
