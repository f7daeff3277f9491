#!/bin/bash
# fault.defer-exit — exit(), _exit() and exec (through vfork) while the
# deferred worker (ENORMOUSTEXT_DEFER_ON=thread: by default a single-threaded
# program does the work itself, in a signal handler, and cannot end during
# it) copies and swaps: a 1 ms deferral, and the program ends
# 0..14 ms into its life, 30 times each way; every run ends as its plain
# run does (status, output), none crashes, nothing half-done is seen (the
# functions keep computing right until the end).  And vfork+exec of
# /bin/true again and again while the worker works.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
export ENORMOUSTEXT_DEFER_ON=thread
R=$WORK/res
mkdir "$R" || exit 2
dp_plain "$R/plain"
for how in exit-at _exit-at; do
	for i in $(seq 0 29); do
		ms=$((i % 15))
		dp_lib "$R/$how$i" 1ms --$how $ms
		dp_same "$R/$how$i" "$R/plain"
	done
done
moved=$(cat "$R"/exit-at*.err "$R"/_exit-at*.err | grep -c ': 1 of [0-9]* objects\{0,1\}, [0-9.]* MiB of' || true)
dp_plain "$R/vplain" --vfork --hold 300
grep -q 'vfork+exec: all ran' "$R/vplain.out" || fail "vfork+exec fails without the library: $(cat "$R/vplain.out")"
dp_lib "$R/vlib" 1ms --vfork --hold 300
dp_same "$R/vlib" "$R/vplain"
grep -q ': 1 of [0-9]* objects\{0,1\}, [0-9.]* MiB of' "$R/vlib.err" || fail "the worker did not move the text while vfork+exec ran: $(cat "$R/vlib.err")"
note "60 runs ending with exit/_exit 0..14 ms in: all as plain ($moved of them had moved the text first); vfork+exec during the work: as plain"
echo "PASS [$T]"
