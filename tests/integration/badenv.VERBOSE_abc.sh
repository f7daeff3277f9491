#!/bin/bash
# integration.badenv.VERBOSE_abc — ENORMOUSTEXT_VERBOSE=abc is a bad value:
# the program runs right, the defaults apply (text still huge) and stderr is
# exactly one 'enormoustext: ' line naming ENORMOUSTEXT_VERBOSE.
. "$(dirname "$0")/lib.sh"

badenv ENORMOUSTEXT_VERBOSE abc

pass
