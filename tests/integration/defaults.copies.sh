#!/bin/bash
# integration.defaults.copies — with the defaults, a deferred pass copies
# only the windows that ran (ENORMOUSTEXT_COPY_MIN=256K).
#
# partrun: 8 MiB of text (the generated functions), PIE, linked with 4 KiB
# alignment, so that its windows are congruent with their file offsets only
# by chance (checked with readelf; and partrun says of its running copy —
# a congruent window would be primed into zero-copy, which is not what this
# test is about).  It runs only the functions of the one window that holds
# its middle function, then, where asked, all of them.  The library
# preloaded, no ENORMOUSTEXT_* variable but ENORMOUSTEXT_REPORT:
#   hot window only for 2.5 s   the pass (1 s) and the try 1 s later copy
#                               the hot window ('c') and leave the others
#                               small ('.') with the reason naming
#                               ENORMOUSTEXT_COPY_MIN;
#   hot 1.5 s, then all 2 s     the try 1 s after the pass looks again and
#                               copies the others too: every window 'c';
#   ENORMOUSTEXT_COPY_MIN=0     every window copied by the pass;
#   partrun-aligned, hot only   2 MiB p_align: congruent, the file written
#                               out: the cold windows copied too, since
#                               they are primed: every window 'z'.
# Every run's results are its plain run's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.bash"

[ -x "$IT_BIN/partrun" ] || fail "$IT_BIN/partrun is missing: build the tests first"
fresh "$IT_BIN" partrun
if command -v readelf >/dev/null 2>&1; then
	align=$(readelf -lW "$D/partrun" | awk '$1 == "LOAD" && / E / { print $NF; exit }')
	[ -n "$align" ] || fail "readelf finds no executable PT_LOAD in partrun"
	[ $((align)) -lt $((H_MIB * 1048576)) ] ||
		skip "partrun's text is linked with $align alignment (this toolchain's default max-page-size): the kernel would place its windows congruent with their file offsets, and the copies would be primed into zero-copy"
	echo "-- partrun: executable segment aligned to $align: its load address is random at page granularity"
else
	echo "-- readelf is not installed: partrun's alignment not checked (partrun checks its own windows)"
fi

run plain -- ./partrun --hot-ms 300
[ "$RC" -eq 0 ] || fail "the plain run failed, exit status $RC: $(grep -E 'FAIL|ERROR' "$OUT")"
BASE=$(grep '^partrun: results:' "$OUT")
[ -n "$BASE" ] || fail "the plain run printed no results line"

