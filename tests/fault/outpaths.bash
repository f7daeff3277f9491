# outpaths.bash — what the tests/fault/outpaths-*.sh tests share (source it
# after lib.sh).  Each test points every program that writes a file the
# user names at one kind of target (a device, a FIFO, a symlink, ...):
#
#   report       ENORMOUSTEXT_REPORT=TARGET, the library preloaded into bigtext
#   record       ENORMOUSTEXT_RECORD=TARGET, the same (ENORMOUSTEXT=0)
#   tool-record  enormoustext record -o TARGET -- bigtext
#   merge        enormoustext profile merge -o TARGET A B
#   svg          enormoustext profile show --svg TARGET A
#   perfmap      enormoustext perfmap -o TARGET PID (a process whose text the
#                library moved)
# (the command's writers only where the command was built).
#
#   op_setup              inputs, a baseline run of each writer into a new
#                         regular file ($WORK/base), the perfmap process
#   op_run W TARGET [VAR=VALUE...]
#                         run writer W, its output at TARGET, with the extra
#                         environment: sets RC, OUT (stdout, TARGET written as
#                         @OUT@), ERR (stderr)
#   op_same W             RC and OUT are the baseline's (a plain run)
#   op_content W FILE     FILE holds what W writes (the baseline's bytes
#                         where W's output does not change from run to run)
#   op_refused W TARGET RE [before]
#                         W ran as a plain run would, except that it
#                         could not write TARGET: the library's writers keep
#                         the program's status and output, say so in one
#                         line naming TARGET and matching RE, and nothing at
#                         ENORMOUSTEXT_VERBOSE=0; the command exits 1 with
#                         one line naming TARGET (never a temporary) and RE;
#                         with `before`, `record` refused TARGET before it
#                         ran its command (bigtext printed nothing)
#   op_entries DIR N      DIR holds exactly N entries (no temporary left)
#   op_is_lib W           W is one of the library's writers

OP_BIG=$IT_BIN/bigtext
OP_TOOL=${FAULT_TOOL:-}
[ -x "$OP_BIG" ] || fail "$OP_BIG was not built (target et_it_bigtext)"
OP_WRITERS="report record"
if [ -n "$OP_TOOL" ] && [ -x "$OP_TOOL" ]; then
	OP_WRITERS+=" tool-record merge svg perfmap"
else
	note "the command was not built ($OP_TOOL): only the library's writers"
fi
OP_HOLD_PID=

op_is_lib() { [ "$1" = report ] || [ "$1" = record ]; }

op_setup() {
	mkdir -p "$WORK/in" "$WORK/base" || exit 2
	printf 'enormoustext-profile 1\ngranule 64\nobject %s /bin/a\n1000 5\n2040 7\nobject %s /lib/b.so\n40 1\n' \
		0123456789abcdef0123456789abcdef01234567 89abcdef0123456789abcdef0123456789abcdef >"$WORK/in/a.prof"
	printf 'enormoustext-profile 1\ngranule 64\nobject %s /bin/a\n1000 3\nobject %s /lib/c.so\n80 2\n' \
		0123456789abcdef0123456789abcdef01234567 fedcba9876543210fedcba9876543210fedcba98 >"$WORK/in/b.prof"
	case " $OP_WRITERS " in
	*" perfmap "*)
		[ -x "$FAULT_BIN/outpaths_hold" ] || fail "$FAULT_BIN/outpaths_hold was not built"
		env LD_PRELOAD="$PRE" "$FAULT_BIN/outpaths_hold" >"$WORK/hold.out" 2>"$WORK/hold.err" </dev/null &
		OP_HOLD_PID=$!
		at_exit "kill $OP_HOLD_PID 2>/dev/null; wait $OP_HOLD_PID 2>/dev/null"
		wait_line "$WORK/hold.out" '^ready ' 10 "$OP_HOLD_PID"
		grep -q "^ready $OP_HOLD_PID\$" "$WORK/hold.out" ||
			fail "outpaths_hold did not start: $(cat "$WORK/hold.out" "$WORK/hold.err")"
		;;
	esac
	local w
	for w in $OP_WRITERS; do
		op_run "$w" "$WORK/base/$w"
		if [ "$w" = perfmap ] && grep -q 'has no moved text' "$OUT"; then
			note "the library moved no text of outpaths_hold here: perfmap -o is not exercised"
			OP_WRITERS=${OP_WRITERS/ perfmap/}
			continue
		fi
		[ -f "$WORK/base/$w" ] ||
			fail "baseline $w: nothing written to a new file (exit $RC): $(head -3 "$ERR" | tr '\n' '|')"
		cp "$OUT" "$WORK/base/$w.stdout"
		echo "$RC" >"$WORK/base/$w.rc"
		case $w in
		merge | svg | perfmap) [ "$RC" = 0 ] || fail "baseline $w: exit $RC: $(head -3 "$ERR")" ;;
		esac
		op_content "$w" "$WORK/base/$w"
	done
	note "writers: $OP_WRITERS"
}

