#!/bin/bash
# integration.backend.hugetlb — ENORMOUSTEXT_BACKEND=hugetlb with a filled
# pool: >= 95% on hugetlb pages, the pool size restored.
. "$(dirname "$0")/lib.sh"

NR=/sys/kernel/mm/hugepages/hugepages-$((H_MIB * 1024))kB/nr_hugepages
FREE=${NR%/nr_hugepages}/free_hugepages
[ "$(id -u)" -eq 0 ] || skip "not root: cannot reserve hugetlb pages in $NR (the pool must not be assumed non-empty)"
[ -w "$NR" ] || skip "$NR is not writable (no ${H_MIB} MiB hugetlb pages on this kernel?)"
std_baseline bigtext
windows=$(sed -n 's/^bigtext: eligible-windows-total: //p' "$OUT")
[ -n "$windows" ] || fail "the baseline did not print its window count"
old=$(cat "$NR")
old_free=$(cat "$FREE")
want=$((old + windows + 12))
EXIT_HOOKS+=("echo '-- restoring $NR to $old'; echo $old > $NR || echo 'WARNING: could not restore $NR to $old'")
echo "-- reserving hugetlb pages: $NR $old -> $want ($windows windows + 12 spare)"
echo "$want" >"$NR" 2>/dev/null
got=$(cat "$NR")
free=$(cat "$FREE")
if [ "$got" -lt "$want" ] || [ "$free" -lt $((old_free + windows)) ]; then
	skip "could not fill the hugetlb pool: asked for $want pages, got $got ($free free): not enough contiguous memory"
fi
run lib ENORMOUSTEXT_BACKEND=hugetlb LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind hugetlb --expect-loaded
expect_pass "ENORMOUSTEXT_BACKEND=hugetlb with $free free pool pages must put >= 95% of both objects' eligible text on hugetlb pages"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"

pass
