#!/bin/bash
# ENORMOUSTEXT_PERFMAP=1 writes /tmp/perf-PID.map by the same rules, stricter
# in /tmp (anyone may put something at that name): nothing there gives a
# new map (0600) naming the moved functions; a stale regular file (left by
# an earlier process with the same pid) is replaced; a FIFO, a symbolic
# link (here to a file of ours), a directory or a character device at the
# name is left alone — one line naming the map and what is there (none at
# ENORMOUSTEXT_VERBOSE=0), the program running as a plain run.
. "$(dirname "$0")/lib.sh"
B=$IT_BIN/bigtext
[ -x "$B" ] || fail "$B was not built"
echo victim >"$WORK/victim"
PIDS=()
at_exit 'for p in "${PIDS[@]}"; do rm -rf "/tmp/perf-$p.map"; done'
# map_run KIND [VAR=VALUE...]: bigtext with the perf map, something of KIND
# put at its name first (the pid is the shell's, which execs bigtext)
map_run() {
	local kind=$1
	shift
	rm -f "$WORK/pid"
	bash -c 'm=/tmp/perf-$$.map; echo $$ >"$1/pid"
		case $2 in
		none) rm -f "$m" ;;
		stale) printf "1 1 stale_entry\n" >"$m" ;;
		fifo) mkfifo "$m" ;;
		link) ln -s "$1/victim" "$m" ;;
		dir) mkdir "$m" ;;
		chr) mknod "$m" c 1 3 ;;
		esac || exit 99
		shift 2
		exec env "$@"' map_run "$WORK" "$kind" ENORMOUSTEXT_PERFMAP=1 LD_PRELOAD="$PRE" "$@" "$B" \
		>"$WORK/$kind.out" 2>"$WORK/$kind.err"
	RC=$?
	PID=$(cat "$WORK/pid")
	PIDS+=("$PID")
	M=/tmp/perf-$PID.map
	ERR=$WORK/$kind.err
	echo "-- $kind: pid $PID, exit $RC"
	[ -s "$ERR" ] && sed 's/^/   stderr| /' "$ERR" | head -3
	[ "$RC" -eq 99 ] && fail "could not put a $kind at $M"
	true
}
verdict() { grep -E '^bigtext: (results|PASS|FAIL)' "$1"; }
umask 022
map_run none
[ "$RC" -eq 0 ] || fail "bigtext with ENORMOUSTEXT_PERFMAP=1: exit $RC"
verdict "$WORK/none.out" >"$WORK/plain.verdict"
[ -f "$M" ] && [ ! -L "$M" ] || fail "no perf map $M written"
[ "$(stat -c %a "$M")" = 600 ] || fail "the new map has mode $(stat -c %a "$M"), not 600"
grep -qE '^[0-9a-f]+ [0-9a-f]+ bt_' "$M" || fail "the map names none of bigtext's functions: $(head -3 "$M" | tr '\n' '|')"
[ -s "$ERR" ] && fail "the library said something: $(head -2 "$ERR")"
echo "   $(wc -l <"$M") functions in $M"
rm -f "$M"
map_run stale
[ "$RC" -eq 0 ] || fail "stale: exit $RC"
grep -q stale_entry "$M" && fail "the stale map was kept: $(head -2 "$M")"
grep -qE '^[0-9a-f]+ [0-9a-f]+ bt_' "$M" || fail "stale: the new map names none of bigtext's functions"
rm -f "$M"
kinds="fifo link dir"
[ "$(id -u)" = 0 ] && kinds+=" chr"
for kind in $kinds; do
	map_run "$kind"
	[ "$RC" -eq 0 ] || fail "$kind: exit $RC"
	verdict "$WORK/$kind.out" | cmp -s - "$WORK/plain.verdict" || fail "$kind: bigtext's output is not that of a plain run"
	[ "$(grep -c . "$ERR")" -eq 1 ] || fail "$kind: $(grep -c . "$ERR") lines on stderr, expected one"
	grep -qF "ENORMOUSTEXT_PERFMAP: cannot write $M: " "$ERR" || fail "$kind: the line does not name $M: $(cat "$ERR")"
	case $kind in
	fifo) [ -p "$M" ] || fail "the FIFO at $M is gone"; want='a FIFO' ;;
	link) [ -L "$M" ] && [ "$(readlink "$M")" = "$WORK/victim" ] || fail "the link at $M changed"
	      [ "$(cat "$WORK/victim")" = victim ] || fail "the file the link names was written"; want='a symbolic link' ;;
	dir) [ -d "$M" ] && [ -z "$(ls -A "$M")" ] || fail "the directory at $M changed"; want='a directory' ;;
	chr) [ -c "$M" ] || fail "the device at $M is gone"; want='a character device' ;;
	esac
	grep -qF "$want" "$ERR" && grep -q 'left alone' "$ERR" || fail "$kind: the line does not say '$want' and 'left alone': $(cat "$ERR")"
	rm -rf "$M"
	map_run "$kind" ENORMOUSTEXT_VERBOSE=0
	[ "$RC" -eq 0 ] || fail "$kind at ENORMOUSTEXT_VERBOSE=0: exit $RC"
	[ -s "$ERR" ] && fail "$kind at ENORMOUSTEXT_VERBOSE=0: $(head -2 "$ERR")"
	rm -rf "$M"
done
for p in "${PIDS[@]}"; do
	left=$(compgen -G "/tmp/.perf-$p.map.*.tmp")
	[ -z "$left" ] || fail "a temporary perf map was left in /tmp: $left"
done
note "the perf map: new and stale ones written, whatever else is at its name left alone"
