#!/bin/bash
# tool_help — the option tables (`enormoustext __generate`) against what
# is made of them and what is written by hand: for every subcommand and
# `profile`'s four, `--help`, `-h` and `help CMD` agree, no help line is
# wider than 80 columns, every option of its table is in its help, in the
# man page's section for it (run's library options: the variables'
# table) and known to its parser, and offered by the bash completion; the
# man page's SYNOPSIS and tools/enormoustext.bash-completion are the ones
# the tables make, word for word; the completion offers subcommands,
# choices, PIDs (this shell's, no kernel thread's) and, after run's '--',
# no more of run's options; `help profile import` is import's help; the
# top-level help names every `profile` subcommand; `run --help` offers
# every variable of the library's option table and the library it would
# really use; `check --help` gives this system's PMD size; an unknown
# command or option: one line, status 2; a mistyped command (each with two
# letters swapped): one line with "did you mean" the command, status 2;
# the man page passes `groff -ww` where groff exists.
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
grep -q "did you mean" "$ERR" && fail "frobnicate, near to no command, gets a suggestion: $(cat "$ERR")"
# A mistyped command: one line naming it and the nearest command, status 2
# (core/util.c's et_edit_distance, a swap of two letters counting one);
# every command of the top-level help with two letters swapped, and `help`.
t typo_cmd -- "$TOOL" stauts
expect_bad 2 "a mistyped command" "^enormoustext: 'stauts' is not a command; did you mean 'status'\\?\$"
for c in $(sed -n '/^commands:$/,/^$/s/^  \([a-z]\+\) .*/\1/p' "$W/1.top.out"); do
	typo=$(echo "$c" | sed 's/^\(.\)\(.\)\(.\)/\1\3\2/')
	t "typo_$c" -- "$TOOL" "$typo"
	expect_bad 2 "'$typo' for '$c'" "^enormoustext: '$typo' is not a command; did you mean '$c'\\?\$"
done
t typo_help -- "$TOOL" help cmopare
expect_bad 2 "help of a mistyped command" "^enormoustext: 'cmopare' is not a command; did you mean 'compare'\\?\$"
t bogus_opt -- "$TOOL" --frobnicate
expect_bad 2 "an unknown option" "'--frobnicate'"

man=$TT_SRC/../../tools/enormoustext.1
completion=$TT_SRC/../../tools/enormoustext.bash-completion
[ -s "$man" ] || fail "no man page $man"
# The tables: one line per option of each (sub)command (COMMAND TAB --NAME
# TAB -X TAB VALUE), from the command itself.
t tables -- "$TOOL" __generate options
expect_rc 0 "__generate options"; cp "$OUT" "$W/options"
cmds=$(cut -f1 "$W/options" | sort -u)
# every subcommand of the top-level help has a table, and every table is
# reachable: the twelve subcommands and profile's four
for c in $(sed -n '/^commands:$/,/^$/s/^  \([a-z]\+\) .*/\1/p' "$W/1.top.out"); do
	grep -q "^$c\b" "$W/options" || fail "'$c' is on the top-level help but has no option table"
done
[ "$(echo "$cmds" | wc -l)" -ge 15 ] || fail "only $(echo "$cmds" | wc -l) option tables: $cmds"
# The man page's SYNOPSIS is the one the tables make, word for word.
t mansyn -- "$TOOL" __generate man-synopsis
expect_rc 0
sed -n '/^\.SH SYNOPSIS$/,/^\.SH DESCRIPTION$/p' "$man" | sed '1d;$d' | grep -v '^\.\\"' >"$W/man.syn"
diff -u "$OUT" "$W/man.syn" >"$W/syn.diff" ||
	fail "the man page's SYNOPSIS is not the tables' (make it again: enormoustext __generate man-synopsis): $(head -20 "$W/syn.diff")"
# The bash completion is the one the tables make.
t comp -- "$TOOL" __generate bash-completion
expect_rc 0
cmp -s "$OUT" "$completion" ||
	fail "tools/enormoustext.bash-completion is not the tables' (make it again: enormoustext __generate bash-completion > tools/enormoustext.bash-completion): $(diff "$OUT" "$completion" | head -5)"
