#!/bin/bash
# tool_run_exec — `run` runs the program: its exit status, the variables it
# really gets, PATH lookup, exec not fork (same PID), 127 not found, 126 not
# executable.
. "$(dirname "$0")/lib.sh"

t status -- "$TOOL" run -- "$HOLD" --exit 7
expect_rc 7 "the command's exit status"
t status0 -- "$TOOL" run --enable 0 -- "$HOLD"
expect_rc 0
t env -- "$TOOL" run --backend collapse --include '*tt_hold*' --min-bytes 1K -- "$HOLD" \
	--print-env ENORMOUSTEXT_BACKEND --print-env ENORMOUSTEXT_INCLUDE \
	--print-env ENORMOUSTEXT_MIN_BYTES --print-env LD_PRELOAD --print-env ENORMOUSTEXT_REPORT
expect_rc 0
expect_out '^ENORMOUSTEXT_BACKEND=collapse$'
expect_out '^ENORMOUSTEXT_INCLUDE=\*tt_hold\*$'
expect_out '^ENORMOUSTEXT_MIN_BYTES=1K$'
expect_out "^LD_PRELOAD=$TT_LIB\$"
expect_out '^ENORMOUSTEXT_REPORT unset$'
t path -- PATH="$TT_BIN:$PATH" "$TOOL" run -- tt_hold --exit 3
expect_rc 3 "a command found through PATH"
# exec, not fork: the program has the command's process id.
start_hold p "$TOOL" run -- "$HOLD"
stop_hold p "$HPID"
t notfound -- "$TOOL" run -- "$W/no-such-program"
expect_bad 127 "a command that does not exist" "no-such-program: command not found"
printf 'x' >"$W/notexec"
chmod 644 "$W/notexec"
t notexec -- "$TOOL" run -- "$W/notexec"
expect_bad 126 "a file that is not executable" "notexec: Permission denied"

pass
