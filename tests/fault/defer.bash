# defer.bash — what the fault.defer-* tests share (source after lib.sh).
#   dp_plain OUT ARGS...          run dp_prog without the library: OUT.out, OUT.err, OUT.rc
#   dp_lib OUT DEFER ARGS...      the same preloaded, ENORMOUSTEXT_DEFER=DEFER, VERBOSE=1
#   dp_same A B                   A's stdout and exit status are B's (else fail)
#   huge_kb PID                   kB of dp_prog's own text on huge pages, from its smaps
#   dp_start OUT [VAR=VALUE...] -- CMD...   CMD in the background (see below): P its pid
DP=$FAULT_BIN/dp_prog
[ -x "$DP" ] || fail "$DP is missing: build the tests first"
fresh "$DP"
dp_plain() {
	local out=$1
	shift
	(cd "$D" && ./dp_prog "$@" >"$out.out" 2>"$out.err")
	echo $? >"$out.rc"
}
dp_lib() {
	local out=$1 defer=$2
	shift 2
	(cd "$D" && ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=$defer LD_PRELOAD=$PRE ./dp_prog "$@" >"$out.out" 2>"$out.err")
	echo $? >"$out.rc"
}
dp_same() {
	cmp -s "$1.out" "$2.out" && [ "$(cat "$1.rc")" = "$(cat "$2.rc")" ] ||
		fail "$(basename "$1") differs from $(basename "$2"): exit $(cat "$1.rc") vs $(cat "$2.rc"); stdout: $(diff "$2.out" "$1.out" | head -5 | tr '\n' ' '); stderr: $(head -3 "$1.err" | tr '\n' ' ')"
}
huge_kb() {
	awk -v exe="$D/dp_prog" '
		/^[0-9a-f]+-[0-9a-f]+ / { mine = ($6 == exe) || ($6 == "" && prev_mine); if ($6 != "") prev_mine = mine; next }
		mine && /^(AnonHugePages|FilePmdMapped):/ { kb += $2 }
		END { print kb + 0 }' "/proc/$1/smaps"
}
# dp_start OUT [VAR=VALUE...] -- COMMAND...   COMMAND (dp_prog, or a wrapper
# of it) in $D in the background, with --pidfile added: OUT.out, OUT.err,
# OUT.rc once it ends (wait); P is its pid once main runs.
dp_start() {
	local out=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	rm -f "$D/pid"
	(cd "$D" && env "${envs[@]}" "$@" --pidfile "$D/pid" >"$out.out" 2>"$out.err"; echo $? >"$out.rc") &
	wait_until 1 test -s "$D/pid" || true
	P=$(cat "$D/pid" 2>/dev/null)
	[ -n "$P" ] || fail "dp_prog did not start: $(head -3 "$out.err" 2>/dev/null)"
}
