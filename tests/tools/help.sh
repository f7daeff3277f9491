#!/bin/bash
# tool_help — `--help`, `-h` and `help CMD` agree for every subcommand; the
# top-level help names every `profile` subcommand; every
# option a help names is known to the subcommand and described in the man
# page; `run --help` offers every variable of the library's option table and
# the library it would really use; `check --help` gives this system's PMD
# size; an unknown command or option: one line, status 2; the man page passes
# `groff -ww` where groff exists.
. "$(dirname "$0")/lib.sh"

t top -- "$TOOL" --help
expect_rc 0 "--help"; expect_no_err "--help"
for c in run stat check status setup collapse; do expect_out "^  $c " "--help lists $c"; done
# every `profile` subcommand its help gives is on the top-level help's line
t profile.help -- "$TOOL" profile --help
expect_rc 0 "profile --help"
subs=$(sed -n 's/^\(usage:\)\{0,1\} *enormoustext profile \([a-z]*\).*/\2/p' "$OUT" | sort -u)
[ -n "$subs" ] || fail "profile --help gives no subcommand"
for s in $subs; do
	grep -qE "^  profile .*\<$s\>" "$W/1.top.out" || fail "the top-level --help does not list 'profile $s'"
done
t version -- "$TOOL" --version
expect_rc 0; expect_out '^enormoustext [0-9]+\.[0-9]+\.[0-9]+$'
t none -- "$TOOL"
expect_rc 2 "no command"; [ -s "$ERR" ] || fail "no command: no usage on stderr"
t bogus_cmd -- "$TOOL" frobnicate
expect_bad 2 "an unknown command" "'frobnicate'"
t bogus_opt -- "$TOOL" --frobnicate
expect_bad 2 "an unknown option" "'--frobnicate'"

man=$TT_SRC/../../tools/enormoustext.1
[ -s "$man" ] || fail "no man page $man"
for c in run stat check status setup collapse; do
	t "$c.help" -- "$TOOL" "$c" --help
	expect_rc 0 "$c --help"; expect_no_err "$c --help"
	head -1 "$OUT" | grep -q "^usage: enormoustext $c" || fail "$c --help does not start with its usage line"
	cp "$OUT" "$W/$c.help"
	t "$c.h" -- "$TOOL" "$c" -h
	cmp -s "$OUT" "$W/$c.help" || fail "$c -h differs from $c --help"
	t "help.$c" -- "$TOOL" help "$c"
	cmp -s "$OUT" "$W/$c.help" || fail "'help $c' differs from '$c --help'"
	t "$c.unknown" -- "$TOOL" "$c" --no-such-option
	expect_bad 2 "$c --no-such-option" "unknown option '--no-such-option'"
	# Every option the help names is one the command knows (it may say the
	# value is missing or the call is incomplete, never "unknown"), and
	# the man page names it too.
	grep -q "^\.SS .*$c" "$man" || fail "the man page has no section for '$c'"
	for o in $(grep -oE -- '(^|[ ,(])--[a-z][a-z-]+' "$W/$c.help" | sed 's/^[ ,(]//' | sort -u); do
		[ "$o" = --help ] && continue
		if [ "$c" = run ] || [ "$c" = setup ]; then
			t "$c$o" -- "$TOOL" "$c" "$o"
		else
			t "$c$o" -- "$TOOL" "$c" "$o" --no-such-option
		fi
		grep -q "unknown option '$o'" "$ERR" && fail "$c --help names $o but $c does not know it"
		grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\\\?-/g')" "$man" || fail "the man page does not mention $c's option $o"
	done
done
# run's options are the library's variables: every variable of its option
# table is in `run --help`, under its name.
vars=$(grep -oE '\] = \{ "ENORMOUSTEXT(_[A-Z_]+)?"' "$OPTIONS_C" | grep -oE 'ENORMOUSTEXT[A-Z_]*' | sort -u)
[ -n "$vars" ] || fail "no variable found in options.c"
for v in $vars; do
	grep -q "\[$v\]" "$W/run.help" || fail "run --help does not offer $v"
done
grep -qF "$TT_LIB" "$W/run.help" || fail "run --help does not name the library it would use ($TT_LIB)"
hs=$(( H >> 20 ))M
grep -q "default $hs" "$W/check.help" || fail "check --help does not give this system's PMD size ($hs) as default"
if command -v groff >/dev/null; then
	groff -man -Tutf8 -ww -z "$man" 2>"$W/groff.err"
	[ -s "$W/groff.err" ] && fail "the man page has groff warnings: $(head -3 "$W/groff.err")"
else
	note "groff is not installed: the man page's roff was not checked"
fi

pass
