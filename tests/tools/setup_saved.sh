#!/bin/bash
# tool_setup_saved — `setup --root` on a written tree: --dry-run prints the
# exact writes and changes nothing; the writes are printed and land; another
# pool size; a missing pool; a setting that does not read back what was
# written is an error.
. "$(dirname "$0")/lib.sh"

r=$W/root s=$W/root/sys/kernel/mm
fake_sysfs "$r" madvise madvise 0
cp -r "$r" "$W/orig"
t dry -- "$TOOL" setup --root "$r" --dry-run --thp never --defrag defer --hugetlb-pages 3
expect_rc 0; expect_no_err
cat >"$W/expected" <<-EOF
would write $s/transparent_hugepage/enabled: never (was madvise)
would write $s/transparent_hugepage/defrag: defer (was madvise)
would write $s/hugepages/hugepages-2048kB/nr_hugepages: 3 (was 10)
EOF
diff -u "$W/expected" "$OUT" || fail "--dry-run printed something else (diff above)"
diff -r "$W/orig" "$r" >/dev/null || fail "--dry-run changed the tree"
t write -- "$TOOL" setup --root "$r" --thp never --defrag defer --hugetlb-pages 3
expect_rc 0; expect_no_err
sed 's/^would write/write/' "$W/expected" | diff -u - "$OUT" || fail "the writes printed are not the expected ones (diff above)"
[ "$(cat "$s/transparent_hugepage/enabled")" = never ] || fail "enabled not written"
[ "$(cat "$s/transparent_hugepage/defrag")" = defer ] || fail "defrag not written"
[ "$(cat "$s/hugepages/hugepages-2048kB/nr_hugepages")" = 3 ] || fail "nr_hugepages not written"
t size -- "$TOOL" setup --root "$r" --hugetlb-pages 1 --hugetlb-size 1G
expect_rc 0; expect_out "^write $s/hugepages/hugepages-1048576kB/nr_hugepages: 1 \\(was 0\\)\$"
t nosize -- "$TOOL" setup --root "$r" --hugetlb-pages 1 --hugetlb-size 64K
expect_bad 1 "a pool size that does not exist" "hugepages-64kB/nr_hugepages: No such file or directory"
# A setting that does not read back what was written is an error.
rm "$s/transparent_hugepage/defrag" && ln -s /dev/null "$s/transparent_hugepage/defrag"
t noreadback -- "$TOOL" setup --root "$r" --defrag madvise
expect_bad 1 "a write that does not take" "defrag: wrote 'madvise' but it reads back"

pass