# lib LABEL [VAR=VALUE...] -- ARGS: a run with the library and a report;
# sets NWIN HOT KINDS REASONS (as the report says of partrun)
lib() {
	local label=$1 envs=() try
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	for try in 1 2 3; do
		run "$label" "${envs[@]}" ENORMOUSTEXT_REPORT="$D/$label.json" LD_PRELOAD="$PRE" -- ./partrun "$@"
		grep -q '^partrun: windows .* congruent no$' "$OUT" && break
		echo "   (this copy was loaded with its windows congruent with the file, a 1 in 512 chance: again)"
	done
	grep -q '^partrun: windows .* congruent no$' "$OUT" ||
		skip "partrun was loaded congruent with its file three times: this kernel aligns it (it must not be, for this test)"
	[ "$RC" -eq 0 ] || fail "$label: partrun exited $RC: $(grep -E 'FAIL|ERROR' "$OUT")"
	[ "$(grep '^partrun: results:' "$OUT")" = "$BASE" ] || fail "$label: the results differ from the plain run's"
	stderr_empty "$label: ENORMOUSTEXT_VERBOSE unset"
	read -r NWIN HOT < <(sed -n 's/^partrun: windows \([0-9]*\) hot \([0-9]*\) .*/\1 \2/p' "$OUT")
	KINDS=$(report_val "$D/$label.json" "$D/partrun" window_kinds)
	REASONS=$(report_reasons "$D/$label.json" "$D/partrun")
	# partrun counts the whole windows; the report also lists a partial
	# first or last window the library padded ('p', ENORMOUSTEXT_PAD_THRESHOLD),
	# which happens or not with where the kernel put the text: set aside
	ALLKINDS=$KINDS
	KINDS=${KINDS#p}
	KINDS=${KINDS%p}
	PADS=$((${#ALLKINDS} - ${#KINDS}))
	[ "${#KINDS}" -eq "$NWIN" ] || fail "$label: window kinds '$ALLKINDS' in the report ($PADS padded), but partrun counts $NWIN whole windows"
	echo "-- $label: $NWIN windows, the hot one is $HOT; window kinds '$ALLKINDS' ($PADS padded partial window(s) set aside); $(grep -c . <<<"$REASONS") reason(s): $(tr '\n' '|' <<<"$REASONS")"
	echo "   what had run at 0.9 s: $(sed -n 's/^partrun: window \([0-9]*\): \([0-9]*\) KiB present/\1: \2 KiB/p' "$OUT" | tr '\n' ' ')"
}
# the window kinds expected: 'c' at the hot window, '.' elsewhere
only_hot() {
	local i s=""
	for ((i = 0; i < NWIN; i++)); do
		if [ "$i" -eq "$HOT" ]; then s+=c; else s+=.; fi
	done
	echo "$s"
}
all_c() { printf 'c%.0s' $(seq "$NWIN"); }

lib hot -- --hot-ms 2500
[ "$PADS" -eq 0 ] || fail "only window $HOT ran: a partial window was padded (window kinds '$ALLKINDS'), though hardly any of it ran"
[ "$KINDS" = "$(only_hot)" ] ||
	fail "only window $HOT ran: window kinds '$KINDS', expected '$(only_hot)' (the window that ran copied, the others left small)"
grep -qF 'too little of it has run for a copy to pay (ENORMOUSTEXT_COPY_MIN)' <<<"$REASONS" ||
	fail "the windows left small do not give the reason naming ENORMOUSTEXT_COPY_MIN: $(tr '\n' '|' <<<"$REASONS")"

lib later -- --hot-ms 1500 --all-ms 2000
[ "$KINDS" = "$(all_c)" ] ||
	fail "every window ran from 1.5 s on: the try 1 s after the pass must copy them all: window kinds '$KINDS', expected '$(all_c)'"

lib min0 ENORMOUSTEXT_COPY_MIN=0 -- --hot-ms 1500
[ "$KINDS" = "$(all_c)" ] ||
	fail "ENORMOUSTEXT_COPY_MIN=0: every window must be copied: window kinds '$KINDS', expected '$(all_c)'"

# congruent (partrun-aligned: 2 MiB p_align), the file written out: the
# windows that did not run are copied all the same, because they are
# primed — read back huge into the page cache, then mapped zero-copy — and
# from then on every process gets them from there; left small, they would
# stay small for everyone.  Every window 'z' (zero-copy), none held back.
[ -x "$IT_BIN/partrun-aligned" ] || fail "$IT_BIN/partrun-aligned is missing: build the tests first"
cp "$IT_BIN/partrun-aligned" "$D/" || fail "cannot copy partrun-aligned"
sync "$D/partrun-aligned"
run aligned ENORMOUSTEXT_REPORT="$D/aligned.json" LD_PRELOAD="$PRE" -- ./partrun-aligned --hot-ms 2500
[ "$RC" -eq 0 ] || fail "aligned: partrun-aligned exited $RC: $(grep -E 'FAIL|ERROR' "$OUT")"
[ "$(grep '^partrun: results:' "$OUT")" = "$BASE" ] || fail "aligned: the results differ from the plain run's"
grep -q '^partrun: windows .* congruent yes$' "$OUT" ||
	skip "partrun-aligned (p_align 2 MiB) was not loaded congruent with its file: this kernel does not align PIEs to p_align"
read -r NWIN HOT < <(sed -n 's/^partrun: windows \([0-9]*\) hot \([0-9]*\) .*/\1 \2/p' "$OUT")
KINDS=$(report_val "$D/aligned.json" "$D/partrun-aligned" window_kinds)
REASONS=$(report_reasons "$D/aligned.json" "$D/partrun-aligned")
echo "-- aligned: $NWIN windows, the hot one is $HOT; window kinds '$KINDS'; reasons: $(tr '\n' '|' <<<"$REASONS")"
KINDS=${KINDS#p}
KINDS=${KINDS%p}
echo "   what had run at 0.9 s: $(sed -n 's/^partrun: window \([0-9]*\): \([0-9]*\) KiB present/\1: \2 KiB/p' "$OUT" | tr '\n' ' ')"
[ "$KINDS" = "$(printf 'z%.0s' $(seq "$NWIN"))" ] ||
	fail "a congruent, clean file: every window must end zero-copy, the cold ones too (copied, then primed): window kinds '$KINDS'"

pass
