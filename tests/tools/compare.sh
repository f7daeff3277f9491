#!/bin/bash
# tool_compare — `enormoustext compare`: COMMAND plain and with the library,
# alternated; the time ratio with its spread, the library's cost, the text's
# Pss and huge share, iTLB misses from the PMU or the model, one verdict.
# (The verdict's rule asked three times, and the pairs added until it is
# clear: tool_compare_verdict; the progress line: tool_progress.)
#
#  - a program with 8 MiB of text (the integration tests' bigtext): the
#    JSON names time_ratio, itlb_ratio and the counters' source; the runs
#    alternate plain, library; the library's report (huge, copied,
#    zero-copy, its CPU) and the text sampled from smaps while it ran;
#  - the model (itlbgrind, this build tree's): source "model", fewer L1
#    iTLB misses and walks with the library than plain;
#  - the PMU: where the kernel gives hardware counters, source "pmu" and
#    counts for both; where it does not (a VM without a virtual PMU), the
#    command says so in words for --counters pmu (status 1: "this machine
#    has no hardware PMU counters (perf_event_open: ENOENT for hardware
#    events...)", not an errno after an event's name), and auto falls back
#    to the model, the text's "counters" line saying both;
#  - the verdict, from the times: a command slower only plain (it sleeps
#    when LD_PRELOAD is empty, then runs bigtext, whose text the library
#    moves) is "worth it", one slower only with the library "costs more
#    than it saves", one the library is off in (ENORMOUSTEXT=0) "nothing
#    to compare", one that exits differently "behaves differently"
#    (status 1); the plain runs have the library taken out of an
#    LD_PRELOAD that names it;
#  - bad input: no COMMAND, --runs 0 / abc, --budget abc, --counters
#    bogus, a COMMAND that does not exist, a --lib that does not.
. "$(dirname "$0")/lib.sh"

BIG=${TT_BUILD_DIR:-}/tests/integration/bin/bigtext
[ -x "$BIG" ] || fail "$BIG is missing: build the integration tests (they make bigtext)"

# --- bad input
t none -- "$TOOL" compare
expect_rc 2 "no COMMAND"
t runs0 -- "$TOOL" compare --runs 0 -- true
expect_rc 2 "--runs 0"
t runsabc -- "$TOOL" compare --runs abc -- true
expect_rc 2 "--runs abc"
t budgetabc -- "$TOOL" compare --budget abc -- true
expect_bad 2 "--budget abc" "--budget takes a number of seconds 0..86400, not 'abc'"
t counters -- "$TOOL" compare --counters bogus -- true
expect_rc 2 "--counters bogus"
t nocmd -- "$TOOL" compare --runs 1 --warmup 0 --counters none -- "$W/no-such-program"
expect_bad 1 "a COMMAND that does not exist" "cannot run $W/no-such-program: No such file"
t nolib -- "$TOOL" compare --lib "$W/no-such.so" --counters none -- true
expect_bad 1 "a --lib that does not exist" "$W/no-such.so"

# --- bigtext, no counters: the JSON's shape and the library's cost
t big -- "$TOOL" compare --runs 2 --budget 0 --counters none --json -- "$BIG" --run 0.4
expect_rc 0 "compare of bigtext"
cp "$OUT" "$W/big.json"
json "$W/big.json"
F=$W/big.json.flat
for k in .time_ratio .time_ratio_min .time_ratio_max .time_ratio_low .time_ratio_high .itlb_ratio .source \
	.verdict .verdict_why .rule .pairs .stopped .budget_s .library.runs_moved; do
	jneed "$F" "$k" >/dev/null
done
[ "$(jget "$F" .source)" = none ] || fail "--counters none: source '$(jget "$F" .source)'"
[ "$(jget "$F" .itlb_ratio)" = null ] || fail "--counters none: itlb_ratio '$(jget "$F" .itlb_ratio)', expected null"
[ -n "$(jget "$F" .counters.why)" ] || fail "--counters none: no reason given"
[ "$(jget "$F" .pairs)" = 2 ] || fail "pairs '$(jget "$F" .pairs)', expected 2 (--runs 2 --budget 0)"
# two pairs: too few for a 95% interval, whatever the times
[ "$(jget "$F" .time_ratio_low)" = null ] || fail "an interval from 2 pairs: $(jget "$F" .time_ratio_low)"
[ "$(jget "$F" .verdict)" = "within the noise" ] || fail "2 pairs: verdict '$(jget "$F" .verdict)', expected 'within the noise'"
jget "$F" .verdict_why | grep -q "too few pairs for a 95% interval" || fail "2 pairs: the why does not say too few pairs"
order=$(for i in 0 1 2 3; do jget "$F" ".runs[$i].variant"; done | tr '\n' ' ')
[ "$order" = "plain library plain library " ] || fail "the runs are not alternated: $order"
ratio=$(jget "$F" .time_ratio)
awk -v r="$ratio" 'BEGIN { exit !(r > 0.5 && r < 2) }' || fail "time_ratio $ratio for a program that runs 0.4 s either way"
[ "$(jget "$F" .library.report)" = true ] || fail "the library wrote no report"
hb=$(jget "$F" .library.huge_bytes)
[ "$hb" -ge $((4 * H)) ] || fail "the library put $hb bytes of bigtext's 8 MiB on huge pages, expected at least 4 windows"
lhuge=$(jget "$F" .library.text_huge_kib)
[ "$lhuge" != null ] && [ "$lhuge" -ge $((4 * H / 1024)) ] ||
	fail "smaps sampled while it ran: $lhuge KiB of text huge with the library, expected at least 4 windows"
