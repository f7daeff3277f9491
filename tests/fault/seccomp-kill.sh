#!/bin/bash
# fault.seccomp-kill — under a seccomp filter whose action is to kill, a
# preloaded program must live exactly as long as its plain run does.
#
# A filter that kills on a system call the program never makes (systemd's
# SystemCallFilter=, a program that sandboxes itself with libseccomp or
# prctl) kills the process the first time the library makes that call:
# SIGSYS, exit status 159, where the plain run exits 0.  A library that
# makes calls the program does not must not make them where a filter may
# kill: it reads the process's seccomp state before each pass, sees the
# filters installed later (prctl(PR_SET_SECCOMP), seccomp()), and stands
# down, saying why (a line naming seccomp at ENORMOUSTEXT_VERBOSE=1).
#
# The matrix.  Rows: each system call (faultrun's names) the library makes
# and the plain program never does, whole or for one key argument value
# (madvise's advice, prctl's option, mprotect's prot...), found with
# faultrun --count on preloaded runs (immediate, ENORMOUSTEXT_DEFER,
# ENORMOUSTEXT_MODE=3, ENORMOUSTEXT_RECORD, RECORD with perf_event_open
# refused: the timer fallback) and plain runs of every timing below; the
# filter kills on the row's calls (a RECORD row adds RECORD; the timer row
# also refuses perf_event_open with EACCES).  Columns: when the filter
# goes in (sk_prog: 8 MiB of text, a hold of HOLD ms, a dlopen of a cp'ed
# libbigtext.so (12 MiB of text) half-way through it, every function
# called and checked), and the library's timing:
#   exec   before exec (sk_run, as systemd does)
#   main   first thing in main, seccomp(SECCOMP_SET_MODE_FILTER, 0)
#   tsync  20 ms in, from a thread of the program's, with
#          SECCOMP_FILTER_FLAG_TSYNC (every thread, the worker's too)
#   prctl  20 ms in, prctl(PR_SET_SECCOMP) from the main thread (that thread)
#   imm: no deferral; 50ms: ENORMOUSTEXT_DEFER=50ms (the worker waits
#   when a late filter goes in); 1ms: DEFER=1ms (it works or serves)
# Each cell runs preloaded (ENORMOUSTEXT_VERBOSE=0) and is compared with the
# plain run under the same filter: exit status, stdout and stderr.
# Besides: MODE=3 and RECORD cells on two rows; each backend with the
# filter in main (the dlopen's pass); a kill on clone3 (the worker thread:
# not a name of faultrun's) before exec; "reason" cells (as plain, and a
# line naming seccomp: at ENORMOUSTEXT_VERBOSE=1 where the start-up work
# stands down, at 2 where only a dlopen's pass does); SECCOMP_MODE_STRICT
# cells (the program enters strict mode after printing and ends its main
# thread with SYS_exit: the process must end, with 0; a hang is a FAIL).
#
# First the harness is shown able to fail: sk_run's and sk_prog's filters
# kill the plain program on a call it makes (mprotect PROT_READ: the
# loader's RELRO, at exec and in the dlopen), and a broken stand-in library
# (fr_shim, which reserves 64 MiB) fails a cell whose filter kills on its
# reservation and passes one that kills on mremap.
#
# Environment: FAULT_JOBS (2) runs at once; SK_HOLD (200) ms of hold.
# Rerun one cell: the "rerun" lines after the FAIL lines (in a directory
# holding cp'ed copies of sk_prog and libbigtext.so); every cell's command
# is res/ID.cmd in the work directory (FAULT_KEEP=1 keeps it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fr_common.bash"

SKR=$FAULT_BIN/sk_run
SKP=$FAULT_BIN/sk_prog
for f in "$SKR" "$SKP"; do
	[ -x "$f" ] || fail "$f is missing: build the tests first (cmake --build)"
