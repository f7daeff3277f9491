#!/bin/bash
# tool_systemd_example — examples/systemd/mariadb-hugetext.conf is a valid
# drop-in: its [Service] lines in a unit, checked by systemd-analyze (no
# warning).
. "$(dirname "$0")/lib.sh"

command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
ex=$TT_SRC/../../examples/systemd/mariadb-hugetext.conf
{ printf '[Unit]\nDescription=check\n[Service]\nExecStart=/bin/true\n'
  sed -n '/^\[Service\]/,$p' "$ex" | tail -n +2; } >"$W/hugetext-check.service"
grep -q '^ExecStartPre=.*enormoustext prime ' "$W/hugetext-check.service" || fail "the example has no ExecStartPre prime line"
grep -q '^Environment=LD_PRELOAD=.*libenormoustext.so' "$W/hugetext-check.service" || fail "the example does not preload the library"
t verify -- systemd-analyze verify "$W/hugetext-check.service"
expect_rc 0 "systemd-analyze verify"
[ ! -s "$ERR" ] || fail "systemd-analyze has something to say: $(head -3 "$ERR")"
# the command line it runs is a valid one (here on a file of ours)
cmd=$(sed -n 's/^ExecStartPre=-\/usr\/local\/bin\/enormoustext //p' "$ex")
[ -n "$cmd" ] || fail "cannot read the ExecStartPre command"
bigdso big.so
# shellcheck disable=SC2086 # the command's words
t run -- "$TOOL" ${cmd%% *} --check "$W/big.so"
expect_rc 0 "enormoustext ${cmd%% *} from the example"

pass
