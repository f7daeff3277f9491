#!/bin/bash
# tool_run_values — an option's value is never "--" nor another of the
# command's options (opts.c's parser, for every subcommand): `run --prime
# -- cmd` and `run --perfmap -- cmd` are usage errors naming the option (they
# were ENORMOUSTEXT_PRIME=-- and ran cmd), and so is `--perfmap --verbose 1`;
# the command does not run.  Values given properly still pass (--prime=1,
# --prime 0, a glob that starts with '-'); the parser's other rules: an
# unknown or ambiguous long option, a value given to a flag, two options of
# one exclusive group, a choice not among its values.
. "$(dirname "$0")/lib.sh"

t prime -- "$TOOL" run --prime -- touch "$W/ran"
expect_bad 2 "run --prime -- cmd" "^enormoustext run: option '--prime' needs a value before '--' "
[ -e "$W/ran" ] && fail "run --prime -- cmd ran cmd"
t perfmap -- "$TOOL" run --perfmap -- touch "$W/ran"
expect_bad 2 "run --perfmap -- cmd" "option '--perfmap' needs a value before '--'"
[ -e "$W/ran" ] && fail "run --perfmap -- cmd ran cmd"
t perfmap_opt -- "$TOOL" run --perfmap --verbose 1 -- touch "$W/ran"
expect_bad 2 "run --perfmap --verbose 1" "option '--perfmap' needs a value \('--verbose' is an option\)"
[ -e "$W/ran" ] && fail "run --perfmap --verbose 1 -- cmd ran cmd"
t lib -- "$TOOL" run --lib -- true
expect_bad 2 "run --lib --" "option '--lib' needs a value before '--'"
t end -- "$TOOL" run --prime
expect_bad 2 "run --prime at the end" "option '--prime' needs a value"

# given properly, the values pass as they are
t eq -- "$TOOL" run -n --prime=1 --perfmap 0 -- true
expect_rc 0; expect_no_err
expect_out '^ENORMOUSTEXT_PRIME=1$'; expect_out '^ENORMOUSTEXT_PERFMAP=0$'; expect_out '^exec true$'
t dash -- "$TOOL" run -n --exclude '-odd*' -- true
expect_rc 0; expect_out "^ENORMOUSTEXT_EXCLUDE='-odd\\*'\$"
# after the COMMAND, everything is the COMMAND's
t after -- "$TOOL" run -n -- true --prime --
expect_rc 0; expect_out '^exec true --prime --$'
grep -q PRIME "$OUT" && fail "run took --prime after COMMAND as its own"

# the same rule in another subcommand, short and long
t stat_o -- "$TOOL" stat -o -- 1
expect_bad 2 "stat -o --" "option '-o' needs a value before '--'"
t stat_output -- "$TOOL" stat --output --json 1
expect_bad 2 "stat --output --json" "option '--output' needs a value \('--json' is an option\)"
# the parser's other rules
t ambiguous -- "$TOOL" setup --hugetlb-p 1 --dry-run --root "$W"
# (taken as --hugetlb-pages: the fake root has no pool to write)
expect_bad 1 "a unique prefix" "hugepages-[0-9]+kB/nr_hugepages: No such file"
t ambiguous2 -- "$TOOL" setup --huge 1
expect_bad 2 "an ambiguous prefix" "option '--huge' is ambiguous: --hugetlb, --hugetlb-pages, --hugetlb-size"
t novalue -- "$TOOL" stat --json=1 1
expect_bad 2 "a flag given a value" "option '--json' takes no value"
t group -- "$TOOL" stat --json --prometheus 1
expect_bad 2 "two of a group" "give --json or --prometheus, not both"
t choice -- "$TOOL" profile order --format gold --object x p
expect_bad 2 "a choice not among them" "option '--format' takes lld or ld, not 'gold'"
t bundle -- "$TOOL" stat -sa -o "$W/s.txt"
expect_rc 0; [ -s "$W/s.txt" ] || fail "stat -sa -o FILE wrote nothing"
head -1 "$W/s.txt" | grep -q PID || fail "stat -sa: not the summary's header: $(head -1 "$W/s.txt")"

pass
