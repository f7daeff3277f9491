#!/bin/bash
# linker.alone.aarch64 — -T enormous.ld and nothing else, cross-linked for
# aarch64 (bfd: PIE, non-PIE, shared library; lld: PIE, shared library),
# readelf only.
. "$(dirname "$0")/lib.sh"

aarch64_links alone "${SCRIPT[@]}"

pass
