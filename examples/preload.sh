#!/usr/bin/env bash
# preload.sh — the first way in: LD_PRELOAD, no rebuild.
#
#   examples/preload.sh [COMMAND ARGS...]     (default: clang --version when present)
#
# Runs COMMAND with the library preloaded and ENORMOUSTEXT_VERBOSE=2, so that
# it says, per object, what went onto huge pages and why the rest did not.
#
# It also sets ENORMOUSTEXT_DEFER=0 (unless the caller set it): the point
# here is to see the text move, and by default the library waits until a
# process has lived a second (docs/deferral.md) — `clang --version` ends
# after some 50 ms, before anything would move, and all it would say is
# that it ended first.  With 0 the text moves in the constructor, before
# main, as it would in a long-running program a second after its start.
# ENORMOUSTEXT_DEFER=1s examples/preload.sh COMMAND shows the defaults.
set -euo pipefail
lib=${ENORMOUSTEXT_LIB:-$(cd "$(dirname "$0")/.." && pwd)/build/libenormoustext.so}
[[ -f $lib ]] || { echo "preload.sh: '$lib' not found: build first (cmake -S . -B build && cmake --build build)" >&2; exit 1; }
if [[ $# -eq 0 ]]; then
	if command -v clang >/dev/null; then set -- clang --version; else set -- /bin/true; fi
fi
ENORMOUSTEXT_DEFER=${ENORMOUSTEXT_DEFER-0} ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" exec "$@"
