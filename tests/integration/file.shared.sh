#!/bin/bash
# integration.file.shared — zero-copy text is shared by every process;
# anonymous copies are each one's own.
#
# Zero-copy text is the page cache's: every process maps the very same
# huge pages (smaps Shared_*; Pss divided by the number of processes);
# anonymous copies are each process's own.  With 2 and with 10.
. "$(dirname "$0")/lib.sh"

need_file_thp
layout_fresh script-bfd bigtext
run prime -- "$IT_TOOL" prime ./bigtext ./libbigtext.so
[ "$RC" -eq 0 ] || fail "enormoustext prime exited $RC"
for n in 2 10; do
	for backend in file thp; do
		holders=()
		for i in $(seq $((n - 1))); do
			(cd "$D" && exec env ENORMOUSTEXT_BACKEND=$backend ./bigtext --hold 30 >"$D/holder.$n.$backend.$i.out" 2>&1) &
			holders+=($!)
			EXIT_HOOKS+=("kill $! 2>/dev/null")
		done
		for i in $(seq $((n - 1))); do
			wait_line "$D/holder.$n.$backend.$i.out" 'holding' 10
			grep -q holding "$D/holder.$n.$backend.$i.out" || fail "process $i ($backend) did not start: $(cat "$D/holder.$n.$backend.$i.out")"
		done
		if [ $backend = file ]; then
			run "last-of-$n" ENORMOUSTEXT_BACKEND=file -- ./bigtext --kind file --expect-huge 100 --expect-shared-lib 95
			[ "$RC" -eq 0 ] || fail "zero-copy, $n processes: the last does not share the others' huge text: $(bigtext_says)"
		else
			run "last-of-$n" ENORMOUSTEXT_BACKEND=thp -- ./bigtext --kind anon --expect-huge 100 --expect-private-lib 95
			[ "$RC" -eq 0 ] || fail "anonymous copies, $n processes: the last shares text it should own: $(bigtext_says)"
		fi
		pss=$(sed -n 's/^bigtext: lib: eligible windows shared .*Pss \([0-9.]*\) MiB$/\1/p' "$OUT")
		echo "-- $n processes, $backend: the lib's 10 MiB of windows cost each process Pss $pss MiB"
		if [ $backend = file ]; then
			awk -v p="$pss" -v n=$n 'BEGIN { exit !(p <= 10.0 / n * 1.05) }' ||
				fail "zero-copy, $n processes: Pss $pss MiB, expected about $(awk -v n=$n 'BEGIN { print 10 / n }') MiB"
		fi
		kill "${holders[@]}" 2>/dev/null
		wait "${holders[@]}" 2>/dev/null
	done
done

pass
