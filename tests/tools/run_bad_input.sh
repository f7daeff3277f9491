#!/bin/bash
# tool_run_bad_input — `run`'s bad input: unknown option, a bad value for each
# kind of option (the library's parser; the message lists what it accepts), a
# missing value, no command, a report in a missing directory, --lib or
# ENORMOUSTEXT_LIB missing, not ELF, a directory; --profile missing or a
# directory (checked before COMMAND runs); --profile refused while the
# library has no ENORMOUSTEXT_PROFILE (mapped when it has).
. "$(dirname "$0")/lib.sh"

t unknown -- "$TOOL" run --frobnicate -- true
expect_bad 2 "an unknown option" "unknown option '--frobnicate'"
t backend -- "$TOOL" run --backend bogus -- true
expect_bad 2 "a bad --backend" "'--backend bogus' is not valid: it accepts auto, file, thp, collapse, hugetlb"
t verbose -- "$TOOL" run --verbose 9 -- true
expect_bad 2 "a bad --verbose" "'--verbose 9' is not valid"
t size -- "$TOOL" run --min-bytes 12Q -- true
expect_bad 2 "a bad --min-bytes" "'--min-bytes 12Q' is not valid"
t enable -- "$TOOL" run --enable maybe -- true
expect_bad 2 "a bad --enable" "'--enable maybe' is not valid"
t noval -- "$TOOL" run --backend
expect_bad 2 "--backend without a value" "'--backend' needs a value"
t nocmd -- "$TOOL" run --backend thp
expect_bad 2 "no command" "no command to run"
t nocmd2 -- "$TOOL" run
expect_bad 2 "no command" "no command to run"
t report -- "$TOOL" run --report /nonexistent-dir/r.json -- true
expect_bad 1 "a report in a missing directory" "/nonexistent-dir"
t nolib -- "$TOOL" run --lib "$W/missing.so" -- true
expect_bad 1 "--lib that does not exist" "--lib $W/missing.so: No such file or directory"
t envnolib -- ENORMOUSTEXT_LIB="$W/missing.so" "$TOOL" run -- true
expect_bad 1 "ENORMOUSTEXT_LIB that does not exist" "ENORMOUSTEXT_LIB=$W/missing.so: No such file"
echo "not a library" >"$W/text.so"
t notelf -- "$TOOL" run --lib "$W/text.so" -- true
expect_bad 1 "--lib that is not ELF" "text.so: not an ELF shared library"
t dirlib -- "$TOOL" run --lib "$W" -- true
expect_bad 1 "--lib that is a directory" "not a regular file"
# --profile maps onto ENORMOUSTEXT_PROFILE where the library's table has it;
# a library without it is refused, and said so.
[ -r "$OPTIONS_C" ] || fail "cannot read the library's option table $OPTIONS_C"
if grep -q 'ENORMOUSTEXT_PROFILE' "$OPTIONS_C"; then
	# checked up front (--help says it must be readable): a missing one is
	# an error before COMMAND runs, not a warning of the library's after
	t profile_missing -- "$TOOL" run --profile "$W/p" -- touch "$W/ran"
	expect_bad 1 "--profile that does not exist" "^enormoustext run: --profile $W/p: No such file or directory\$"
	[ -e "$W/ran" ] && fail "run --profile MISSING ran the command"
	t profile_dir -- "$TOOL" run -n --profile "$W" -- true
	expect_bad 1 "--profile that is a directory" "--profile $W: not a regular file"
	: >"$W/p"
	t profile -- "$TOOL" run -n --profile "$W/p" -- true
	expect_rc 0; expect_out "^ENORMOUSTEXT_PROFILE=$W/p\$"
else
	t profile -- "$TOOL" run --profile "$W/p" -- true
	expect_bad 2 "--profile without library support" "'--profile': this libenormoustext has no profile support"
fi

pass
