#!/bin/bash
# tool_stat_copied_clang — tool_stat_copied's checks on a real program whose
# every text window the library copied: clang++ (it runs cc1 in its own
# process) compiling from a FIFO, stopped there while the command looks at
# it.  Its big libraries (libLLVM, libclang-cpp: the first PT_LOAD of
# libLLVM-14 is executable at offset 0) have copies with no mapping of
# their file before them.  Against the library's report: `stat --json`
# attributes >= 95% of the huge text to the files it came from, perfmap
# covers >= 95% of the copied bytes in as many objects, `collapse --dry-run`
# lists no copy as JIT code, the Prometheus per-object figures are stat's
# (tt_copied.py).  Skipped (77) without clang++, and in a sanitized tree
# (its library cannot be preloaded into an unsanitized clang++).
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || fail "python3 is missing (tools/run-tests installs it)"
command -v clang++ >/dev/null || skip "clang++ is not installed (package clang): tool_stat_copied does the same on a program of its own"
case " ${TT_CFLAGS:-} " in
*sanitize*) skip "a sanitized library cannot be preloaded into clang++ (the sanitizer's runtime must be loaded first): tool_stat_copied does the same on a sanitized program" ;;
esac

REPORT=$W/clang.report.json
mkfifo "$W/src" || fail "cannot make a FIFO"
env LD_PRELOAD="$TT_LIB" ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_COPY_MIN=0 ENORMOUSTEXT_REPORT="$REPORT" \
	clang++ -O2 -c -x c++ - -o "$W/out.o" <"$W/src" >"$W/clang.out" 2>&1 &
P=$!
PIDS+=("$P")
exec {feed}>"$W/src"   # clang++ waits on its standard input until this closes
report_or_gone() { [ -s "$REPORT" ] || ! kill -0 "$P" 2>/dev/null; }
wait_until 10 report_or_gone || true
[ -s "$REPORT" ] || fail "clang++ (pid $P) wrote no report: $(cat "$W/clang.out")"
echo "-- clang++ -x c++ - under the library: pid $P, reading $W/src"

copied_attributed "$P" "$REPORT" ||
	fail "the command does not attribute clang++'s copied text to its files (above)"
t stat -- "$TOOL" stat "$P"
expect_rc 0; expect_no_err
expect_out "libLLVM.* \(.* of it in anonymous copies\)$" "stat's line of libLLVM"

# the compile goes on and ends well
echo 'int f(int x) { return x + 1; }' >&"$feed"
exec {feed}>&-
wait "$P" || fail "clang++ under the library failed: $(cat "$W/clang.out")"
[ -s "$W/out.o" ] || fail "clang++ wrote no object file"

pass
