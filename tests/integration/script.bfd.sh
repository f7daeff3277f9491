#!/bin/bash
# integration.script.bfd — bigtext (PIE and not) and libbigtext.so linked with
# -T enormous.ld (bfd) and -lenormoustext: >= 99% of each whole executable
# segment huge.
# (script_test in lib.sh.)
. "$(dirname "$0")/lib.sh"

script_test bfd
pass
