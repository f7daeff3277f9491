#!/bin/bash
# environment.sh — the environment tables, checked against the library's
# option table (libenormoustext/src/core/options.c: one entry per
# ENORMOUSTEXT_* variable, with its default), which is the only place that
# holds them as data.
#
#   tests/docs/environment.sh SRCDIR docs    docs/environment.md's table: every
#                                            variable, none more, each default
#   tests/docs/environment.sh SRCDIR man3    libenormoustext(3)'s ENVIRONMENT:
#                                            every variable, none more, each
#                                            "(default X)" it gives
#   tests/docs/environment.sh SRCDIR man1    enormoustext(1)'s `run` section:
#                                            an option for every variable
#
# The files read can be other copies (to try the test on a changed one):
# ET_OPTIONS_C, ET_ENV_DOC, ET_MAN3, ET_MAN1.  A default the code leaves
# empty (unset: all objects, no report...) is written "none", "all" or
# nothing in the table, and no "(default ...)" in the man page.
# Exit 0 pass, 1 fail (each difference on its own line), 2 usage.
set -u
[ $# -eq 2 ] || { echo "usage: $0 SRCDIR docs|man3|man1" >&2; exit 2; }
src=$1 what=$2
opts=${ET_OPTIONS_C:-$src/libenormoustext/src/core/options.c}
hdr=$(dirname "$opts")/options.h
doc=${ET_ENV_DOC:-$src/docs/environment.md}
man3=${ET_MAN3:-$src/libenormoustext/man/libenormoustext.3}
man1=${ET_MAN1:-$src/tools/enormoustext.1}
name=docs.environment; [ "$what" = docs ] || name=docs.environment.$what
# fail, the work directory $W (tests/lib/lib.sh)
ET_TEST_NAME=$name
. "$(dirname "$0")/../lib/lib.sh"
et_workdir "${TMPDIR:-/tmp}" ET_DOCS_KEEP
W=$ET_WORK

# ---- the code: NAME<TAB>DEFAULT, "-" for an empty default
[ -r "$opts" ] || fail "$opts: cannot read the option table"
sed -n 's/^[[:space:]]*\[ET_OPT_[A-Z0-9_]*\][[:space:]]*=[[:space:]]*{[[:space:]]*"\(ENORMOUSTEXT[A-Z0-9_]*\)",[[:space:]]*"\([^"]*\)".*/\1\t\2/p' "$opts" |
	awk -F'\t' '{ print $1 "\t" ($2 == "" ? "-" : $2) }' | LC_ALL=C sort >"$W/code"
entries=$(grep -c '^[[:space:]]*\[ET_OPT_[A-Z0-9_]*\][[:space:]]*=' "$opts")
got=$(wc -l <"$W/code")
[ "$entries" -gt 0 ] && [ "$got" -eq "$entries" ] ||
	fail "$opts: $entries entries in the table, $got read as { \"NAME\", \"default\", ... }: this test's reader is out of date"
# The command's own variables (ENORMOUSTEXT_LIB), not the library's options.
own=$(sed -n 's/^#define ET_OPTION_[A-Z_]*_VAR "\(ENORMOUSTEXT[A-Z0-9_]*\)".*/\1/p' "$hdr" 2>/dev/null)

# ---- the document under test, in the same form
case $what in
docs)
	[ -r "$doc" ] || fail "$doc: missing"
	# rows of the table: | `NAME` | default | what it does |
	grep '^| `ENORMOUSTEXT[A-Z0-9_]*` |' "$doc" |
		awk -F'|' '{
			n = $2; d = $3
			gsub(/[ `]/, "", n); gsub(/^ +| +$/, "", d); gsub(/`/, "", d)
			if (d == "" || d == "none" || d == "all") d = "-"
			print n "\t" d
		}' | LC_ALL=C sort >"$W/doc"
	where=$doc
	;;
man3)
	[ -r "$man3" ] || fail "$man3: missing"
	# ENVIRONMENT: each .TP's tag line names one or more variables and,
	# optionally, their default:  .BR NAME " (default " VALUE )
	awk '
		/^\.SH / { in_env = ($0 ~ /^\.SH ENVIRONMENT/); next }
		!in_env { next }
		/^\.TP/ { tag = 1; next }
		tag {
			tag = 0
			line = $0; d = "-"
			if (match(line, /" \(default " [^ ]+ \)/)) {
				d = substr(line, RSTART + 13, RLENGTH - 15)
				gsub(/\\-/, "-", d)
				line = substr(line, 1, RSTART - 1)
			}
			while (match(line, /ENORMOUSTEXT[A-Z0-9_]*/)) {
				print substr(line, RSTART, RLENGTH) "\t" d
				line = substr(line, RSTART + RLENGTH)
			}
		}' "$man3" | LC_ALL=C sort >"$W/doc"
	where="$man3 (ENVIRONMENT)"
	;;
man1)
	[ -r "$man1" ] || fail "$man1: missing"
	# `run`: each library option says which variable it sets:
	#   .BI \-\-verbose " n"
	#   .BR ENORMOUSTEXT_VERBOSE :
	# names only (the page gives defaults in prose)
	awk '
		/^\.S[SH] / { in_run = ($0 ~ /^\.SS run/); next }
		in_run && /^\.BR ENORMOUSTEXT[A-Z0-9_]* [:,]$/ { print $2 "\t?" }' "$man1" |
		LC_ALL=C sort -u >"$W/doc"
	for v in $own; do grep -v "^$v	" "$W/doc" >"$W/doc2"; mv "$W/doc2" "$W/doc"; done
	cut -f1 "$W/code" | sed 's/$/\t?/' >"$W/code2"; mv "$W/code2" "$W/code"
	where="$man1 (run)"
	;;
*) echo "usage: $0 SRCDIR docs|man3|man1" >&2; exit 2 ;;
esac

# ---- compare
bad=0
dups=$(cut -f1 "$W/doc" | uniq -d)
for v in $dups; do echo "  $v: listed more than once in $where"; bad=1; done
cut -f1 "$W/code" >"$W/code.names"
cut -f1 "$W/doc" | uniq >"$W/doc.names"
for v in $(LC_ALL=C comm -23 "$W/code.names" "$W/doc.names"); do
	echo "  $v: in the code ($opts), missing from $where"; bad=1
done
for v in $(LC_ALL=C comm -13 "$W/code.names" "$W/doc.names"); do
	echo "  $v: in $where, not a variable of the code ($opts)"; bad=1
done
# defaults, for the names both have
LC_ALL=C join -t "$(printf '\t')" "$W/code" <(LC_ALL=C sort -u "$W/doc") |
	while IFS=$'\t' read -r v c d; do
		[ "$c" = "$d" ] && continue
		[ "$c" = - ] && c="(empty: unset)"
		[ "$d" = - ] && d="(none given: unset)"
		echo "  $v: default $d in $where, $c in the code"
		echo x >>"$W/bad-defaults"
	done
[ -s "$W/bad-defaults" ] && bad=1
[ $bad = 0 ] || fail "$where does not match the option table (lines above)"
echo "PASS [$name]: $(wc -l <"$W/code") variables, $where agrees with $opts"