# The text with every occurrence of $2 written as @OUT@ (no regex).
op_subst() {
	awk -v t="$2" 'BEGIN { n = length(t) }
		{ s = ""; while (n && (i = index($0, t)) > 0) { s = s substr($0, 1, i - 1) "@OUT@"; $0 = substr($0, i + n) } print s $0 }' "$1"
}

OP_N=0
op_run() {
	local w=$1 t=$2
	shift 2
	OP_N=$((OP_N + 1))
	OUT=$WORK/run$OP_N.out
	ERR=$WORK/run$OP_N.err
	local cmd
	case $w in
	report) cmd=(env "ENORMOUSTEXT_REPORT=$t" "LD_PRELOAD=$PRE" "$@" "$OP_BIG") ;;
	record) cmd=(env "ENORMOUSTEXT_RECORD=$t" ENORMOUSTEXT=0 "LD_PRELOAD=$PRE" "$@" "$OP_BIG") ;;
	tool-record) cmd=(env "$@" "$OP_TOOL" record -o "$t" -- "$OP_BIG") ;;
	merge) cmd=(env "$@" "$OP_TOOL" profile merge -o "$t" "$WORK/in/a.prof" "$WORK/in/b.prof") ;;
	svg) cmd=(env "$@" "$OP_TOOL" profile show --svg "$t" "$WORK/in/a.prof") ;;
	perfmap) cmd=(env "$@" "$OP_TOOL" perfmap -o "$t" "$OP_HOLD_PID") ;;
	*) fail "no writer $w" ;;
	esac
	timeout 60 "${cmd[@]}" >"$OUT.raw" 2>"$ERR" </dev/null
	RC=$?
	[ "$RC" -eq 124 ] && fail "$w into $t: still running after 60 s: $(head -3 "$ERR" | tr '\n' '|')"
	op_subst "$OUT.raw" "$t" >"$OUT"
	echo "-- $w -> $t${*:+ ($*)}: exit $RC"
	[ -s "$ERR" ] && sed 's/^/   stderr| /' "$ERR" | head -5
	true
}

op_same() {
	local w=$1
	[ "$RC" = "$(cat "$WORK/base/$w.rc")" ] || fail "$w: exit $RC, a plain run exits $(cat "$WORK/base/$w.rc"): $(head -3 "$ERR" | tr '\n' '|')"
	case $w in
	report | record | tool-record)
		# bigtext's own verdict on itself (its smaps figures may vary)
		diff <(grep -E '^bigtext: (results|PASS|FAIL)' "$WORK/base/$w.stdout") \
			<(grep -E '^bigtext: (results|PASS|FAIL)' "$OUT") >/dev/null ||
			fail "$w: bigtext's output is not that of a plain run: $(grep -E '^bigtext: (results|PASS|FAIL)' "$OUT" | tr '\n' '|')"
		;;
	*)
		cmp -s "$WORK/base/$w.stdout" "$OUT" ||
			fail "$w: the output is not that of a plain run: $(diff "$WORK/base/$w.stdout" "$OUT" | head -4 | tr '\n' '|')"
		;;
	esac
}

