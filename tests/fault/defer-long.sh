#!/bin/bash
# fault.defer-long — ENORMOUSTEXT_DEFER=1s on a process that lives 4 s:
# during the deferral nothing of its text is huge and a thread named
# "enormoustext" waits with every signal it can block blocked (glibc keeps
# its two internal ones); after it, checked from outside in the running
# process's smaps, its text is huge and the worker is still there, waiting
# for the passes dlopen may ask for; the program prints what its plain run
# prints.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
R=$WORK/res
mkdir "$R" || exit 2
dp_plain "$R/plain" --hold 4000
[ "$(cat "$R/plain.rc")" = 0 ] || fail "plain run exited $(cat "$R/plain.rc"): $(cat "$R/plain.err")"
rm -f "$D/pid"
(cd "$D" && ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=1s LD_PRELOAD=$PRE ./dp_prog --hold 4000 --pidfile "$D/pid" \
	>"$R/lib.out" 2>"$R/lib.err"; echo $? >"$R/lib.rc") &
# its own pid (not the newest dp_prog: another test may run one meanwhile)
wait_until 1 test -s "$D/pid" && P=$(cat "$D/pid")
[ -n "${P:-}" ] || fail "dp_prog did not start"
sleep 0.1
worker= names=
for t in /proc/"$P"/task/*; do
	n=$(cat "$t/comm" 2>/dev/null)
	names+="$n "
	[ "$n" = enormoustext ] && worker=$t
done
before=$(huge_kb "$P")
[ -n "$worker" ] || fail "no thread named enormoustext during the deferral (threads: $names)"
blk=$(sed -n 's/^SigBlk:\t*//p' "$worker/status")
# every signal but SIGKILL (9), SIGSTOP (19) and glibc's SIGCANCEL/SIGSETXID (32, 33)
[ "$blk" = fffffffe7ffbfeff ] || [ "$blk" = fffffffffffbfeff ] ||
	fail "the worker's blocked signals are $blk: a program's handler could run on it"
[ "$before" = 0 ] || fail "$before kB of text already huge during the deferral"
sleep 1.8
after=$(huge_kb "$P")
names_after=$(cat /proc/"$P"/task/*/comm 2>/dev/null | sort | tr '\n' ' ')
wait
[ "$after" -ge 4096 ] || fail "after the deferral only $after kB of the running process's text is huge: $(cat "$R/lib.err")"
case " $names_after " in *" enormoustext "*) ;; *) fail "the worker is gone after its work: $names_after" ;; esac
dp_same "$R/lib" "$R/plain"
grep -q 'MiB of .* text on 2 MiB pages' "$R/lib.err" || fail "no summary line from the worker: $(cat "$R/lib.err")"
note "during the deferral: threads $names, worker SigBlk $blk, 0 kB huge; after: $after kB huge, threads $names_after"
echo "PASS [$T]"
