#!/bin/bash
# tool_setup_bad_input — `setup`'s bad input: no setting, bad
# --thp/--defrag/--hugetlb-pages/--hugetlb-size, --hugetlb-size alone, an
# extra argument, unknown option, missing value, a missing --root.
. "$(dirname "$0")/lib.sh"

t none -- "$TOOL" setup
expect_bad 2 "no setting" "nothing to do"
t thp -- "$TOOL" setup --thp sometimes
expect_bad 2 "a bad --thp" "option '--thp' takes always, madvise or never, not 'sometimes'"
t defrag -- "$TOOL" setup --defrag hard --dry-run
expect_bad 2 "a bad --defrag" "option '--defrag' takes always, defer, defer\\+madvise, madvise or never, not 'hard'"
t pages -- "$TOOL" setup --hugetlb-pages -1
expect_bad 2 "a negative page count" "--hugetlb-pages -1: give a number"
t pages2 -- "$TOOL" setup --hugetlb-pages 12x
expect_bad 2 "a page count that is not a number" "--hugetlb-pages 12x"
t size -- "$TOOL" setup --hugetlb-pages 1 --hugetlb-size 3M
expect_bad 2 "a page size that is not a power of two" "--hugetlb-size 3M"
t sizealone -- "$TOOL" setup --hugetlb-size 2M
expect_bad 2 "--hugetlb-size alone" "--hugetlb-size goes with --hugetlb or --hugetlb-pages"
t extra -- "$TOOL" setup --thp never now
expect_bad 2 "an extra argument" "unexpected argument 'now'"
t opt -- "$TOOL" setup --frobnicate
expect_bad 2 "an unknown option" "unknown option '--frobnicate'"
t noval -- "$TOOL" setup --thp
expect_bad 2 "--thp without a value" "'--thp' needs a value"
t root -- "$TOOL" setup --root "$W/nope" --thp never
expect_bad 1 "a --root that does not exist" "--root $W/nope: not a directory"

pass
