#!/bin/bash
# integration.profile.hot — ENORMOUSTEXT_PROFILE: only the hottest windows
# move; unusable profiles move nothing.
#
# ENORMOUSTEXT_PROFILE: only the hottest windows move.  A profile made
# here by hand for the copies (their build-ids; counts in two of the
# program's five windows and one of the library's):
#   program 0x400000: 900, 0x800000: 100; library 0x200000: 10.
# HOT_COVERAGE 95 (default) takes the two program windows (1000 of 1010
# samples); 100 takes the library's too; HOT_BUDGET=2M only the hottest.
# A profile that cannot be used moves nothing and says so once.
. "$(dirname "$0")/lib.sh"

layout_fresh script-bfd bigtext
bx=$(readelf -n "$D/bigtext" | sed -n 's/.*Build ID: *//p')
bl=$(readelf -n "$D/libbigtext.so" | sed -n 's/.*Build ID: *//p')
[ -n "$bx" ] && [ -n "$bl" ] || fail "no build-ids in the copies"
printf 'enormoustext-profile 1\ngranule 4096\nobject %s bigtext\n400000 900\n800000 100\nobject %s libbigtext.so\n200000 10\n' \
	"$bx" "$bl" >"$D/p.prof"
sed 's/^/   profile| /' "$D/p.prof"
baseline ENORMOUSTEXT=0 -- ./bigtext --expect-none --expect-loaded
run hot ENORMOUSTEXT_PROFILE="$D/p.prof" ENORMOUSTEXT_REPORT="$D/h.json" -- ./bigtext
[ "$RC" -eq 0 ] || fail "with a profile: $(bigtext_says)"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"
k=$(obj_str "$D/h.json" exe window_kinds); l=$(obj_str "$D/h.json" lib window_kinds)
echo "-- coverage 95: program $k, library $l"
[ "$k" = ".c.c." ] && [ "$l" = "....." ] || fail "coverage 95: program '$k', library '$l'; expected .c.c. and ....."
grep -q 'cold: not among the hot windows' "$D/h.json" || fail "the cold windows' reason is not in the report"
run all ENORMOUSTEXT_PROFILE="$D/p.prof" ENORMOUSTEXT_HOT_COVERAGE=100 ENORMOUSTEXT_REPORT="$D/a.json" -- ./bigtext
k=$(obj_str "$D/a.json" exe window_kinds); l=$(obj_str "$D/a.json" lib window_kinds)
echo "-- coverage 100: program $k, library $l"
[ "$k" = ".c.c." ] && [ "$l" = "c...." ] || fail "coverage 100: program '$k', library '$l'; expected .c.c. and c...."
run budget ENORMOUSTEXT_PROFILE="$D/p.prof" ENORMOUSTEXT_HOT_BUDGET=2M ENORMOUSTEXT_REPORT="$D/b.json" -- ./bigtext
k=$(obj_str "$D/b.json" exe window_kinds)
echo "-- budget 2M: program $k"
[ "$k" = ".c..." ] || fail "budget 2M: program '$k', expected .c..."
# strict: the library, which the profile does not have, is left alone
grep -v "^object $bl\|^200000 10" "$D/p.prof" >"$D/exe-only.prof"
run strict ENORMOUSTEXT_PROFILE="$D/exe-only.prof" ENORMOUSTEXT_PROFILE_STRICT=1 ENORMOUSTEXT_REPORT="$D/s.json" -- ./bigtext
k=$(obj_str "$D/s.json" exe window_kinds); l=$(obj_str "$D/s.json" lib window_kinds)
echo "-- strict: program $k, library $l"
[ "$k" = ".c.c." ] && [ "$l" = "....." ] || fail "strict: program '$k', library '$l'; expected .c.c. and ....."
run lenient ENORMOUSTEXT_PROFILE="$D/exe-only.prof" ENORMOUSTEXT_REPORT="$D/n.json" -- ./bigtext
l=$(obj_str "$D/n.json" lib window_kinds)
[ "$l" = "ccccc" ] || fail "not strict: the library the profile does not have should follow the normal rules, got '$l'"
# an object the profile has with no samples (loaded, never run): cold
{ cat "$D/exe-only.prof"; printf 'object %s libbigtext.so\n' "$bl"; } >"$D/lib-idle.prof"
run idle ENORMOUSTEXT_PROFILE="$D/lib-idle.prof" ENORMOUSTEXT_REPORT="$D/i.json" -- ./bigtext
l=$(obj_str "$D/i.json" lib window_kinds)
echo "-- library known with no samples: $l"
[ "$l" = "....." ] || fail "a library the profile has with no samples should stay cold, got '$l'"
# samples no window can take (here beyond the program's text) do not
# count: coverage 95 is still the two program windows, not every
# window with a sample
printf 'enormoustext-profile 1\ngranule 4096\nobject %s bigtext\n400000 900\n800000 100\n1000000 5000\nobject %s libbigtext.so\n200000 10\n' \
	"$bx" "$bl" >"$D/outside.prof"
run outside ENORMOUSTEXT_PROFILE="$D/outside.prof" ENORMOUSTEXT_REPORT="$D/o.json" -- ./bigtext
k=$(obj_str "$D/o.json" exe window_kinds); l=$(obj_str "$D/o.json" lib window_kinds)
echo "-- samples outside the windows: program $k, library $l"
[ "$k" = ".c.c." ] && [ "$l" = "....." ] ||
	fail "samples outside any window: program '$k', library '$l'; expected .c.c. and ....."
# unusable profiles: missing, corrupt, another build
run missing ENORMOUSTEXT_PROFILE="$D/nope.prof" -- ./bigtext --expect-none
[ "$RC" -eq 0 ] || fail "a missing profile: $(bigtext_says)"
stderr_one_line "^enormoustext: ENORMOUSTEXT_PROFILE=$D/nope.prof: .*nothing moved" "a missing profile"
printf 'enormoustext-profile 1\ngranule 4096\nobject %s bigtext\n400000 many\n' "$bx" >"$D/bad.prof"
run corrupt ENORMOUSTEXT_PROFILE="$D/bad.prof" -- ./bigtext --expect-none
[ "$RC" -eq 0 ] || fail "a corrupt profile: $(bigtext_says)"
stderr_one_line "^enormoustext: ENORMOUSTEXT_PROFILE=$D/bad.prof: line 4: .*nothing moved" "a corrupt profile"
printf 'enormoustext-profile 1\ngranule 4096\nobject 00112233 %s\n400000 900\n' "$(realpath "$D/bigtext")" >"$D/other.prof"
run other ENORMOUSTEXT_PROFILE="$D/other.prof" -- ./bigtext --expect-huge 100
[ "$RC" -eq 0 ] || fail "a profile of another build: the normal rules should apply: $(bigtext_says)"
stderr_one_line "^enormoustext: ENORMOUSTEXT_PROFILE=.*recorded for another build of .*bigtext: not used for it" \
	"a profile of another build"

pass
