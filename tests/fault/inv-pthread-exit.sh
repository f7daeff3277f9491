#!/bin/bash
# fault.inv-pthread-exit — a process whose main thread ends on its own
# (pthread_exit, or SYS_exit in seccomp strict mode) ends when its last
# thread does: the deferred worker must not be a thread that keeps it
# alive, and a SIGTERM sent to it must end it as it ends a plain process.
#
# iv_prog calls its 8 MiB of functions for 200 ms, prints, and then main
#   a) calls pthread_exit with no other thread of the program;
#   b) calls pthread_exit while a program thread it started runs (300 ms
#      of calls from its start) and then returns;
#   c) prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT), then syscall(SYS_exit, 0);
# each with ENORMOUSTEXT_DEFER=1ms (the worker already serving dlopen when
# main ends), 200ms (the worker working or about to) and 5s (still
# waiting).  Each run must end as the plain run does (exit status, stdout)
# within the plain run's time + 3 s (hang detection only).  d) A run still
# alive then is sent SIGTERM (timeout's): it must end within 2 s, as a
# plain process does (else SIGKILL ends it, and the cell says so).
. "$(dirname "$0")/lib.sh"
IV=$FAULT_BIN/iv_prog
[ -x "$IV" ] || fail "$IV is missing: build the tests first"
fresh "$IV"
R=$WORK/res
mkdir "$R" || exit 2
ms() { echo $(($(date +%s%N) / 1000000)); }
declare -A MODE=(
	[a]="--hold 200 --end pthread_exit"
	[b]="--hold 200 --thread 300 --end pthread_exit"
	[c]="--hold 200 --end strict"
)
declare -A WHAT=(
	[a]="pthread_exit, no other thread"
	[b]="pthread_exit, a program thread runs 300 ms more"
	[c]="seccomp strict + SYS_exit"
)
bad=()
for m in a b c; do
	read -ra args <<<"${MODE[$m]}"
	t0=$(ms)
	(cd "$D" && exec timeout --foreground -k 5 60 ./iv_prog "${args[@]}" >"$R/$m.plain.out" 2>"$R/$m.plain.err")
	echo $? >"$R/$m.plain.rc"
	plain_ms=$(($(ms) - t0))
	[ "$(cat "$R/$m.plain.rc")" = 0 ] || fail "($m) the plain run exited $(cat "$R/$m.plain.rc"): $(head -3 "$R/$m.plain.err")"
	bound_ms=$((plain_ms + 3000))
	bound=$((bound_ms / 1000)).$(printf %03d $((bound_ms % 1000)))
	for defer in 1ms 200ms 5s; do
		o=$R/$m.$defer
		t0=$(ms)
		(cd "$D" && ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=$defer LD_PRELOAD=$PRE \
			exec timeout --foreground -k 2 "$bound" ./iv_prog "${args[@]}" >"$o.out" 2>"$o.err")
		rc=$?
		took=$(($(ms) - t0))
		case $rc in
		124) res="hang: still alive after ${bound} s (plain: ${plain_ms} ms); SIGTERM ended it" ;;
		137) res="hang: still alive after ${bound} s (plain: ${plain_ms} ms); SIGTERM did not end it within 2 s (SIGKILL did)" ;;
		*)
			if [ "$rc" != "$(cat "$R/$m.plain.rc")" ]; then
				res="exit status $rc (plain 0) after $took ms"
			elif ! cmp -s "$o.out" "$R/$m.plain.out"; then
				res="stdout differs: $(diff "$R/$m.plain.out" "$o.out" | head -4 | tr '\n' ' ')"
			else
				res=ok
			fi
			;;
		esac
		if [ "$res" = ok ]; then
			note "($m) ${WHAT[$m]}, DEFER=$defer: ends as plain ($took ms, plain $plain_ms ms)"
		else
			note "($m) ${WHAT[$m]}, DEFER=$defer: $res; stderr: $(head -2 "$o.err" | tr '\n' ' ')"
			bad+=("($m) DEFER=$defer: $res")
		fi
	done
done
[ ${#bad[@]} = 0 ] || fail "${#bad[@]} of 9 runs did not end as the plain run: $(printf '%s; ' "${bad[@]}")"
echo "PASS [$T]"