while IFS= read -r c; do
	cw=${c// /.}
	t "$cw.help" -- "$TOOL" $c --help
	expect_rc 0 "$c --help"; expect_no_err "$c --help"
	head -1 "$OUT" | grep -q "^usage: enormoustext $c" || fail "$c --help does not start with its usage line"
	cp "$OUT" "$W/$cw.help"
	# (a line that holds the library's path, which is as long as the
	# build tree's place makes it, is exempt)
	awk -v lib="$TT_LIB" 'length > 80 && index($0, lib) == 0 { print; n++ } END { exit n > 0 }' "$W/$cw.help" >"$W/$cw.wide" ||
		fail "$c --help has lines wider than 80 columns: $(head -2 "$W/$cw.wide")"
	t "$cw.h" -- "$TOOL" $c -h
	cmp -s "$OUT" "$W/$cw.help" || fail "$c -h differs from $c --help"
	t "help.$cw" -- "$TOOL" help $c
	cmp -s "$OUT" "$W/$cw.help" || fail "'help $c' differs from '$c --help'"
	t "$cw.unknown" -- "$TOOL" $c --no-such-option
	expect_bad 2 "$c --no-such-option" "unknown option '--no-such-option'"
	# the man page's section of the command (profile's subcommands: profile's)
	sec=${c%% *}
	[ "$sec" = disable ] && sec=enable
	grep -q "^\.SS .*$sec" "$man" || fail "the man page has no section for '$c'"
	sed -n "/^\.SS .*$sec/,/^\.S[SH] /p" "$man" | sed '$d' >"$W/$cw.man"
	# what the completion offers after "$c --"
	# shellcheck disable=SC2086
	words=$(bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _enormoustext; echo "${COMPREPLY[*]}"' \
		_ "$completion" enormoustext $c -- 2>&1)
	# Every option of the table: in --help, in the man page's section, and
	# known to the parser (it may say a value is missing, never "unknown").
	while IFS=';' read -r _ long short value; do
		for o in $long $short; do
			[ "$o" = --help ] || [ "$o" = -h ] && continue
			grep -qE -- "(^|[ ,\[])$o([ =,\[]|\$)" "$W/$cw.help" || fail "$c --help does not list its option $o"
			if [ "$c" = run ] && [ "$o" != -v ] && [ "$o" != -n ] && [ "$o" != --lib ] && [ "$o" != --dry-run ] && [ "$o" != --json ]; then
				# run's library options: the man page's table of variables
				v=ENORMOUSTEXT_$(echo "${o#--}" | tr a-z- A-Z_)
				[ "$o" = --enable ] && v=ENORMOUSTEXT
				grep -q "$v" "$man" || fail "the man page does not describe $v (run $o)"
			else
				grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\-/g')" "$W/$cw.man" ||
					fail "the man page's section for $c does not describe its option $o"
			fi
			if [ -n "$value" ]; then
				t "$cw$o" -- "$TOOL" $c "$o"
			else
				t "$cw$o" -- "$TOOL" $c "$o" --no-such-option
			fi
			grep -q "unknown option '$o'" "$ERR" && fail "$c's table has $o but $c does not know it"
		done
		# the completion offers it after "$c --"
		if [ -n "$long" ]; then
			case " $words " in *" $long "*) ;; *) fail "the completion of '$c --' does not offer $long (offers: $words)" ;; esac
		fi
	done < <(awk -F'\t' -v OFS=';' -v c="$c" '$1 == c { $1 = $1; print }' "$W/options")
done <<<"$cmds"
# the completion: a subcommand's name, a choice's values, a PID
comp() { bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _enormoustext; echo "${COMPREPLY[*]}"' _ "$completion" enormoustext "$@"; }
[ "$(comp sta)" = "stat status" ] || fail "completing 'sta': $(comp sta)"
[ "$(comp setup --thp '')" = "always madvise never" ] || fail "completing 'setup --thp': $(comp setup --thp '')"
[ "$(comp profile order --format '')" = "lld ld" ] || fail "completing 'profile order --format': $(comp profile order --format '')"
case " $(comp stat '') " in *" $$ "*) ;; *) fail "completing 'stat' does not offer this shell's PID $$" ;; esac
# and no kernel thread's (PF_KTHREAD, 0x200000 in the flags of
# /proc/PID/stat), which stat refuses
pids=$(comp stat '')
kthreads=$(python3 -c '
import glob
for f in glob.glob("/proc/[0-9]*/stat"):
    try:
        s = open(f).read()
    except OSError:
        continue
    if int(s[s.rindex(")") + 2:].split()[6]) & 0x200000:
        print(f.split("/")[2])')
[ -n "$kthreads" ] || note "no kernel thread is visible here: the completion's PIDs were not checked against them"
for k in $kthreads; do
	case " $pids " in *" $k "*) fail "completing 'stat' offers kernel thread $k ($(cat "/proc/$k/comm" 2>/dev/null))" ;; esac
done
case " $(comp profile '') " in *" import "*) ;; *) fail "completing 'profile' does not offer import" ;; esac
# after run's options, the COMMAND: no more of run's options
case " $(comp run --prime 1 -- --) " in *" --backend "*) fail "completing after 'run ... --' offers run's options" ;; esac
t help.profile.import -- "$TOOL" help profile import
expect_rc 0; head -1 "$OUT" | grep -q '^usage: enormoustext profile import' ||
	fail "'help profile import' does not give import's help: $(head -1 "$OUT")"
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
