#!/bin/bash
# tool_run_dry_run — `run --dry-run`: the exact environment and command
# printed (table order, shell quoting, repeated --exclude joined), LD_PRELOAD
# prepended and not duplicated, -v/--verbose, --lib (relative made absolute),
# ENORMOUSTEXT_LIB, --lib over it; a variable set in the environment stays and
# is not printed.
. "$(dirname "$0")/lib.sh"

t dry -- "$TOOL" run --dry-run --backend thp --verbose 2 --exclude '*libc*' --exclude '*ld-linux*' \
	--min-bytes 4M --report "$W/r.json" --enable 1 -- prog a 'b c'
expect_rc 0; expect_no_err
cat >"$W/expected" <<-EOF
LD_PRELOAD=$TT_LIB
ENORMOUSTEXT=1
ENORMOUSTEXT_VERBOSE=2
ENORMOUSTEXT_BACKEND=thp
ENORMOUSTEXT_EXCLUDE='*libc*:*ld-linux*'
ENORMOUSTEXT_MIN_BYTES=4M
ENORMOUSTEXT_REPORT=$W/r.json
exec prog a 'b c'
EOF
diff -u "$W/expected" "$OUT" || fail "--dry-run printed something else than expected (diff above)"

t keep -- LD_PRELOAD="$TT_SMALL" "$TOOL" run -n -- true
expect_rc 0
expect_out "^LD_PRELOAD=$TT_LIB:$TT_SMALL\$" "an existing LD_PRELOAD comes after the library"
t nodup -- LD_PRELOAD="$TT_SMALL $TT_LIB" "$TOOL" run -n -- true
expect_out "^LD_PRELOAD=$TT_LIB:$TT_SMALL\$" "the library is not listed twice"
t v -- "$TOOL" run -n -v -v -- true
expect_out '^ENORMOUSTEXT_VERBOSE=2$' "-v -v"
t vv -- "$TOOL" run -n -v --verbose 3 -v -- true
expect_out '^ENORMOUSTEXT_VERBOSE=3$' "--verbose wins over -v"
t lib -- "$TOOL" run -n --lib "$TT_SMALL" -- true
expect_out "^LD_PRELOAD=$TT_SMALL\$" "--lib"
t rel -- bash -c "cd '$(dirname "$TT_SMALL")' && exec '$TOOL' run -n --lib ./$(basename "$TT_SMALL") -- true"
expect_out "^LD_PRELOAD=$(dirname "$TT_SMALL")/./$(basename "$TT_SMALL")\$" "a relative --lib made absolute"
t envlib -- ENORMOUSTEXT_LIB="$TT_SMALL" "$TOOL" run -n -- true
expect_out "^LD_PRELOAD=$TT_SMALL\$" "ENORMOUSTEXT_LIB"
t libwins -- ENORMOUSTEXT_LIB=/nonexistent.so "$TOOL" run -n --lib "$TT_SMALL" -- true
expect_rc 0 "--lib over ENORMOUSTEXT_LIB"; expect_out "^LD_PRELOAD=$TT_SMALL\$"
t quote -- "$TOOL" run -n --include "a b:it's" -- 'x y'
expect_out "^ENORMOUSTEXT_INCLUDE='a b:it'\\\\''s'\$" "a value with spaces and a quote, shell-quoted"
expect_out "^exec 'x y'\$" "the command, shell-quoted"
# An option given in the environment stays (not printed); options win.
t envkept -- ENORMOUSTEXT_BACKEND=collapse "$TOOL" run -n -- true
grep -q ENORMOUSTEXT_BACKEND "$OUT" && fail "--dry-run printed a variable no option set"
true

pass
