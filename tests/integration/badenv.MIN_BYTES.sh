#!/bin/bash
# integration.badenv.MIN_BYTES — ENORMOUSTEXT_MIN_BYTES=12Q is a bad value:
# the program runs right, the defaults apply (text still huge) and stderr is
# exactly one 'enormoustext: ' line naming ENORMOUSTEXT_MIN_BYTES.
. "$(dirname "$0")/lib.sh"

badenv ENORMOUSTEXT_MIN_BYTES 12Q

pass
