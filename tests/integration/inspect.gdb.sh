#!/bin/bash
# integration.inspect.gdb — gdb attaches to a preloaded process spinning in
# moved code, stops at a breakpoint in a moved (anonymous) window, and
# backtraces through it.
#
# Moved code stays inspectable: C++ exceptions, backtrace()/unw_backtrace
# with dladdr, a perf map (ENORMOUSTEXT_PERFMAP=1), gdb breakpoints, and
# perf report naming functions in moved text.
. "$(dirname "$0")/lib.sh"

inspect_setup
command -v gdb >/dev/null || skip "gdb is not installed"
# gdb attaches to the running process (its text already moved) and
# sets its breakpoint in moved code.  (A breakpoint set before the
# program starts changes the file text in memory first: the library
# then leaves that window alone — see the 'uprobe' test.)
(cd "$D" && exec env LD_PRELOAD="$PRE" ./inspect --spin 10) >"$D/spin.out" 2>&1 &
spin=$!
EXIT_HOOKS+=("kill $spin 2>/dev/null")
wait_line "$D/spin.out" '^ready' 5
pid=$(sed -n 's/^ready //p' "$D/spin.out")
[ -n "$pid" ] || fail "inspect --spin did not start: $(cat "$D/spin.out")"
sleep 0.2
run gdb -- gdb -nx -batch -p "$pid" -ex 'break level_c' -ex continue -ex bt -ex 'info symbol $pc' \
	-ex 'printf "pc=%#lx\n", $pc' -ex 'info proc mappings' -ex 'delete' -ex detach
kill "$spin" 2>/dev/null
grep -qE '^Breakpoint 1, .*level_c' "$OUT" || fail "gdb did not stop at the breakpoint in level_c"
grep -qE '#1 .*level_b' "$OUT" && grep -qE '#2 .*level_a' "$OUT" ||
	fail "gdb's backtrace from level_c does not go through level_b and level_a"
grep -q 'level_c in section .text' "$OUT" || fail "gdb does not name the moved pc"
# The breakpoint was hit in a moved window: an anonymous mapping.
pc=$(sed -n 's/^pc=\(0x[0-9a-f]*\)$/\1/p' "$OUT")
[ -n "$pc" ] || fail "gdb printed no pc"
anon=""
while read -r start end _ _ perms objfile _; do
	case "$start $end" in 0x*" "0x*) ;; *) continue ;; esac
	if (( pc >= start && pc < end )); then
		echo "   mapping of the pc $pc: $start-$end $perms ${objfile:-(anonymous)}"
		[ -z "$objfile" ] && anon=yes
	fi
done <"$OUT"
[ -n "$anon" ] || fail "the breakpoint at $pc was not hit in a moved (anonymous) window"

pass
