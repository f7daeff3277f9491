#!/bin/bash
# tool_setup_persist — `setup --persist`, `--undo` and `--hugetlb SIZE`, all
# on a --root tree (this machine's settings and /etc are never touched):
# --dry-run prints the files and writes nothing; the files' exact contents
# (marker line first, "# was" values, mode 0644) and the sysfs writes; a
# second --persist keeps what the first persisted; a non-default pool page
# size goes to the tmpfiles.d file; systemd-tmpfiles --root applies the file
# as written; a file without the marker is refused before anything is
# written; --undo removes exactly the marked files, says what they set,
# leaves the running settings and a foreign file alone; sizes with units
# (1G, 512M, 2048k), a bad unit, a size not a multiple of the page size,
# the MemTotal check (refused above 50% naming the figures, --force,
# a warning above 25%).
. "$(dirname "$0")/lib.sh"

r=$W/root s=$W/root/sys/kernel/mm
fake_sysfs "$r" madvise madvise 0
mkdir -p "$r/proc"
# MemTotal of the tree: 4 GiB (the size check's figures are exact then).
printf 'MemTotal:        4194304 kB\nHugepagesize:       2048 kB\n' >"$r/proc/meminfo"
tf=$r/etc/tmpfiles.d/enormoustext.conf sf=$r/etc/sysctl.d/60-enormoustext.conf
marker="# Written by enormoustext setup --persist; enormoustext setup --undo removes it."
thp=/sys/kernel/mm/transparent_hugepage

# --dry-run: the writes and the files printed, nothing written.
cp -r "$r" "$W/orig"
t dry -- "$TOOL" setup --root "$r" --dry-run --persist --thp never --defrag defer --hugetlb 64M
expect_rc 0; expect_no_err
expect_out "^would write $s/transparent_hugepage/enabled: never \\(was madvise\\)\$"
expect_out "^would write $s/hugepages/hugepages-2048kB/nr_hugepages: 32 \\(was 10\\)\$"
expect_out "^would write $tf \\(systemd-tmpfiles applies it at boot\\):\$"
expect_out "^would write $sf \\(systemd-sysctl applies it at boot\\):\$"
expect_out "^    w $thp/enabled - - - - never\$"
expect_out "^    vm.nr_hugepages = 32\$"
diff -r "$W/orig" "$r" >/dev/null || fail "--dry-run changed the tree: $(diff -r "$W/orig" "$r" | head -5)"
[ ! -e "$r/etc" ] || fail "--dry-run made $r/etc"

# --persist: the sysfs writes, then the two files, exactly.
t persist -- "$TOOL" setup --root "$r" --persist --thp never --defrag defer --hugetlb 64M
expect_rc 0; expect_no_err
[ "$(cat "$s/transparent_hugepage/enabled")" = never ] || fail "enabled not written"
[ "$(cat "$s/hugepages/hugepages-2048kB/nr_hugepages")" = 32 ] || fail "the pool not written (64M = 32 pages of 2M)"
cat >"$W/tf.expected" <<-EOF
$marker
# Huge-page settings for program text (libenormoustext), written at boot by systemd-tmpfiles.
# was madvise
w $thp/enabled - - - - never
# was madvise
w $thp/defrag - - - - defer
EOF
cat >"$W/sf.expected" <<-EOF
$marker
# The hugetlb pool for program text (libenormoustext), set at boot by systemd-sysctl.
# was 10
vm.nr_hugepages = 32
EOF
diff -u "$W/tf.expected" "$tf" || fail "the tmpfiles.d file is not the expected one (diff above)"
diff -u "$W/sf.expected" "$sf" || fail "the sysctl.d file is not the expected one (diff above)"
[ "$(stat -c %a "$tf")" = 644 ] && [ "$(stat -c %a "$sf")" = 644 ] || fail "the files are not mode 0644"
[ -z "$(find "$r/etc" -name '*.tmp*' -o -name '.*' -type f)" ] || fail "temporary files left in $r/etc"
# The printed contents are the file's.
sed -n "\\|^write $tf|,/^write /p" "$OUT" | sed -n 's/^    //p' | diff -u "$W/tf.expected" - ||
	fail "what --persist printed for $tf is not what it wrote"