op_content() {
	local w=$1 f=$2
	[ -f "$f" ] || fail "$w: $f is not a regular file"
	case $w in
	report)
		"$IT_BIN/json_flat" "$f" >"$WORK/flat" 2>&1 || fail "$w: $f is not a whole JSON report: $(head -c 200 "$f")"
		grep -q '^\.pid	' "$WORK/flat" || fail "$w: $f has no pid"
		;;
	record | tool-record)
		[ "$(head -1 "$f")" = "enormoustext-profile 1" ] || fail "$w: $f is not a profile: $(head -c 100 "$f")"
		grep -q '^object [0-9a-f]* .*bigtext' "$f" || fail "$w: $f does not name bigtext"
		;;
	*)
		[ -s "$f" ] || fail "$w: $f is empty"
		[ "$f" = "$WORK/base/$w" ] || cmp -s "$WORK/base/$w" "$f" ||
			fail "$w: $f does not hold what a plain run writes"
		;;
	esac
}

op_refused() {
	local w=$1 t=$2 re=$3
	if op_is_lib "$w"; then
		op_same "$w"
		local name=ENORMOUSTEXT_REPORT
		[ "$w" = record ] && name=ENORMOUSTEXT_RECORD
		[ "$(wc -l <"$ERR")" -eq 1 ] || fail "$w into $t: $(wc -l <"$ERR") lines on stderr, expected one: $(tr '\n' '|' <"$ERR")"
		grep -qF "$t" "$ERR" || fail "$w: the line does not name $t: $(cat "$ERR")"
		grep -q "^enormoustext: $name" "$ERR" || fail "$w: the line does not name $name: $(cat "$ERR")"
		op_after "$t" <"$ERR" | grep -qiE -- "$re" || fail "$w into $t: the line does not say /$re/ after the path: $(cat "$ERR")"
		op_run "$w" "$t" ENORMOUSTEXT_VERBOSE=0
		op_same "$w"
		[ -s "$ERR" ] && fail "$w into $t at ENORMOUSTEXT_VERBOSE=0: $(head -2 "$ERR" | tr '\n' '|')"
	else
		[ "$RC" -eq 1 ] || fail "$w into $t: exit $RC, expected 1"
		case $w in
		tool-record)
			if [ "${4:-}" = before ]; then
				[ ! -s "$OUT" ] || fail "$w into $t: the command ran although the path could be refused before it: $(head -2 "$OUT" | tr '\n' '|')"
			else
				op_same_output "$w"
			fi
			;;
		svg) op_same_output "$w" ;;
		esac
		grep -q '\.tmp' "$ERR" && fail "$w: the message names a temporary: $(cat "$ERR")"
		local n
		n=$(grep -c . "$ERR")
		[ "$w" = tool-record ] || [ "$n" -eq 1 ] || fail "$w into $t: $n lines on stderr, expected one: $(tr '\n' '|' <"$ERR")"
		grep -E -- "^enormoustext [a-z]+: " "$ERR" | op_after "$t" | grep -qiE -- "$re" ||
			fail "$w into $t: no line 'enormoustext CMD: ...' names $t and says /$re/: $(tr '\n' '|' <"$ERR")"
	fi
}

# What the lines of stdin that name $1 say after it (no regex).
op_after() {
	awk -v t="$1" '{ i = index($0, t); if (i) print substr($0, i + length(t)) }'
}

# The output (not the status) of a plain run.
op_same_output() {
	local w=$1 rc=$RC
	RC=$(cat "$WORK/base/$w.rc")
	op_same "$w"
	RC=$rc
}

op_entries() {
	local n
	n=$(ls -A "$1" | wc -l)
	[ "$n" -eq "$2" ] || fail "$1 holds $n entries, expected $2 (a temporary left behind?): $(ls -A "$1" | tr '\n' ' ')"
}
