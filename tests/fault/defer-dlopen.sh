#!/bin/bash
# fault.defer-dlopen — with ENORMOUSTEXT_DEFER on a worker thread
# (ENORMOUSTEXT_DEFER_ON=thread; by default the program's own thread does
# the work, fault.defer-long) the worker also serves
# dlopen: a library loaded after the start-up work is moved by the worker,
# off the dlopen call.  strace -f names the thread of every mremap (the
# swap): with the deferral all of them are the worker's, none the main
# thread's (which calls dlopen); without it (ENORMOUSTEXT_DEFER=0) the
# main thread makes them all — so the check can fail.  Both runs print what
# the plain run prints, and the library's text ends up huge (from smaps).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
command -v strace >/dev/null || skip "needs strace"
cp "$IT_BIN/libbigtext.so" "$D/" || fail "cannot copy libbigtext.so"
R=$WORK/res
mkdir "$R" || exit 2
ARGS=(--hold 1600 --dlopen ./libbigtext.so)
dp_plain "$R/plain" "${ARGS[@]}"
grep -q 'dlopen: [0-9]* functions called' "$R/plain.out" || fail "plain run: $(cat "$R/plain.out" "$R/plain.err")"
swaps() { # OUT DEFER: run under strace; OUT.who gets "main N worker M" (mremap calls by thread)
	local out=$1 defer=$2
	fresh "$DP" "$IT_BIN/libbigtext.so"
	(cd "$D" && ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_DEFER=$defer ENORMOUSTEXT_DEFER_ON=thread LD_PRELOAD=$PRE \
		strace -f -qq -e trace=mremap,execve -o "$out.strace" ./dp_prog "${ARGS[@]}" >"$out.out" 2>"$out.err")
	echo $? >"$out.rc"
	dp_same "$out" "$R/plain"
	local pid
	pid=$(awk '/execve\(/ { print $1; exit }' "$out.strace")
	awk -v p="$pid" '/mremap\(/ && !/= -1/ { if ($1 == p) m++; else w++ } END { printf "main %d worker %d", m, w }' \
		"$out.strace" >"$out.who"
}
grep -q 'libbigtext.so: [0-9.]* of' "$R/plain.err" 2>/dev/null && fail "the plain run spoke"
swaps "$R/def" 200ms
deferred=$(cat "$R/def.who")
grep -q 'libbigtext.so: [0-9.]* of .* text huge' "$R/def.err" || fail "the dlopened library was not moved with the deferral: $(cat "$R/def.err")"
case $deferred in "main 0 worker "[1-9]*) ;; *) fail "with the deferral the swaps were made by: $deferred (the main thread must make none)" ;; esac
swaps "$R/now" 0
inline=$(cat "$R/now.who")
case $inline in "main "[1-9]*" worker 0") ;; *) fail "without the deferral the swaps were made by: $inline (expected the main thread alone)" ;; esac
note "mremap calls — deferred: $deferred; at start-up and in dlopen: $inline"
echo "PASS [$T]"
