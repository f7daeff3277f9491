#!/bin/bash
# linker.mold.script — mold cannot take the script: it refuses
# enormous.ld, naming the script.
. "$(dirname "$0")/lib.sh"

script_refused mold mold

pass
