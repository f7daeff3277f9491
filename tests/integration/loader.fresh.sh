#!/bin/bash
# integration.loader.fresh — 500 times: dlopen, then the object is in the
# library's table at once, while another thread reads the table all along.
#
# The wrappers must leave the loader's behaviour as it is, and never
# hang or crash: RUNPATH/$ORIGIN names, dlclose from a destructor, a
# failing dlopen racing a pass, a dlclose while another thread is in a
# constructor, the first checks from two threads, the table up to date.
. "$(dirname "$0")/lib.sh"

loader_setup
loader_lib ./loader_test fresh 500

pass
