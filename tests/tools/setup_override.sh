#!/bin/bash
# tool_setup_override — `setup --persist` notices the files systemd reads
# at boot that set the same thing and win over ours (they were silent):
# a sysctl.d file whose name sorts after 60-enormoustext.conf and sets
# vm.nr_hugepages (in /etc/sysctl.d or /usr/lib/sysctl.d; one hidden by a
# file of the same name in /etc is not read), /etc/sysctl.conf, and a
# tmpfiles.d file whose name sorts before ours and writes THP's enabled.
# Each is one warning naming the file and the value it sets; files that
# sort on the other side, comments, other keys draw none; the files are
# written all the same.  Also --dry-run.  All on a --root tree.
. "$(dirname "$0")/lib.sh"

r=$W/root
fake_sysfs "$r" madvise madvise 0
mkdir -p "$r/proc" "$r/etc/sysctl.d" "$r/usr/lib/sysctl.d" "$r/etc/tmpfiles.d" "$r/usr/lib/tmpfiles.d"
printf 'MemTotal:        4194304 kB\nHugepagesize:       2048 kB\n' >"$r/proc/meminfo"
# read after ours, sets it: wins
printf '# tuning\nvm.swappiness = 10\nvm.nr_hugepages = 0\n' >"$r/etc/sysctl.d/99-tuning.conf"
# read after ours, in /usr/lib: wins too
printf 'vm/nr_hugepages=5\n' >"$r/usr/lib/sysctl.d/80-vendor.conf"
# read before ours: ours wins, no warning
printf 'vm.nr_hugepages = 7\n' >"$r/etc/sysctl.d/10-early.conf"
# commented out, or another key: no warning
printf '# vm.nr_hugepages = 3\nvm.nr_hugepages_mempolicy = 1\n' >"$r/etc/sysctl.d/90-comment.conf"
# hidden: /etc/sysctl.d/95-hidden.conf (no such key) hides /usr/lib's
printf 'vm.nr_hugepages = 9\n' >"$r/usr/lib/sysctl.d/95-hidden.conf"
printf 'kernel.pid_max = 65536\n' >"$r/etc/sysctl.d/95-hidden.conf"
# /etc/sysctl.conf: sysctl --system reads it last
printf 'vm.nr_hugepages=2\n' >"$r/etc/sysctl.conf"
# tmpfiles.d: for one path the first name wins; before ours, writing enabled
printf 'w /sys/kernel/mm/transparent_hugepage/enabled - - - - always\n' >"$r/usr/lib/tmpfiles.d/00-thp.conf"
# after ours: ours wins
printf 'w /sys/kernel/mm/transparent_hugepage/enabled - - - - never\n' >"$r/etc/tmpfiles.d/zz-late.conf"

for mode in dry real; do
	extra=()
	[ $mode = dry ] && extra=(--dry-run)
	t "$mode" -- "$TOOL" setup --root "$r" --persist --thp madvise --hugetlb-pages 8 "${extra[@]}"
	expect_rc 0
	sed 's/^/   warn| /' "$ERR"
	grep -q "^enormoustext setup: warning: $r/etc/sysctl.d/99-tuning.conf sets vm.nr_hugepages = 0 too and is read after ours: at boot 0 wins over 8" "$ERR" ||
		fail "$mode: no warning for /etc/sysctl.d/99-tuning.conf"
	grep -q "warning: $r/usr/lib/sysctl.d/80-vendor.conf sets vm.nr_hugepages = 5 too" "$ERR" ||
		fail "$mode: no warning for /usr/lib/sysctl.d/80-vendor.conf (vm/nr_hugepages)"
	grep -q "warning: $r/etc/sysctl.conf sets vm.nr_hugepages = 2 too and \`sysctl --system\` reads it after ours" "$ERR" ||
		fail "$mode: no warning for /etc/sysctl.conf"
	grep -q "warning: $r/usr/lib/tmpfiles.d/00-thp.conf sets enabled = always too and is read before ours: at boot always wins over madvise" "$ERR" ||
		fail "$mode: no warning for tmpfiles.d/00-thp.conf"
	for quiet in 10-early 90-comment 95-hidden zz-late; do
		grep -q "$quiet" "$ERR" && fail "$mode: a warning for $quiet.conf, which does not win over ours"
	done
	[ "$(wc -l <"$ERR")" = 4 ] || fail "$mode: $(wc -l <"$ERR") lines on stderr, expected the 4 warnings"
done
grep -q '^vm.nr_hugepages = 8$' "$r/etc/sysctl.d/60-enormoustext.conf" || fail "ours was not written"
# without any of them: no warning
rm -f "$r/etc/sysctl.d/99-tuning.conf" "$r/usr/lib/sysctl.d/80-vendor.conf" "$r/etc/sysctl.conf" "$r/usr/lib/tmpfiles.d/00-thp.conf"
t clean -- "$TOOL" setup --root "$r" --persist --thp madvise --hugetlb-pages 8
expect_rc 0; expect_no_err

pass
