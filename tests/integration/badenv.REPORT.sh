#!/bin/bash
# integration.badenv.REPORT — ENORMOUSTEXT_REPORT=/nonexistent-dir/x.json is a
# bad value: the program runs right, the defaults apply (text still huge) and
# stderr is exactly one 'enormoustext: ' line naming ENORMOUSTEXT_REPORT.
. "$(dirname "$0")/lib.sh"

badenv ENORMOUSTEXT_REPORT /nonexistent-dir/x.json

pass
