#!/bin/bash
# integration.defaults.shared — with the defaults, processes of one program
# share its huge text.
#
# bigtext and libbigtext.so linked with 2 MiB-aligned segments (flags-bfd:
# every window congruent with its file offset), copied, written out and
# dropped from the page cache, as after a boot.  Four processes at once,
# each running all of its text every 20 ms (bigtext --run):
#   plain    without the library (ENORMOUSTEXT=0: flags-bfd's bigtext is
#            linked with it): the text Pss of the four (every executable
#            mapping's Pss, summed), measured while all four run;
#   run 1    the library preloaded, no ENORMOUSTEXT_* variable: at 1 s each
#            copies its windows (the page cache holds them small), and the
#            windows are primed into zero-copy as soon as no other process
#            maps the small pages (at the pass, or 1 s and 4 s later): its
#            peak and its figure after the tries are printed, with what it
#            cost (the reports' cpu_ns);
#   run 2    the same again: the page cache now holds the text as 2 MiB
#            folios, and the four share it.  Its text Pss must be at most
#            1.5 times the plain run's (four private copies would be about
#            four times the 16 MiB of windows), and every report must say
#            that all of its huge text is zero-copy.
# Every bigtext run checks its results, its text against the files and its
# own smaps at its end, after the library's work, and must pass.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.bash"

need_file_thp
layout_fresh flags-bfd bigtext
cold "$D/bigtext" "$D/libbigtext.so"

# four at once; PIDS and the labels L
four() {
	local tag=$1 i
	shift
	PIDS=()
	L=()
	for i in 1 2 3 4; do
		bg "$tag.$i" "${@//@/$i}"
		PIDS+=("$BG_PID")
		L+=("$tag.$i")
	done
	for i in 1 2 3 4; do wait_for "$D/$tag.$i.out" '^bigtext: running for' 20; done
}
# all four still running?
alive() {
	local p
	for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null || return 1; done
}
# every one passed, with the plain run's results
end_four() {
	local i
	for i in 0 1 2 3; do
		bg_wait "${L[$i]}" "${PIDS[$i]}"
		[ "$RC" -eq 0 ] || fail "${L[$i]}: bigtext exited $RC: $(bigtext_says)"
		if [ -z "${BASE_RESULTS:-}" ]; then
			BASE_RESULTS=$(grep '^bigtext: results:' "$OUT")
			[ -n "$BASE_RESULTS" ] || fail "${L[$i]} printed no results line"
		fi
		same_results
	done
}

# plain: the four share the page cache's small pages
four plain ENORMOUSTEXT=0 -- ./bigtext --run 3 --expect-none
sleep 1
alive || fail "a plain process ended before its text Pss was measured"
plain=$(text_pss "${PIDS[@]}")
alive || fail "a plain process ended while its text Pss was measured"
end_four
echo "-- plain: text Pss of the four: $(mib "$plain") MiB"

# run 1: the first with the library; its text Pss every 0.2 s
four run1 LD_PRELOAD="$PRE" ENORMOUSTEXT_REPORT="$D/run1.@.json" -- ./bigtext --run 8 --expect-huge 100
peak=0 last=0 t_peak=0 series=""
t0=$(date +%s%N)
while alive; do
	p=$(text_pss "${PIDS[@]}")
	alive || break
	t_last=$((($(date +%s%N) - t0) / 1000000))
	# the figure each time it moves by 1 MiB or more
	[ $((p - last)) -ge 1024 ] || [ $((last - p)) -ge 1024 ] && series="$series $(mib "$p")@${t_last}ms"
	last=$p
	[ "$p" -gt "$peak" ] && peak=$p t_peak=$t_last
	sleep 0.2
done
end_four
echo "-- run 1: text Pss of the four (MiB, at ms since they started):$series"
cpu=0 k1=""
for i in 1 2 3 4; do
	cpu=$((cpu + $(awk -F '\t' '$1 == ".cpu_ns" { print $3 }' <("$JSON_FLAT" "$D/run1.$i.json"))))
	k1="$k1 $(kinds "$D/run1.$i.json" exe)/$(kinds "$D/run1.$i.json" lib)"
done
echo "-- run 1 (first with the library): text Pss peak $(mib "$peak") MiB at ${t_peak} ms," \
	"$(mib "$last") MiB at ${t_last} ms (after the tries at 1 s and 4 s); window kinds exe/lib:$k1;" \
	"the library's CPU time in the four: $((cpu / 1000000)) ms in all; what it cost beyond plain:" \
	"$(mib $((peak - plain))) MiB of text Pss at its peak, and one re-read of the 16 MiB of windows from the file"

# run 2: the page cache holds the text huge
four run2 LD_PRELOAD="$PRE" ENORMOUSTEXT_REPORT="$D/run2.@.json" -- ./bigtext --run 3 --expect-huge 100 --kind file
sleep 1.6
alive || fail "a run-2 process ended before its text Pss was measured"
shared=$(text_pss "${PIDS[@]}")
alive || fail "a run-2 process ended while its text Pss was measured"
end_four
k2=""
for i in 1 2 3 4; do
	r=$D/run2.$i.json
	for role in exe lib; do
		k=$(kinds "$r" "$role")
		z=$(obj_num "$r" "$role" zero_copy_bytes)
		h=$(obj_num "$r" "$role" huge_bytes)
		[ "$h" -ge $((4 * H_MIB * 1048576)) ] && [ "$z" = "$h" ] && [[ $k != *[cph]* ]] ||
			fail "run 2, process $i, $role: huge $h bytes, $z of them zero-copy, window kinds '$k': all of its huge text (4 windows at least) must be zero-copy"
		k2="$k2 $role:$k"
	done
done
echo "-- run 2: text Pss of the four: $(mib "$shared") MiB (plain: $(mib "$plain") MiB); window kinds:$k2"
awk -v s="$shared" -v p="$plain" 'BEGIN { exit !(s <= 1.5 * p) }' ||
	fail "run 2: the four's text Pss is $(mib "$shared") MiB, more than 1.5 times the plain run's $(mib "$plain") MiB: the huge text is not shared"

pass
