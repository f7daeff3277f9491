#!/bin/bash
# integration.report — ENORMOUSTEXT_REPORT: valid JSON naming both objects,
# each with huge_bytes > 0.
. "$(dirname "$0")/lib.sh"

[ -x "$JSON_FLAT" ] || fail "$JSON_FLAT missing"
std_baseline bigtext
rep=$D/report.json
run lib ENORMOUSTEXT_REPORT="$rep" LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
expect_pass "ENORMOUSTEXT_REPORT"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"
[ -s "$rep" ] || fail "ENORMOUSTEXT_REPORT=$rep: no report written (or it is empty)"
echo "-- the report:"
sed 's/^/   | /' "$rep"
"$JSON_FLAT" "$rep" >"$D/report.flat" 2>"$D/report.err" ||
	fail "the report is not valid JSON: $(cat "$D/report.err")"
grep -q '^\.objects' "$D/report.flat" || fail "the report has no top-level \"objects\""
grep -q '"huge_bytes"' "$rep" || fail "the report has no \"huge_bytes\""
for role in exe lib; do
	f=$D/bigtext
	[ $role = lib ] && f=$D/libbigtext.so
	f=$(realpath "$f")
	# The object (JSON path prefix) that has a string member equal to the file's path.
	obj=$(awk -F '\t' -v p="$f" '$2 == "string" && $3 == p { sub(/\.[^.\[]*$/, "", $1); print $1; exit }' "$D/report.flat")
	[ -n "$obj" ] || fail "the report does not name the $role's path $f"
	hb=$(awk -F '\t' -v k="$obj.huge_bytes" '$1 == k && $2 == "number" { print $3 }' "$D/report.flat")
	[ -n "$hb" ] || fail "the report's entry for $f ($obj) has no numeric huge_bytes"
	[ "$hb" -gt 0 ] 2>/dev/null || fail "the report says huge_bytes = $hb for $f, but it is huge"
	echo "-- report: $role $f is $obj, huge_bytes $hb"
done

pass