# A second --persist keeps what the first one persisted; its "# was" stays.
t again -- "$TOOL" setup --root "$r" --persist --defrag madvise
expect_rc 0
grep -qx "w $thp/enabled - - - - never" "$tf" || fail "the second --persist dropped the enabled line"
grep -qx "w $thp/defrag - - - - madvise" "$tf" || fail "the second --persist did not change defrag"
[ "$(grep -c '^# was madvise$' "$tf")" = 2 ] || fail "the '# was' values changed: $(cat "$tf")"
diff -u "$W/sf.expected" "$sf" || fail "--persist --defrag changed the sysctl.d file"

# A pool of another page size: a tmpfiles.d line (vm.nr_hugepages is the
# default size's).
t gig -- "$TOOL" setup --root "$r" --persist --hugetlb 1G --hugetlb-size 1G
expect_rc 0
grep -qx "w /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages - - - - 1" "$tf" ||
	fail "the 1G pool is not in the tmpfiles.d file: $(cat "$tf")"

# systemd-tmpfiles reads the file as written (into the tree: --root).  The
# values are this machine's own, so that nothing could change even if it
# wrote elsewhere.
if command -v systemd-tmpfiles >/dev/null && [ -r $thp/enabled ]; then
	en=$(choice $thp/enabled) df=$(choice $thp/defrag)
	r2=$W/root2
	fake_sysfs "$r2" madvise madvise 0
	t real -- "$TOOL" setup --root "$r2" --persist --thp "$en" --defrag "$df"
	expect_rc 0
	: >"$r2$thp/enabled"; : >"$r2$thp/defrag"
	t tmpfiles -- systemd-tmpfiles --root="$r2" --create "$r2/etc/tmpfiles.d/enormoustext.conf"
	expect_rc 0 "systemd-tmpfiles --create"
	[ "$(cat "$r2$thp/enabled")" = "$en" ] && [ "$(cat "$r2$thp/defrag")" = "$df" ] ||
		fail "systemd-tmpfiles did not apply the file: enabled '$(cat "$r2$thp/enabled")', defrag '$(cat "$r2$thp/defrag")'"
else
	note "no systemd-tmpfiles here: the file is checked by its contents only"
fi

# A file that is not ours: refused, before anything is written.
mkdir -p "$W/r3"
fake_sysfs "$W/r3" madvise madvise 0
mkdir -p "$W/r3/etc/sysctl.d"
echo "vm.nr_hugepages = 7" >"$W/r3/etc/sysctl.d/60-enormoustext.conf"
cp -r "$W/r3" "$W/r3.orig"
t foreign -- "$TOOL" setup --root "$W/r3" --persist --thp never --hugetlb-pages 4
expect_bad 1 "a sysctl.d file without the marker" "60-enormoustext.conf: not written by enormoustext setup \\(no marker line\\): not replaced"
diff -r "$W/r3.orig" "$W/r3" >/dev/null || fail "the refused --persist changed something: $(diff -r "$W/r3.orig" "$W/r3" | head -3)"
mkdir -p "$W/r3/etc/tmpfiles.d"
ln -s /etc/hostname "$W/r3/etc/tmpfiles.d/enormoustext.conf"
t link -- "$TOOL" setup --root "$W/r3" --persist --thp never
expect_bad 1 "a symbolic link where the tmpfiles.d file goes" "enormoustext.conf: not written by enormoustext setup \\(a symbolic link\\)"

# --undo --dry-run removes nothing; --undo removes exactly the marked files.
cp "$tf" "$W/tf.before"
t undodry -- "$TOOL" setup --root "$r" --undo --dry-run
expect_rc 0
expect_out "^would remove $tf \\(it set enabled never, defrag madvise, nr_hugepages 1\\)\$"
expect_out "^would remove $sf \\(it set vm.nr_hugepages 32\\)\$"
cmp -s "$tf" "$W/tf.before" && [ -e "$sf" ] || fail "--undo --dry-run removed something"
echo "# someone else's" >"$r/etc/tmpfiles.d/other.conf"
cp -r "$r/sys" "$W/sys.before"
t undo -- "$TOOL" setup --root "$r" --undo
expect_rc 0; expect_no_err
expect_out "^remove $tf \\(it set enabled never, defrag madvise, nr_hugepages 1\\)\$"
expect_out "^remove $sf \\(it set vm.nr_hugepages 32\\)\$"
expect_out "^the running settings are unchanged; to put back what they were before --persist:\$"
# the commands that put the settings back name the root they were made
# under (without it they would change this system's settings)
expect_out "^  enormoustext setup --root $r --thp madvise --defrag madvise\$"
expect_out "^  enormoustext setup --root $r --hugetlb-pages 10\$"
expect_out "^  enormoustext setup --root $r --hugetlb-pages 0 --hugetlb-size 1G\$"
[ ! -e "$tf" ] && [ ! -e "$sf" ] || fail "--undo left a marked file"
[ -e "$r/etc/tmpfiles.d/other.conf" ] || fail "--undo removed a file it did not write"
diff -r "$W/sys.before" "$r/sys" >/dev/null || fail "--undo changed a running setting"
t undo2 -- "$TOOL" setup --root "$r" --undo
expect_rc 0; expect_out "^nothing to undo: "
t undofor -- "$TOOL" setup --root "$W/r3" --undo
expect_rc 0
expect_out "^left alone $W/r3/etc/sysctl.d/60-enormoustext.conf: not written by enormoustext setup \\(no marker line\\)\$"
[ -e "$W/r3/etc/sysctl.d/60-enormoustext.conf" ] || fail "--undo removed a foreign file"

