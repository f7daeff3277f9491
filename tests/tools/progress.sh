#!/bin/bash
# tool_progress — the progress line (progress.c): on a terminal, long work
# shows one line on standard error, rewritten in place with a carriage
# return and erased at the end; into a pipe or a file, nothing.
#
# Standard error is made a terminal by tt_tty.py (a pseudo-terminal of 100
# columns; what the command wrote to it, byte for byte, in a file), its
# standard output left a file:
#  - compare: "compare: warm-up", then "compare: pair 1 of 2", "pair 2 of
#    2" with the ratio of the pairs so far, each line starting with \r and
#    no line longer than the terminal less one column; the last bytes erase
#    the line (\r, spaces, \r), and stdout holds the report, no \r;
#  - prime --check and check of two files: "prime: file 1 of 2, ...: A",
#    "file 2 of 2"; an error about a file (one that does not exist) lands
#    on a line of its own, the progress line erased before it;
#  - record --pid --duration: "record: PID N, ... s of 1 s, K samples";
#  - the same commands with standard error a file: no \r and no progress
#    text in it; a single file (check, prime): no line.
. "$(dirname "$0")/lib.sh"

TTY=$TT_SRC/tt_tty.py
command -v python3 >/dev/null || fail "python3 is missing (tt_tty.py makes the terminal)"

# ontty NAME -- COMMAND...: COMMAND with stderr a terminal; stdout in
# $W/NAME.out, what the terminal got in $W/NAME.tty, the status in $RC
ontty() {
	local name=$1
	shift 2
	echo "-- $name (stderr a terminal): $*"
	python3 "$TTY" "$W/$name.tty" 100 -- "$@" >"$W/$name.out" </dev/null
	RC=$?
	echo "   terminal: $(tr '\r' '|' <"$W/$name.tty" | head -c 600)"
	echo "   exit status $RC"
}
# lines NAME: what the terminal got, one line per \r or \n
lines() { tr '\r' '\n' <"$W/$1.tty"; }
# drawn NAME REGEX: a line drawn in place (after a \r) matches REGEX
drawn() {
	grep -qE "$2" <(lines "$1") || fail "$1: no progress line matching /$2/ on the terminal"
	grep -q $'\r' "$W/$1.tty" || fail "$1: the progress line is not drawn in place (no \\r)"
}
# erased NAME: the last drawing is erased (\r, spaces over it, \r); no drawing wider than 99 columns
erased() {
	# the last drawing of the line ("\rWHAT: ...", no \n) is followed by spaces over it and \r
	awk -v RS='\r' '!/\n/ && /^(compare|prime|check|record): / { last = NR } { rec[NR] = $0 }
		END { exit !(last && rec[last + 1] ~ /^ +$/ && length(rec[last + 1]) >= length(rec[last])) }' "$W/$1.tty" ||
		fail "$1: the progress line is not erased at the end"
	# (what lies between two \r with no \n is a drawing of the line)
	awk -v RS='\r' '!/\n/ && length($0) > 99 { bad = 1 } END { exit bad }' "$W/$1.tty" ||
		fail "$1: a progress line wider than the terminal less one column"
}
# quiet FILE: no progress line in FILE (stderr not a terminal)
quiet() {
	! grep -q $'\r' "$1" || fail "$1: a carriage return with stderr not a terminal"
	! grep -qE "(pair|file) [0-9]+ of [0-9]+|compare: warm-up,|record: PID" "$1" || fail "$1: progress text with stderr not a terminal"
}

# --- compare
ontty cmp -- "$TOOL" compare --counters none --runs 2 --budget 0 -- sleep 0.2
[ "$RC" = 0 ] || fail "compare on a terminal: exit status $RC"
drawn cmp "^compare: warm-up, [0-9.]+ s$"
drawn cmp "^compare: pair 1 of 2, [0-9.]+ s$"
drawn cmp "^compare: pair 2 of 2, [0-9.]+ s, ratio [0-9.]+x \(pairs [0-9.]+\.\.[0-9.]+\)$"
erased cmp
grep -q "^verdict: " "$W/cmp.out" || fail "compare on a terminal: no verdict on stdout"
! grep -q $'\r' "$W/cmp.out" || fail "compare on a terminal: a carriage return on stdout"
t cmpfile -- "$TOOL" compare --counters none --runs 2 --budget 0 -- sleep 0.2
expect_rc 0 "compare, stderr a file"
quiet "$ERR"

# --- prime and check of several files
cp "$TT_SMALL" "$W/a.so"
cp "$TT_SMALL" "$W/b.so"
ontty prime -- "$TOOL" prime --check "$W/a.so" "$W/no-such.so" "$W/b.so"
[ "$RC" = 1 ] || fail "prime with a missing file: exit status $RC, expected 1"
drawn prime "^prime: file 1 of 3, [0-9.]+ s: $W/a.so$"
drawn prime "^prime: file 3 of 3, [0-9.]+ s: $W/b.so$"
erased prime
# the error on a line of its own: after it nothing but a newline, before it the line erased
grep -qE $'\r +\renormoustext prime: '"$W/no-such.so: No such file or directory\$" "$W/prime.tty" ||
	fail "prime: the error line is not on a line of its own, the progress line erased before it"
grep -q "^$W/b.so: " "$W/prime.out" || fail "prime on a terminal: no report of b.so on stdout"
t primefile -- "$TOOL" prime --check "$W/a.so" "$W/b.so"
expect_rc 0 "prime, stderr a file"
quiet "$ERR"
ontty primeone -- "$TOOL" prime --check "$W/a.so"
! grep -q "prime: file" "$W/primeone.tty" || fail "prime of one file drew a progress line"

ontty check -- "$TOOL" check "$W/a.so" "$W/b.so"
[ "$RC" = 0 ] || fail "check on a terminal: exit status $RC"
drawn check "^check: file 2 of 2, [0-9.]+ s: $W/b.so$"
erased check
t checkfile -- "$TOOL" check "$W/a.so" "$W/b.so"
expect_rc 0 "check, stderr a file"
quiet "$ERR"
ontty checkone -- "$TOOL" check "$W/a.so"
! grep -q "check: file" "$W/checkone.tty" || fail "check of one file drew a progress line"

# --- record --pid
"$HOLD" --wait >"$W/hold.out" 2>&1 &
HP=$!
PIDS+=("$HP")
wait_line "$W/hold.out" '^ready' 10
ontty rec -- "$TOOL" record -o "$W/p.prof" --pid "$HP" --duration 1
if [ "$RC" = 0 ]; then
	drawn rec "^record: PID $HP, [0-9.]+ s of 1 s, [0-9]+ samples?, 1 thread \(\^C ends it\)$"
	erased rec
	t recfile -- "$TOOL" record -o "$W/q.prof" --pid "$HP" --duration 0.5
	expect_rc 0 "record --pid, stderr a file"
	quiet "$ERR"
else
	grep -q "perf_event_open" "$W/rec.tty" || fail "record --pid failed: $(tr '\r' '|' <"$W/rec.tty")"
	note "record --pid cannot sample here (perf_event_open refused): its line is not checked"
fi

pass