pss=$(jget "$F" .plain.text_pss_kib)
[ "$pss" != null ] && [ "$pss" -gt 1024 ] || fail "the plain run's text Pss '$pss' KiB"
echo "   bigtext: time ratio $ratio, huge with the library $hb bytes, text huge $lhuge KiB (plain Pss $pss KiB)"

# --- the model
VG=$TT_BUILD_DIR/bench/itlb/vglib/itlbgrind-amd64-linux
have_model=0
if [ -x "$VG" ] && command -v valgrind >/dev/null; then
	have_model=1
fi
case " ${TT_CFLAGS:-} " in
*sanitize*)
	# the sanitized build has no itlbgrind (a sanitized library cannot run
	# preloaded under Valgrind: bench/itlb/CMakeLists.txt); the model's
	# cases run in the plain build
	[ $have_model = 1 ] || note "the sanitized build has no itlbgrind: the model's cases are the plain build's"
	sanitized=1
	;;
*) sanitized=0 ;;
esac
if [ $have_model = 1 ]; then
	t model -- "$TOOL" compare --runs 1 --budget 0 --warmup 0 --counters model --json -- "$BIG" --run 0.5
	expect_rc 0 "compare --counters model"
	cp "$OUT" "$W/model.json"
	json "$W/model.json"
	F=$W/model.json.flat
	[ "$(jget "$F" .source)" = model ] || fail "--counters model: source '$(jget "$F" .source)'"
	pm=$(jget "$F" .plain.itlb_misses) lm=$(jget "$F" .library.itlb_misses)
	pw=$(jget "$F" .plain.walks) lw=$(jget "$F" .library.walks)
	ir=$(jget "$F" .itlb_ratio)
	echo "   model ($(jget "$F" .counters.model)): L1 iTLB misses plain $pm, library $lm (ratio $ir); walks $pw, $lw"
	[ "$pm" -gt 0 ] && [ "$pm" -gt $((lm * 3 / 2)) ] || fail "the model counts $pm misses plain and $lm with the library: expected well fewer with 4+ windows huge"
	[ "$pw" -gt "$lw" ] || fail "the model counts $pw walks plain and $lw with the library"
	awk -v r="$ir" 'BEGIN { exit !(r > 1.5) }' || fail "itlb_ratio $ir"
	t modeltext -- "$TOOL" compare --runs 1 --budget 0 --warmup 0 --counters model -- "$BIG" --run 0.3
	expect_rc 0 "compare --counters model (text)"
	expect_out "^iTLB misses +[0-9]+ +[0-9]+ +\(model: "
	expect_out "^model: predicts +[0-9.]+% (fewer|more) cycles with the library"
	expect_out "^verdict: (worth it|within the noise|costs more than it saves) \("
elif [ $sanitized = 0 ]; then
	fail "itlbgrind was not built in this tree ($VG) or valgrind is missing: install valgrind and configure again"
fi

# --- the PMU, or its absence said
t pmu -- "$TOOL" compare --runs 1 --budget 0 --warmup 0 --counters pmu --json -- true
if [ "$RC" -eq 0 ]; then
	cp "$OUT" "$W/pmu.json"
	json "$W/pmu.json"
	F=$W/pmu.json.flat
	[ "$(jget "$F" .source)" = pmu ] || fail "--counters pmu: source '$(jget "$F" .source)'"
	[ "$(jget "$F" .plain.instructions)" -gt 0 ] || fail "the PMU counted no instructions"
	echo "   this machine has hardware counters: iTLB misses plain $(jget "$F" .plain.itlb_misses), library $(jget "$F" .library.itlb_misses)"
	auto_src=pmu
else
	expect_bad 1 "--counters pmu without a hardware PMU" \
		"--counters pmu: (this machine has no hardware PMU counters \(perf_event_open: (ENOENT|EOPNOTSUPP|ENODEV) for hardware events|the hardware PMU counters are refused to this process \(perf_event_open: (EACCES|EPERM); kernel.perf_event_paranoid is|the hardware PMU counters cannot be opened)"
	grep -q "No such file or directory" "$ERR" && fail "the absence of a PMU said as an errno's text: $(cat "$ERR")"
	echo "   no hardware PMU here: $(cat "$ERR")"
	pmu_why=$(sed 's/^enormoustext compare: --counters pmu: //' "$ERR")
	auto_src=model
	[ $have_model = 1 ] || auto_src=none