done
ulimit -c 0   # SIGSYS dumps core
SIGSYS_RC=$((128 + $(kill -l SYS)))
HOLD=${SK_HOLD:-200}
CELL_TIMEOUT=30
STRICT_TIMEOUT=10
R=$WORK/res
mkdir "$R" || exit 2
BASE=(./sk_prog --hold "$HOLD" --dlopen ./libbigtext.so)
declare -A T_ARGS=([exec]="" [main]="--filter-at main --how seccomp"
	[tsync]="--filter-at 20 --how tsync" [prctl]="--filter-at 20 --how prctl")
TIMINGS=(exec main tsync prctl)
declare -A D_ENV=([imm]="" [50ms]="ENORMOUSTEXT_DEFER=50ms" [1ms]="ENORMOUSTEXT_DEFER=1ms")
COLS=(exec:imm exec:50ms main:imm main:50ms tsync:imm tsync:50ms tsync:1ms prctl:imm prctl:50ms)

# fr_run, without the shell's "Bad system call" line for each killed run
fr_q() { fr_run "$@" 2>/dev/null; }

sk_copy() {
	mkdir -p "$1" && cp "$SKP" "$LIBBT" "$1/" || fail "cannot copy the test programs to $1"
}

# sk_cmd TIMING "RULES" [VAR=VALUE...]: CMD, the command (preloaded when
# variables are given: LD_PRELOAD is the caller's to add)
sk_cmd() {
	local timing=$1 rules=$2 r
	shift 2
	CMD=()
	if [ "$timing" = exec ]; then
		CMD=("$SKR")
		for r in $rules; do CMD+=("$r"); done
		CMD+=(-- env "$@" "${BASE[@]}")
	else
		CMD=(env "$@" "${BASE[@]}")
		for r in $rules; do CMD+=(--kill "$r"); done
		# shellcheck disable=SC2206 # words
		CMD+=(${T_ARGS[$timing]})
	fi
}

