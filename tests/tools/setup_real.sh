#!/bin/bash
# tool_setup_real — (root, else skip; run alone) `setup` on the real settings:
# --dry-run of the current values; real writes of the values already set,
# printed with (was ...) and unchanged after (an exit hook puts them back in
# any case); as nobody refused with a line naming the file, --dry-run allowed.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "not root: the real settings cannot be written (setup_saved tests the writes on a tree)"
sys=/sys/kernel/mm/transparent_hugepage
pool=/sys/kernel/mm/hugepages/hugepages-$((H >> 10))kB/nr_hugepages
en=$(choice $sys/enabled); df=$(choice $sys/defrag); np=$(cat "$pool")
[ -n "$en" ] && [ -n "$df" ] || skip "no THP settings on this kernel"
# Whatever happens, the settings are put back.
EXIT_HOOKS+=("[ \"\$(choice $sys/enabled)\" = $en ] || echo $en >$sys/enabled; [ \"\$(choice $sys/defrag)\" = $df ] || echo $df >$sys/defrag")
t dry -- "$TOOL" setup --dry-run --thp "$en" --defrag "$df" --hugetlb-pages "$np"
expect_rc 0; expect_no_err
expect_out "^would write $sys/enabled: $en \\(was $en\\)\$"
expect_out "^would write $sys/defrag: $df \\(was $df\\)\$"
expect_out "^would write $pool: $np \\(was $np\\)\$"
# Real writes of the values already set: printed, made, read back.
t write -- "$TOOL" setup --thp "$en" --defrag "$df" --hugetlb-pages "$np"
expect_rc 0; expect_no_err
expect_out "^write $sys/enabled: $en \\(was $en\\)\$"
expect_out "^write $sys/defrag: $df \\(was $df\\)\$"
expect_out "^write $pool: $np \\(was $np\\)\$"
[ "$(choice $sys/enabled)" = "$en" ] && [ "$(choice $sys/defrag)" = "$df" ] && [ "$(cat "$pool")" = "$np" ] ||
	fail "the settings changed"
# Not root: refused, and --dry-run still works.
t nobody -- "$TT_BIN/tt_asuser" nobody "$TOOL" setup --thp "$en"
expect_bad 1 "setup as nobody" "needs root to write $sys/enabled"
expect_no_out
t nobodydry -- "$TT_BIN/tt_asuser" nobody "$TOOL" setup --dry-run --thp "$en"
expect_rc 0 "setup --dry-run as nobody"

pass
