#!/bin/bash
# integration.badenv.ENORMOUSTEXT — ENORMOUSTEXT=maybe is a bad value: the
# program runs right, the defaults apply (text still huge) and stderr is
# exactly one 'enormoustext: ' line naming ENORMOUSTEXT.
. "$(dirname "$0")/lib.sh"

badenv ENORMOUSTEXT maybe

pass
