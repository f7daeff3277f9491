#!/bin/bash
# tool_enable_edges — `enable mariabd` (a typo; no such unit) warns in one
# line naming the unit and the services nearest to its name, and writes the
# drop-in all the same (a unit installed later: image building); a unit
# that is there, or a name near to none, draws no suggestion; `enable
# --binary` and `enable UNIT` as a user say that root is needed, before
# anything is read or written (it failed a write halfway), and --dry-run
# needs no root.
. "$(dirname "$0")/lib.sh"

R=$W/root
mkdir -p "$R/usr/lib/systemd/system" "$R/etc/systemd/system"
for u in mariadb mysql redis-server; do
	printf '[Service]\nExecStart=/bin/true\n' >"$R/usr/lib/systemd/system/$u.service"
done
t typo -- "$TOOL" enable mariabd --root "$R"
expect_rc 0
[ "$(wc -l <"$ERR")" = 1 ] || fail "enable mariabd: $(wc -l <"$ERR") lines on stderr, expected one warning"
grep -qE "^enormoustext enable: warning: mariabd\\.service: no unit file of that name .*; did you mean mariadb\\.service\\?\$" "$ERR" ||
	fail "enable mariabd does not warn and suggest mariadb.service: $(cat "$ERR")"
grep -q "redis-server" "$ERR" && fail "enable mariabd suggests redis-server, not near"
[ -f "$R/etc/systemd/system/mariabd.service.d/enormoustext.conf" ] || fail "the drop-in was not written"
t typodry -- "$TOOL" enable mysq --root "$R" --dry-run
expect_rc 0; grep -q "did you mean mysql\\.service?" "$ERR" || fail "enable mysq does not suggest mysql.service: $(cat "$ERR")"
t known -- "$TOOL" enable mariadb --root "$R"
expect_rc 0; expect_no_err "enable of a unit that is there"
t far -- "$TOOL" enable zzzzzzzzzz --root "$R" --dry-run
expect_rc 0
grep -q "^enormoustext enable: warning: zzzzzzzzzz\\.service: no unit file of that name .*the drop-in is written all the same\$" "$ERR" ||
	fail "a unit near to none: $(cat "$ERR")"
grep -q "did you mean" "$ERR" && fail "a unit near to none gets a suggestion"

# as a user: root is needed, said first; nothing written
t binary -- "$TT_BIN/tt_asuser" nobody "$TOOL" enable --binary /bin/true
[ "$RC" -ne 77 ] || skip "tt_asuser cannot switch users here: $(cat "$OUT")"
expect_bad 1 "enable --binary as nobody" "^enormoustext enable: enable --binary needs root: it writes /etc/ld.so.preload and .*; run it as root \\(sudo\\), or see what it would write with --dry-run\$"
expect_no_out
t unit -- "$TT_BIN/tt_asuser" nobody "$TOOL" enable mariadb
expect_bad 1 "enable UNIT as nobody" "^enormoustext enable: enable UNIT needs root: it writes /etc/systemd/system/UNIT.d/enormoustext.conf"
t disable -- "$TT_BIN/tt_asuser" nobody "$TOOL" disable --binary /bin/true
expect_bad 1 "disable --binary as nobody" "^enormoustext disable: disable --binary needs root: .*see what it would remove with --dry-run\$"
t dry -- "$TT_BIN/tt_asuser" nobody "$TOOL" enable --binary /bin/true --dry-run
grep -q "needs root" "$ERR" && fail "enable --binary --dry-run as nobody says root is needed"
true

pass
