#!/bin/bash
# linker.gold.script — gold (no INSERT) cannot take the script: it refuses
# enormous.ld, naming the script.
. "$(dirname "$0")/lib.sh"

script_refused gold binutils

pass
