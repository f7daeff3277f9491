#!/bin/bash
# integration.badenv.BACKEND — ENORMOUSTEXT_BACKEND=bogus is a bad value: the
# program runs right, the defaults apply (text still huge) and stderr is
# exactly one 'enormoustext: ' line naming ENORMOUSTEXT_BACKEND.
. "$(dirname "$0")/lib.sh"

badenv ENORMOUSTEXT_BACKEND bogus

pass
