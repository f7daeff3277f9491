#!/bin/bash
# integration.musl — the library built with musl-gcc, preloaded into a musl
# program: text huge, dlopen and ENORMOUSTEXT_RECORD work.
. "$(dirname "$0")/lib.sh"

[ -n "${IT_MUSL_GCC:-}" ] || skip "musl-gcc not found when the build was configured (or ENORMOUSTEXT_IT_MUSL=OFF)"
[ -x "$IT_MUSL_GCC" ] || skip "musl-gcc ($IT_MUSL_GCC) is not there any more"
[ -x /lib/ld-musl-x86_64.so.1 ] || [ -e /lib/ld-musl-x86_64.so.1 ] ||
	skip "the musl dynamic loader /lib/ld-musl-x86_64.so.1 is not installed"
[ -x "$IT_MUSL_BIN/bigtext" ] || fail "$IT_MUSL_BIN/bigtext was not built"
mb=$WORK/musl-build
echo "-- building libenormoustext with musl-gcc in $mb"
if ! CC=$IT_MUSL_GCC "$IT_CMAKE" -S "$IT_SOURCE_DIR" -B "$mb" -DENORMOUSTEXT_BUILD_TESTS=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$WORK/musl-configure.log" 2>&1; then
	tail -30 "$WORK/musl-configure.log"
	fail "configuring the library with CC=musl-gcc failed (log above)"
fi
if ! "$IT_CMAKE" --build "$mb" --target enormoustext -j "$(nproc)" >"$WORK/musl-build.log" 2>&1; then
	tail -40 "$WORK/musl-build.log"
	fail "the library does not build with musl-gcc (log above)"
fi
mlib=$(find "$mb" -name libenormoustext.so -print -quit)
[ -n "$mlib" ] || fail "no libenormoustext.so in the musl build tree $mb"
mlib=$(realpath "$mlib")
if command -v readelf >/dev/null; then
	needed=$(readelf -d "$mlib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	echo "-- $mlib needs: $needed"
	case " $needed" in
	*libc.so.6*) fail "the musl build of the library depends on glibc's libc.so.6 ($needed)" ;;
	esac
fi
fresh "$IT_MUSL_BIN" bigtext
readelf -l "$D/bigtext" 2>/dev/null | grep -q 'ld-musl' ||
	fail "$IT_MUSL_BIN/bigtext is not a dynamically linked musl program"
baseline -- ./bigtext --expect-none --expect-not-loaded
run lib LD_PRELOAD="$mlib" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
expect_pass "musl program with the musl-built library preloaded"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"
# dlopen with musl: the wrapper finds musl's dlopen with RTLD_NEXT.
fresh "$IT_MUSL_BIN" dlopen_test
run dlopen_base -- ./dlopen_test --expect-none ./libbigtext.so
[ "$RC" -eq 0 ] || fail "musl dlopen baseline: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
run dlopen LD_PRELOAD="$mlib" -- ./dlopen_test ./libbigtext.so
[ "$RC" -eq 0 ] || fail "musl dlopen: $(grep FAIL "$OUT" | head -3 | tr '\n' ' ')"
# ENORMOUSTEXT_RECORD with musl: musl-gcc has no kernel headers, so no
# perf_event_open; the CPU-time timer and SIGPROF record instead
printf '%s\n' '#include <time.h>' \
	'__attribute__((noinline)) unsigned spin_here(unsigned h) { for (int i = 0; i < 1000; i++) h = h * 2654435761u + 1; return h; }' \
	'int main(void) { unsigned h = 0; clock_t end = clock() + CLOCKS_PER_SEC; while (clock() < end) h = spin_here(h); return h == 42; }' \
	>"$D/spin.c"
"$IT_MUSL_GCC" -O1 -Wl,--build-id -o "$D/spin" "$D/spin.c" || fail "musl-gcc cannot build spin.c"
run record ENORMOUSTEXT_RECORD="$D/spin-%p.prof" ENORMOUSTEXT=0 LD_PRELOAD="$mlib" -- ./spin
[ "$RC" -eq 0 ] || fail "musl: spin with ENORMOUSTEXT_RECORD: exit $RC"
stderr_empty "musl: ENORMOUSTEXT_RECORD alone prints nothing"
prof=$(ls "$D"/spin-*.prof 2>/dev/null | head -1)
[ -n "$prof" ] || fail "musl: no profile written"
sed -n 3p "$prof" | sed 's/^/   /'
grep -q '^# recorded by ENORMOUSTEXT_RECORD (CPU-time timer and SIGPROF)' "$prof" ||
	fail "musl: not recorded with the timer: $(sed -n 3p "$prof")"
ns=$(awk '/^object /{o=($3 ~ /\/spin$/)} o && /^[0-9a-f]+ [0-9]+$/{n+=$2} END{print n+0}' "$prof")
echo "   $ns samples in spin"
[ "$ns" -ge 50 ] || fail "musl: only $ns samples in spin's own text in 1 s of CPU"

pass