# sk_verdict ID REF [noerr]: ID.v ok or FAIL (ID.why; a run that reached
# its time limit is a hang)
sk_verdict() {
	local rc
	if fr_same "$R/$1" "$R/$2" ${3:-}; then echo ok >"$R/$1.v"; return; fi
	rc=$(cat "$R/$1.rc")
	if { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && [ "$(cat "$R/$1.secs" 2>/dev/null || echo 0)" -ge "${4:-$CELL_TIMEOUT}" ]; then
		FR_WHY="a hang: still running after $(cat "$R/$1.secs") s$([ "$rc" = 137 ] && echo ", and SIGTERM did not end it (SIGKILL did)"); $FR_WHY"
	fi
	echo "$FR_WHY" >"$R/$1.why"
	echo FAIL >"$R/$1.v"
}
# the word for a cell in the tables: ok, KILLED (SIGSYS), HANG or FAIL
word() {
	local v
	v=$(cat "$R/$1.v" 2>/dev/null || echo FAIL)
	if [ "$v" = ok ]; then echo ok
	elif grep -q '^a hang' "$R/$1.why" 2>/dev/null; then echo HANG
	elif grep -q "exit status $SIGSYS_RC" "$R/$1.why" 2>/dev/null; then echo KILLED
	else echo FAIL; fi
}

# run ID DIR TIMEOUT CMD...: the command line kept in ID.cmd
run() {
	local id=$1 dir=$2 to=$3
	shift 3
	local t=$SECONDS
	printf '%q ' "$@" >"$R/$id.cmd"
	fr_q "$R/$id" "$dir" -- timeout -k 3 "$to" "$@"
	echo $((SECONDS - t)) >"$R/$id.secs"
}

# cell ID ROW TIMING DEFER [VAR=VALUE...]: preloaded, compared with p-ROW-TIMING
cell() {
	local id=$1 row=$2 timing=$3 defer=$4 envs
	shift 4
	envs=(LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=0)
	[ -n "${D_ENV[$defer]}" ] && envs+=("${D_ENV[$defer]}")
	# shellcheck disable=SC2206 # words
	[ -n "${ROW_ENV[$row]}" ] && envs+=(${ROW_ENV[$row]//@PROF@/$WORK/row$row/$id.prof})
	envs+=("$@")
	sk_cmd "$timing" "${ROW_RULES[$row]}" "${envs[@]}"
	run "$id" "$WORK/row$row" $CELL_TIMEOUT "${CMD[@]}"
	sk_verdict "$id" "p-$row-$timing"
	rm -f "$WORK/row$row/$id.prof"*
}

# reason ID ROW TIMING DEFER VERBOSE: at ENORMOUSTEXT_VERBOSE=VERBOSE, as
# plain (status and stdout) and a line naming seccomp
reason() {
	local id=$1 row=$2 timing=$3 defer=$4 envs
	envs=(LD_PRELOAD="$PRE" "ENORMOUSTEXT_VERBOSE=$5")
	[ -n "${D_ENV[$defer]}" ] && envs+=("${D_ENV[$defer]}")
	sk_cmd "$timing" "${ROW_RULES[$row]}" "${envs[@]}"
	run "$id" "$WORK/row$row" $CELL_TIMEOUT "${CMD[@]}"
	sk_verdict "$id" "p-$row-$timing" noerr
	# (paths left out: this test's work directory is named after it)
	if ! sed 's|[^ ]*/[^ ]*||g' "$R/$id.err" | grep -qi seccomp; then
		echo "no line naming seccomp on stderr ($(head -2 "$R/$id.err" | cut -c1-150 | tr '\n' ' ')); $(cat "$R/$id.why" 2>/dev/null)" >"$R/$id.why"
		echo FAIL >"$R/$id.v"
	fi
}

# ---- the harness can fail --------------------------------------------------------
sk_copy "$WORK/self"
fr_q "$R/free" "$WORK/self" -- "${BASE[@]}"
[ "$(cat "$R/free.rc")" = 0 ] && [ ! -s "$R/free.err" ] && grep -q '^functions: .*all results right' "$R/free.out" &&
	grep -q '^dlopen: ' "$R/free.out" ||
	fail "sk_prog without a filter: exit $(cat "$R/free.rc"): $(head -3 "$R/free.out" "$R/free.err")"
fr_q "$R/self-idle" "$WORK/self" -- "$SKR" kexec_load -- "${BASE[@]}"
fr_same "$R/self-idle" "$R/free" || fail "sk_run killing on kexec_load (never made) changed sk_prog: $FR_WHY"
fr_q "$R/self-exec" "$WORK/self" -- "$SKR" mprotect/arg2=PROT_READ -- "${BASE[@]}"
[ "$(cat "$R/self-exec.rc")" = "$SIGSYS_RC" ] ||
	fail "sk_run killing on mprotect(PROT_READ) (the loader's RELRO) did not kill sk_prog: exit $(cat "$R/self-exec.rc")"
line="sk_run mprotect/arg2=PROT_READ: exit $SIGSYS_RC;"
for t in main tsync prctl; do
	# shellcheck disable=SC2086 # words
	fr_q "$R/self-$t" "$WORK/self" -- "${BASE[@]}" --kill mprotect/arg2=PROT_READ ${T_ARGS[$t]}
	[ "$(cat "$R/self-$t.rc")" = "$SIGSYS_RC" ] ||
		fail "sk_prog's own filter ($t) killing on mprotect(PROT_READ) did not kill it at the dlopen: exit $(cat "$R/self-$t.rc"): $(cat "$R/self-$t.out")"
	line+=" sk_prog $t: $SIGSYS_RC;"
	# shellcheck disable=SC2086 # words
	fr_q "$R/self-$t-idle" "$WORK/self" -- "${BASE[@]}" --kill kexec_load ${T_ARGS[$t]}
	[ "$(cat "$R/self-$t-idle.rc")" = 0 ] && grep -q '^filter (.*): installed' "$R/self-$t-idle.out" ||
		fail "sk_prog's own filter ($t) on kexec_load: exit $(cat "$R/self-$t-idle.rc"): $(cat "$R/self-$t-idle.out" "$R/self-$t-idle.err")"
done
note "the filters kill (on the program's own mprotect(PROT_READ)): $line"
# a broken stand-in: its 64 MiB reservation is a call the program never makes
ROW_RULES=() ROW_ENV=() ROW_LABEL=() ROW_SETUP=()   # indexed by row number
ROW_RULES[90]="mmap/arg1=0x4000000" ROW_RULES[91]=mremap ROW_ENV[90]="" ROW_ENV[91]=""
for i in 90 91; do
	sk_copy "$WORK/row$i"
	sk_cmd exec "${ROW_RULES[$i]}"
	fr_q "$R/p-$i-exec" "$WORK/row$i" -- "${CMD[@]}"
	fr_same "$R/p-$i-exec" "$R/free" || fail "the plain run under ${ROW_RULES[$i]}: $FR_WHY"
	sk_cmd exec "${ROW_RULES[$i]}" LD_PRELOAD="$SHIM"
	run "shim$i" "$WORK/row$i" $CELL_TIMEOUT "${CMD[@]}"
	sk_verdict "shim$i" "p-$i-exec"
done
[ "$(cat "$R/shim90.v")" = FAIL ] && [ "$(cat "$R/shim91.v")" = ok ] ||
	fail "the harness does not tell a broken library from a good one: fr_shim under a kill on its mmap: $(cat "$R/shim90.v"), on mremap: $(cat "$R/shim91.v") $(cat "$R/shim91.why" 2>/dev/null)"
note "self-check with a broken stand-in library: killed on its 64 MiB mmap: FAIL ($(cat "$R/shim90.why")); on mremap: ok"

# ---- which calls are the library's alone ---------------------------------------------
t0=$SECONDS
SETUPS=(start defer mode3 record timer)
declare -A S_ENV=([start]="" [defer]="ENORMOUSTEXT_DEFER=1ms" [mode3]="ENORMOUSTEXT_MODE=3"
	[record]="ENORMOUSTEXT_RECORD=@PROF@" [timer]="ENORMOUSTEXT_RECORD=@PROF@")
declare -A S_FR=([timer]="--rule perf_event_open:EACCES")
declare -A S_RULES=([timer]="perf_event_open:EACCES")
sk_copy "$WORK/count"
count_lib() {
	local s=$1 envs
	# shellcheck disable=SC2206 # words
	# (faultrun's own filter only notifies: the library is told to act
	# under it, to see every call it would make)
	envs=(LD_PRELOAD="$PRE" ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_VERBOSE=0 ${S_ENV[$s]//@PROF@/$WORK/count/$s.prof})
	# shellcheck disable=SC2086 # words
	fr_q "$R/count-$s" "$WORK/count" -- "$FR" --count ${S_FR[$s]:-} --log "$R/count-$s.log" -- env "${envs[@]}" "${BASE[@]}"
}
count_plain() {
	local t=$1
	sk_cmd "$t" "kexec_load"
	fr_q "$R/count-p$t" "$WORK/count" -- "$FR" --count --log "$R/count-p$t.log" -- "${CMD[@]}"
}
for s in "${SETUPS[@]}"; do fr_bg count_lib "$s"; done
for t in "${TIMINGS[@]}"; do fr_bg count_plain "$t"; done
fr_wait
for s in "${SETUPS[@]}"; do
	fr_same "$R/count-$s" "$R/free" || fail "$s: the preloaded run under faultrun --count differs from the plain run: $FR_WHY"
done
for t in "${TIMINGS[@]}"; do
	[ "$(cat "$R/count-p$t.rc")" = 0 ] || fail "the plain run ($t) under faultrun --count: exit $(cat "$R/count-p$t.rc")"
	n=$(awk '$2 == "count" { s += $5 } END { print s + 0 }' "$R/count-p$t.log")
	[ "$n" = 0 ] || fail "a plain run ($t) has $n calls attributed to the library"
done
# the plain program's calls, all timings: NAME and NAME[KEY]
declare -A PLAIN=()
for k in $(cat "$R"/count-p*.log | awk '$2 == "count" && $7 > 0 { k = $3; sub(/:$/, "", k); print k; sub(/\[.*/, "", k); print k }'); do
	PLAIN[$k]=1
done
declare -A ARGI=([mremap]=3 [mprotect]=2 [pkey_mprotect]=2 [madvise]=2 [fadvise64]=3 [prctl]=0
	[process_madvise]=3 [timer_create]=0 [rt_sigaction]=0 [ioctl]=1)
# the library's (setup, NAME[KEY]) in setup order, and the keys of each NAME
declare -A NKEYS=() SEEN=()
LIBKEYS=()
for s in "${SETUPS[@]}"; do
	for k in $(awk '$2 == "count" && $5 > 0 { k = $3; sub(/:$/, "", k); print k }' "$R/count-$s.log"); do
		[ -n "${SEEN[$k]:-}" ] && continue
		SEEN[$k]=1
		LIBKEYS+=("$s|$k")
		n=${k%%\[*}
		NKEYS[$n]=$((${NKEYS[$n]:-0} + 1))
	done
done
ROWS=()
declare -A HAVE_ROW=()
add_row() {  # SETUP LABEL RULE
	local i=${#ROWS[@]}
	ROWS+=("$i")
	ROW_SETUP[$i]=$1
	ROW_LABEL[$i]=$2
	ROW_RULES[$i]="$3${S_RULES[$1]:+ ${S_RULES[$1]}}"
	ROW_ENV[$i]=${S_ENV[$1]}
	[ "$1" = defer ] && ROW_ENV[$i]=""
}
libonly=""
for sk in "${LIBKEYS[@]}"; do
	s=${sk%%|*}
	k=${sk#*|}
	n=${k%%\[*}
	[ -n "${PLAIN[$k]:-}" ] && continue
	libonly+=" $k"
	if [ -z "${PLAIN[$n]:-}" ] && [ -z "${HAVE_ROW[$n]:-}" ]; then
		HAVE_ROW[$n]=1
		add_row "$s" "$n" "$n"
	fi
	if [ "$k" != "$n" ] && { [ -n "${PLAIN[$n]:-}" ] || [ "${NKEYS[$n]}" -gt 1 ]; }; then
		key=${k#*\[}
		key=${key%\]}
		[ -n "${ARGI[$n]:-}" ] || { note "(no argument index for $k: its row is the whole call)"; continue; }
		add_row "$s" "$k" "$n/arg${ARGI[$n]}=$key"
	fi
done
note "the library's calls that the plain program (every timing) never makes:$libonly"
note "rows (filter rules; set-up):"
for i in "${ROWS[@]}"; do note "  ${ROW_LABEL[$i]}: ${ROW_RULES[$i]}; ${ROW_SETUP[$i]}${ROW_ENV[$i]:+ (${ROW_ENV[$i]//@PROF@/FILE})}"; done
[ "${#ROWS[@]}" -ge 3 ] || fail "only ${#ROWS[@]} rows: faultrun --count saw too few calls of the library's own ($libonly)"
note "counting: $((SECONDS - t0)) s"

# ---- the plain runs under each filter ------------------------------------------------
t0=$SECONDS
plain() {
	local row=$1 t=$2
	sk_cmd "$t" "${ROW_RULES[$row]}"
	run "p-$row-$t" "$WORK/row$row" $CELL_TIMEOUT "${CMD[@]}"
}
for i in "${ROWS[@]}"; do
	sk_copy "$WORK/row$i"
	for t in "${TIMINGS[@]}"; do fr_bg plain "$i" "$t"; done
done
fr_wait
for i in "${ROWS[@]}"; do
	for t in "${TIMINGS[@]}"; do
		[ "$t" = exec ] && ref=free || ref=self-$t-idle
		# the same as without a filter, but the filter line
		grep -v '^filter (' "$R/p-$i-$t.out" | cmp -s - "$R/free.out" && [ "$(cat "$R/p-$i-$t.rc")" = 0 ] ||
			fail "the plain run under ${ROW_RULES[$i]} ($t) is not the plain run without it: exit $(cat "$R/p-$i-$t.rc"): $(head -3 "$R/p-$i-$t.out")"
		[ "$t" = exec ] || cmp -s "$R/p-$i-$t.out" "$R/$ref.out" || fail "the plain run under ${ROW_RULES[$i]} ($t) printed $(head -1 "$R/p-$i-$t.out")"
	done
done

# ---- the matrix ------------------------------------------------------------------------
for i in "${ROWS[@]}"; do
	for c in "${COLS[@]}"; do
		id="r$i-${c/:/-}"
		fr_bg cell "$id" "$i" "${c%%:*}" "${c#*:}"
	done
done
# two rows (mremap and madvise where they are rows) with MODE=3, RECORD, each backend
pick=()
for want in mremap madvise 'madvise[MADV_HUGEPAGE]'; do
	for i in "${ROWS[@]}"; do
		[ "${ROW_LABEL[$i]}" = "$want" ] && [ "${ROW_SETUP[$i]}" = start ] && [ ${#pick[@]} -lt 2 ] && pick+=("$i")
	done
done
[ ${#pick[@]} -ge 1 ] || pick=("${ROWS[0]}")
EXTRA=()
for i in "${pick[@]}"; do
	for c in exec:imm tsync:50ms main:imm; do
		id="x$i-${c/:/-}-mode3"
		EXTRA+=("$id|$i|$c|ENORMOUSTEXT_MODE=3")
		fr_bg cell "$id" "$i" "${c%%:*}" "${c#*:}" ENORMOUSTEXT_MODE=3
		id="x$i-${c/:/-}-record"
		EXTRA+=("$id|$i|$c|ENORMOUSTEXT_RECORD=FILE")
		fr_bg cell "$id" "$i" "${c%%:*}" "${c#*:}" ENORMOUSTEXT_RECORD="$WORK/row$i/$id.prof"
	done
	for b in thp collapse file hugetlb; do
		id="x$i-main-imm-$b"
		EXTRA+=("$id|$i|main:imm|ENORMOUSTEXT_BACKEND=$b")
		fr_bg cell "$id" "$i" main imm ENORMOUSTEXT_BACKEND=$b
	done
done
# the reasons: at verbosity 1 where the start-up work stands down (the
# filter was there before it, or goes in while the worker waits); at 2 where
# only the dlopen's pass does (the text was moved before main)
for c in exec:imm:1 exec:50ms:1 tsync:50ms:1 main:imm:2 prctl:imm:2; do
	i=${pick[0]}
	IFS=: read -r t d vb <<<"$c"
	id="why$i-$t-$d"
	EXTRA+=("$id|$i|$t:$d|ENORMOUSTEXT_VERBOSE=$vb (a line naming seccomp)")
	fr_bg reason "$id" "$i" "$t" "$d" "$vb"
done
# the worker thread itself: clone3 (not faultrun's), a call the program
# (single-threaded, in this timing) never makes
ROW_RULES[92]=clone3 ROW_ENV[92]="" ROW_LABEL[92]="clone3 (not faultrun's)"
sk_copy "$WORK/row92"
plain 92 exec
[ "$(cat "$R/p-92-exec.rc")" = 0 ] || fail "the plain run under a kill on clone3: exit $(cat "$R/p-92-exec.rc")"
for d in imm 50ms; do
	EXTRA+=("x92-exec-$d|92|exec:$d|")
	fr_bg cell "x92-exec-$d" 92 exec $d
done
# SECCOMP_MODE_STRICT after the results, then SYS_exit
sk_copy "$WORK/strict"
fr_q "$R/strict-plain" "$WORK/strict" -- timeout -k 3 $STRICT_TIMEOUT ./sk_prog --strict
[ "$(cat "$R/strict-plain.rc")" = 0 ] && [ ! -s "$R/strict-plain.err" ] ||
	fail "sk_prog --strict without the library: exit $(cat "$R/strict-plain.rc"): $(cat "$R/strict-plain.err")"
strict() {
	local id=$1
	shift
	run "$id" "$WORK/strict" $STRICT_TIMEOUT env LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=0 "$@" ./sk_prog --strict
	sk_verdict "$id" strict-plain "" $STRICT_TIMEOUT
	rm -f "$WORK/strict/$id.prof"*
}
for v in imm:- 50ms:ENORMOUSTEXT_DEFER=50ms 1ms:ENORMOUSTEXT_DEFER=1ms record:ENORMOUSTEXT_RECORD=@PROF@; do
	id="strict-${v%%:*}"
	e=${v#*:}
	[ "$e" = - ] && e=
	EXTRA+=("$id|-|strict|${e//@PROF@/FILE}")
	# shellcheck disable=SC2086 # words
	fr_bg strict "$id" ${e//@PROF@/$WORK/strict/$id.prof}
done
fr_wait
t_matrix=$((SECONDS - t0))

# ---- the report --------------------------------------------------------------------------
ncell=0
nok=0
failed=()
printf '%-40s' "filter kills on / timing:defer"
for c in "${COLS[@]}"; do printf ' %-10s' "$c"; done
echo
for i in "${ROWS[@]}"; do
	printf '%-40s' "${ROW_LABEL[$i]}${ROW_ENV[$i]:+ +RECORD}${S_RULES[${ROW_SETUP[$i]}]:+ +perf:EACCES}"
	for c in "${COLS[@]}"; do
		id="r$i-${c/:/-}"
		v=$(word "$id")
		ncell=$((ncell + 1))
		if [ "$v" = ok ]; then nok=$((nok + 1)); else failed+=("$id"); fi
		printf ' %-10s' "$v"
	done
	echo
done
for x in "${EXTRA[@]}"; do
	IFS='|' read -r id i c what <<<"$x"
	v=$(word "$id")
	ncell=$((ncell + 1))
	if [ "$v" = ok ]; then nok=$((nok + 1)); else failed+=("$id"); fi
	lab="sk_prog --strict"
	[ "$i" = - ] || lab=${ROW_LABEL[$i]}
	printf '  %-6s %-26s %-10s %s\n' "$v" "$lab" "$c" "$what"
done
note "$ncell cells, $nok as plain; matrix $t_matrix s"
if [ ${#failed[@]} -gt 0 ]; then
	for id in "${failed[@]}"; do
		echo "FAIL cell $id: $(cut -c1-160 "$R/$id.why" 2>/dev/null || echo 'no verdict')"
	done
	k=0
	for id in "${failed[@]}"; do
		[ $k -lt 4 ] || break
		k=$((k + 1))
		echo "rerun $id: cp $SKP $LIBBT DIR; cd DIR && $(sed "s|$WORK/[a-z]*[0-9]*/|DIR/|g" "$R/$id.cmd")"
	done
	echo "(each cell's command: res/ID.cmd in the work directory, kept with FAULT_KEEP=1)"
	fail "${#failed[@]} of $ncell cells: the preloaded program did not live as its plain run under the same seccomp filter"
fi
echo "PASS [$T]: $ncell cells, $nok as plain"
