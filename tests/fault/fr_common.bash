# fr_common.bash — what the harness tests (syscalls, wx, rlimits,
# thp_matrix, badvalues) share.  Source it after lib.sh.  (Not *.sh: every
# tests/fault/*.sh is a test of its own.)
#
# The rule they all check: a program run with libenormoustext preloaded
# prints the same stdout, exits with the same status and, with
# ENORMOUSTEXT_VERBOSE=0, prints the same stderr as its plain run —
# whatever fails underneath.  The program is faultprog (its output depends
# on nothing but what it computed); each test first runs it plain.
#
#   fr_copy DIR                 fresh cp copies of faultprog and libbigtext.so
#   fr_run RES DIR [V=X...] -- CMD...   CMD in DIR with those variables added;
#                               RES.out RES.err RES.rc (stdin /dev/null)
#   fr_same RES REF [noerr]     RES behaves as REF (status, stdout, stderr
#                               unless noerr); else false, FR_WHY says how
#   fr_bg CMD...                CMD in the background, at most FAULT_JOBS (2)
#                               at once; fr_wait waits for all
#   fr_count LOG NAME           the library's calls of NAME (all keys, or
#                               NAME[KEY]) in a faultrun log; fr_other the others'

FR=$FAULT_BIN/faultrun
FP=$FAULT_BIN/faultprog
SHIM=$FAULT_BIN/libenormoustext-frshim.so
LIBBT=$IT_BIN/libbigtext.so
for f in "$FR" "$FP" "$SHIM" "$LIBBT" "$FAULT_BIN/fr_wxprog"; do
	[ -e "$f" ] || fail "$f is missing: build the tests first (cmake --build)"
done
FR_JOBS=${FAULT_JOBS:-2}

fr_copy() {
	mkdir -p "$1" && cp "$FP" "$LIBBT" "$1/" || fail "cannot copy the test programs to $1"
}

fr_run() {
	local res=$1 dir=$2 envs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$dir" && exec env "${envs[@]}" "$@") >"$res.out" 2>"$res.err" </dev/null
	echo $? >"$res.rc"
}

# (the harness runs hundreds of cells: what it reads and compares here is
# done with bash's builtins, et_same_file of tests/lib/lib.sh, no process
# forked unless the results differ)
fr_same() {
	local a=$1 b=$2 ra rb
	FR_WHY=
	read -r ra <"$a.rc"
	read -r rb <"$b.rc"
	if [ "$ra" != "$rb" ]; then
		FR_WHY+="exit status $ra, plain $rb"
		[ "$ra" = 124 ] && FR_WHY+=" (timed out: a hang)"
		[ "$ra" -gt 128 ] 2>/dev/null && [ "$ra" != 124 ] && FR_WHY+=" (killed by signal $((ra - 128)))"
		FR_WHY+="; "
	fi
	et_same_file "$a.out" "$b.out" ||
		FR_WHY+="stdout differs: $(diff "$b.out" "$a.out" | grep '^[<>]' | head -3 | tr '\n' ' '); "
	if [ "${3:-}" != noerr ]; then
		et_same_file "$a.err" "$b.err" ||
			FR_WHY+="stderr differs: $(diff "$b.err" "$a.err" | grep '^[<>]' | head -3 | cut -c1-200 | tr '\n' ' '); "
	fi
	[ -z "$FR_WHY" ]
}

fr_bg() {
	local running
	# (jobs into a file, not a pipe: no process forked to count them)
	while jobs -rp >"$WORK/.fr_jobs" && mapfile -t running <"$WORK/.fr_jobs" && [ "${#running[@]}" -ge "$FR_JOBS" ]; do
		wait -n
	done
	"$@" &
}
fr_wait() { wait; }

# fields: faultrun: count NAME[KEY]: library N other N failed N
fr_count() {
	awk -v n="$2" -v f="${3:-5}" '$1 == "faultrun:" && $2 == "count" {
		k = $3; sub(/:$/, "", k); b = k; sub(/\[.*/, "", b)
		if (k == n || b == n) s += $f
	} END { print s + 0 }' "$1"
}
fr_other() { fr_count "$1" "$2" 7; }