fi
t auto -- "$TOOL" compare --runs 1 --budget 0 --warmup 0 --json -- true
expect_rc 0 "compare (counters auto)"
cp "$OUT" "$W/auto.json"
json "$W/auto.json"
[ "$(jget "$W/auto.json.flat" .source)" = "$auto_src" ] ||
	fail "--counters auto: source '$(jget "$W/auto.json.flat" .source)', expected $auto_src"
if [ "$auto_src" != pmu ]; then
	# the text says, in one line, that there is no PMU and what is used instead
	t autotext -- "$TOOL" compare --runs 1 --budget 0 --warmup 0 -- "$BIG" --run 0.2
	expect_rc 0 "compare (counters auto, text)"
	grep -F "counters " "$OUT" | grep -qF "$pmu_why" || fail "the counters line does not say why there is no PMU ($pmu_why)"
	if [ "$auto_src" = model ]; then
		expect_out "^counters +.*; iTLB misses from the model instead \(itlbgrind, [a-z0-9-]+: one more run of each under Valgrind\)$"
	else
		expect_out "^counters +.*: iTLB misses not counted; the verdict is from the time alone$"
	fi
fi

# --- the verdict (bigtext after the sleep: the library moves its text)
verdict() { cp "$OUT" "$W/v.json"; json "$W/v.json"; jget "$W/v.json.flat" .verdict; }
t faster -- "$TOOL" compare --budget 20 --counters none --json -- \
	sh -c '[ -n "$LD_PRELOAD" ] || sleep 0.2; exec "$0" --hold 0' "$BIG"
expect_rc 0 "a command slower plain"
[ "$(verdict)" = "worth it" ] || fail "a command slower only plain: verdict '$(verdict)', expected 'worth it'"
t slower -- "$TOOL" compare --budget 20 --counters none --json -- \
	sh -c '[ -z "$LD_PRELOAD" ] || sleep 0.2; exec "$0" --hold 0' "$BIG"
expect_rc 0 "a command slower with the library"
[ "$(verdict)" = "costs more than it saves" ] ||
	fail "a command slower only with the library: verdict '$(verdict)', expected 'costs more than it saves'"
# the library loaded and off: it moved nothing, so nothing to compare
# (once 'within the noise' was asked of it here, and a lost scheduler slice
# in every pair made it 'costs more than it saves')
t same ENORMOUSTEXT=0 -- "$TOOL" compare --counters none --json -- sleep 0.3
expect_rc 0 "a command the library is off in"
[ "$(verdict)" = "nothing to compare" ] ||
	fail "sleep 0.3, the library off: verdict '$(verdict)' ($(jget "$W/v.json.flat" .verdict_why)), expected 'nothing to compare'"
[ "$(jget "$W/v.json.flat" .stopped)" = "nothing moved" ] || fail "the library off: stopped '$(jget "$W/v.json.flat" .stopped)'"
t differ LD_PRELOAD="$TT_LIB" -- "$TOOL" compare --runs 1 --counters none --json -- \
	sh -c 'case "$LD_PRELOAD" in *libenormoustext*) exit 3 ;; esac; exit 0'
expect_rc 1 "a command that exits differently with the library"
[ "$(verdict)" = "behaves differently" ] || fail "exit 0 plain, 3 with the library: verdict '$(verdict)'"
[ "$(jget "$W/v.json.flat" .plain.exit_status)" = 0 ] ||
	fail "the plain run saw the library in LD_PRELOAD (exit $(jget "$W/v.json.flat" .plain.exit_status)): it must be taken out"
[ "$(jget "$W/v.json.flat" .library.exit_status)" = 3 ] || fail "the library run's exit status"

# --- the text output
t text -- "$TOOL" compare --runs 1 --budget 0 --counters none -- "$BIG" --run 0.3
expect_rc 0 "compare (text)"
expect_out "^time \(median\) +[0-9.]+ s +[0-9.]+ s$"
expect_out "^library: [0-9.]+[KMG]? huge \("
expect_out "^time ratio \(plain / library\): [0-9.]+x, the median of 1 pair; too few for a 95% interval; pairs "
expect_out "^rule: worth it when the 95% interval of the median time ratio lies above 1.01,$"
expect_out "^verdict: within the noise \("
grep -q "^compare: .*: 1 pair at least (after 1 warm-up pair)" "$ERR" ||
	fail "the first line on stderr does not say how many pairs run: $(head -1 "$ERR")"
grep -q $'\r' "$ERR" && fail "a progress line on stderr, which is not a terminal"

pass
