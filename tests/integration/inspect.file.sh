#!/bin/bash
# integration.inspect.file — inspect primed, ENORMOUSTEXT_BACKEND=file: the
# level_* windows swapped in zero-copy by the library, and libunwind names the
# functions.
#
# Moved code stays inspectable: C++ exceptions, backtrace()/unw_backtrace
# with dladdr, a perf map (ENORMOUSTEXT_PERFMAP=1), gdb breakpoints, and
# perf report naming functions in moved text.
#
# Zero-copy windows: the library maps the file itself, huge from a
# primed page cache, so every tool sees the file as before; here
# libunwind's unw_get_proc_name, which cannot name anonymous copies.
. "$(dirname "$0")/lib.sh"

inspect_setup
need_file_thp
run base -- ./inspect
grep -q 'NOT moved' "$OUT" || fail "before priming, without the library, the level_ functions should be small"
run prime -- "$IT_TOOL" prime ./inspect
[ "$RC" -eq 0 ] || fail "enormoustext prime exited $RC"
run lib ENORMOUSTEXT_BACKEND=file ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_REPORT="$D/r.json" LD_PRELOAD="$PRE" -- ./inspect --file
[ "$RC" -eq 0 ] || fail "$(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
grep -q 'inspect: .*MiB zero-copy' "$ERR" || fail "the library did not report the windows as zero-copy"
# the library swapped the windows in itself (file-backed slots):
# not only the kernel mapping them at a fault
"$JSON_FLAT" "$D/r.json" >"$D/r.flat" || fail "the report is not valid JSON"
rb=$(awk -F '\t' '$1 == ".remapped_bytes" { print $3 }' "$D/r.flat")
zb=$(awk -F '\t' '$1 == ".zero_copy_bytes" { print $3 }' "$D/r.flat")
echo "-- report: remapped_bytes $rb, zero_copy_bytes $zb"
[ "${rb:-0}" -gt 0 ] && [ "${zb:-0}" -gt 0 ] || fail "no window swapped in zero-copy by the library (remapped $rb, zero-copy $zb)"

pass
