#!/bin/bash
# env_unknown — a misspelt ENORMOUSTEXT* variable gets one warning line
# naming it and the nearest real name, unless ENORMOUSTEXT_VERBOSE=0; the
# project's own other variables (ENORMOUSTEXT_LIB) get none; the program
# runs as plain either way.
. "$(dirname "$0")/lib.sh"
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
cd "$D" || exit 2
./bigtext --expect-none --expect-not-loaded >plain.out 2>plain.err || fail "the plain run failed"
base=$(grep '^bigtext: results:' plain.out)
check() {   # LABEL EXPECTED-LINES ERE VAR=VALUE...
	local label=$1 lines=$2 ere=$3 rc
	shift 3
	env "$@" LD_PRELOAD="$PRE" ./bigtext --expect-loaded >"$label.out" 2>"$label.err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "$label: bigtext exited $rc"
	[ "$(grep '^bigtext: results:' "$label.out")" = "$base" ] || fail "$label: results differ from the plain run"
	[ "$(grep -c '' "$label.err")" -eq "$lines" ] ||
		fail "$label: expected $lines line(s) on stderr, got: $(head -3 "$label.err" | tr '\n' '|')"
	[ -z "$ere" ] || grep -qE "$ere" "$label.err" || fail "$label: '$(cat "$label.err")' does not match /$ere/"
	note "$label: ok ($(head -1 "$label.err"))"
}
check verbos 1 '^enormoustext: ENORMOUSTEXT_VERBOS is not a variable.*did you mean ENORMOUSTEXT_VERBOSE\?' ENORMOUSTEXT_VERBOS=1
check backnd 1 'ENORMOUSTEXT_BACKND .*ENORMOUSTEXT_BACKEND' ENORMOUSTEXT_BACKND=thp
check lower 1 'ENORMOUSTEXT_min_bytes .*ENORMOUSTEXT_MIN_BYTES' ENORMOUSTEXT_min_bytes=1
check silenced 0 '' ENORMOUSTEXT_VERBOS=1 ENORMOUSTEXT_VERBOSE=0
check lib 0 '' ENORMOUSTEXT_LIB=/nowhere/libenormoustext.so
check two 2 'ENORMOUSTEXT_PROFIL .*ENORMOUSTEXT_PROFILE' ENORMOUSTEXT_PROFIL=x ENORMOUSTEXT_REPROT=y
