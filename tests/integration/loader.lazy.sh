#!/bin/bash
# integration.loader.lazy — enormoustext_refresh() while another thread's
# dlopen runs a constructor that dlopens (the first checks of a quiet
# start-up): no deadlock.
#
# The wrappers must leave the loader's behaviour as it is, and never
# hang or crash: RUNPATH/$ORIGIN names, dlclose from a destructor, a
# failing dlopen racing a pass, a dlclose while another thread is in a
# constructor, the first checks from two threads, the table up to date.
. "$(dirname "$0")/lib.sh"

loader_setup
loader_lib ./loader_test lazy

pass
