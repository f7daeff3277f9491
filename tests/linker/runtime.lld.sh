#!/bin/bash
# linker.runtime.lld — the same as runtime.bfd, linked by lld.
. "$(dirname "$0")/lib.sh"

have_lld || skip "no lld here (Debian: apt-get install lld)"
runtime_test lld

pass
