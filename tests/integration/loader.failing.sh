#!/bin/bash
# integration.loader.failing — 5 s of a thread dlopening a 6 MiB library that
# fails to load (mapped, then unmapped) while the main thread dlopens and
# dlcloses another: no crash.
#
# The wrappers must leave the loader's behaviour as it is, and never
# hang or crash: RUNPATH/$ORIGIN names, dlclose from a destructor, a
# failing dlopen racing a pass, a dlclose while another thread is in a
# constructor, the first checks from two threads, the table up to date.
. "$(dirname "$0")/lib.sh"

loader_setup
loader_base ./loader_test failing 5
loader_lib ./loader_test failing 5

pass
