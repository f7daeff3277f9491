#!/bin/bash
# integration.loader.origin — dlopen("$ORIGIN/...") from a program whose own
# RUNPATH has no $ORIGIN finds the same file with the library as without it.
#
# The wrappers must leave the loader's behaviour as it is, and never
# hang or crash: RUNPATH/$ORIGIN names, dlclose from a destructor, a
# failing dlopen racing a pass, a dlclose while another thread is in a
# constructor, the first checks from two threads, the table up to date.
. "$(dirname "$0")/lib.sh"

loader_setup
loader_base ./loader_test origin
loader_base ./loader_norunpath origin
base_out=$(grep -v 'failed dlopens\|pairs of' "$OUT")
loader_lib ./loader_norunpath origin
# The loader found the same files with the library as without it.
[ "$(cat "$OUT")" = "$base_out" ] ||
	fail "the library changed what dlopen found: '$base_out' vs '$(cat "$OUT")'"

pass