# Sizes with units, and what is refused.
for c in "1G 512" "512M 256" "2048k 1" "0 0"; do
	set -- $c
	t "size$1" -- "$TOOL" setup --root "$r" --dry-run --hugetlb "$1"
	expect_rc 0
	expect_out "^would write $s/hugepages/hugepages-2048kB/nr_hugepages: $2 \\(was "
done
t unit -- "$TOOL" setup --root "$r" --hugetlb 1X
expect_bad 2 "a size with a bad unit" "--hugetlb 1X: give a size in bytes"
t multiple -- "$TOOL" setup --root "$r" --hugetlb 3M
expect_bad 1 "a size not a multiple of the page size" "--hugetlb 3M: not a multiple of the 2M huge page size \\(2M or 4M"
t both -- "$TOOL" setup --root "$r" --hugetlb 2M --hugetlb-pages 1
expect_bad 2 "--hugetlb and --hugetlb-pages" "not both"
t pu -- "$TOOL" setup --root "$r" --persist --undo
expect_bad 2 "--persist and --undo" "--persist or --undo, not both"
# 3G of 4G: refused, the figures named; --force does it.
cp "$s/hugepages/hugepages-2048kB/nr_hugepages" "$W/np.before"
t big -- "$TOOL" setup --root "$r" --hugetlb 3G
expect_bad 1 "a pool of 75% of MemTotal" "--hugetlb 3G: a pool of 3G \\(1536 pages of 2M\\) is 75% of MemTotal \\(4G, $r/proc/meminfo\\).*--force"
cmp -s "$W/np.before" "$s/hugepages/hugepages-2048kB/nr_hugepages" || fail "the refused pool was written"
t bigpages -- "$TOOL" setup --root "$r" --hugetlb-pages 1100
expect_bad 1 "a pool of 54% of MemTotal in pages" "--hugetlb-pages 1100: a pool of 2.1G \\(1100 pages of 2M\\) is 54% of MemTotal"
t force -- "$TOOL" setup --root "$r" --hugetlb 3G --force
expect_rc 0
[ "$(cat "$s/hugepages/hugepages-2048kB/nr_hugepages")" = 1536 ] || fail "--force: the pool not written"
# 1.5G of 4G: done, with a warning.
t warn -- "$TOOL" setup --root "$r" --hugetlb 1536M
expect_rc 0
[ "$(wc -l <"$ERR")" = 1 ] && grep -q "^enormoustext setup: warning: a pool of 1.5G (768 pages of 2M) is 38% of MemTotal (4G)" "$ERR" ||
	fail "no warning for a pool of 38% of MemTotal"
t nowarn -- "$TOOL" setup --root "$r" --hugetlb 512M
expect_rc 0; expect_no_err
# Without a meminfo in the tree, the running system's MemTotal decides.
rm "$r/proc/meminfo"
mt=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 ))
over=$(( (mt * 6 / 10) / H * H ))
t realmem -- "$TOOL" setup --root "$r" --dry-run --hugetlb-pages $((over / H))
expect_bad 1 "60% of this machine's MemTotal" "is (59|60)% of MemTotal \\([^,]*, /proc/meminfo\\)"

# --help tells the truth about --undo.
t help -- "$TOOL" setup --help
expect_out "running settings are NOT changed"
expect_out "--persist"
expect_out "--hugetlb SIZE"

pass
