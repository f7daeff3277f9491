#!/bin/bash
# integration.loader.inversion — a dlclose while another thread is inside a
# dlopen whose constructor dlopens and dlcloses: no deadlock.
#
# The wrappers must leave the loader's behaviour as it is, and never
# hang or crash: RUNPATH/$ORIGIN names, dlclose from a destructor, a
# failing dlopen racing a pass, a dlclose while another thread is in a
# constructor, the first checks from two threads, the table up to date.
. "$(dirname "$0")/lib.sh"

loader_setup
loader_base ./loader_test inversion
loader_lib ./loader_test inversion

pass
