#!/bin/bash
# integration.jit — ENORMOUSTEXT_MODE=2 and 3: tests/integration/jitprog.c,
# a small JIT making code the ways real ones do (mprotect flip, a PROT_NONE
# reservation made executable, a code cache grown with mmap(MAP_FIXED,
# rwx), a memfd's read+execute view, page-by-page W^X toggling, 50000
# small mappings), run without the library, with modes 1, 2 and 3, under
# this machine's THP setting.  Every function must return what it should
# in every run; with mode 2 or 3 the code of flip, reserve, grow and memfd
# must be on huge pages by its own smaps (8192, 8192, 8192, 4096 kB) and
# the reservations 2 MiB-aligned; without the library and with mode 1
# (THP not `always`) none of it may be.  Also: silent unless asked, the
# exit line at verbosity 1, a bad value refused, ENORMOUSTEXT=0 wins.
# integration.jit.thp runs the same under THP `never` and `always`.
. "$(dirname "$0")/lib.sh"

J=$IT_BIN/jitprog
[ -x "$J" ] || fail "$J is missing: build the tests first"
D=$WORK
mkdir -p "$D"
PATS=(flip reserve grow memfd toggle churn)
thp=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)
# the kB each pattern's code must have on huge pages with the mode
declare -A want=([flip]=8192 [reserve]=8192 [grow]=8192 [memfd]=4096)
. "$(dirname "$0")/jit.bash"

jit_runs "$thp"
pass
