#!/bin/bash
# fault.inv-rlimit-as — a program that lowers its own RLIMIT_AS after
# start fits as much as without the library, also with ENORMOUSTEXT_DEFER.
#
# as_prog reads its address space (/proc/self/statm: what RLIMIT_AS is
# checked against), sets RLIMIT_AS to that plus 100 MiB and maps 1 MiB
# pieces until one fails: "mapped 100 of 100" plain.  Preloaded, the
# stdout and the exit status must be the plain run's:
#
#   nodefer   no deferral: the pass ran in the constructor, before main
#   waiting   ENORMOUSTEXT_DEFER=10s: the worker waits all along
#   serving   ENORMOUSTEXT_DEFER=1ms, measured 300 ms in: the worker has
#             done its pass and waits for dlopen's
#   after     ENORMOUSTEXT_DEFER=100ms, the limit set at once, the mapping
#             400 ms later: the deferred pass runs under the lowered limit
#   during    ENORMOUSTEXT_DEFER=50ms, one mapping every 2 ms from the
#             start: the pass runs while the program maps
#
# What the library's address space is, from the maps of as_prog at the
# moment it measures (shown as notes): the worker (waiting against the
# library switched off, ENORMOUSTEXT=0) and what its pass added (serving
# against waiting), as anonymous mappings "size perms".  Whatever exists
# when the program measures is inside its limit and costs it nothing;
# what the library maps afterwards comes out of what the program counted
# on.
. "$(dirname "$0")/lib.sh"
AS=$FAULT_BIN/as_prog
[ -x "$AS" ] || fail "$AS is missing: build the tests first"
fresh "$AS"
R=$WORK/res
mkdir "$R" || exit 2

# run NAME [VAR=VALUE...] -- ARGS... — as_prog ARGS in $D: NAME.out/.err/.rc
run() {
	local name=$1 envs=()
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$D" && env "${envs[@]}" timeout 60 ./as_prog "$@" >"$R/$name.out" 2>"$R/$name.err")
	echo $? >"$R/$name.rc"
}
said() { sed -n 's/^as_prog: //p' "$R/$1.err"; }
lib_said() { grep '^enormoustext:' "$R/$1.err" | head -1 | sed 's/^enormoustext: //'; }
# anon_diff A B — the anonymous and [named] mappings of maps file B that A
# does not have (+) and those A has that B does not (-), as
# "SIZE kB PERMS [NAME]"
anon_diff() {
	awk '
		function key() {
			split($1, r, "-")
			return sprintf("%d kB %s %s", (hex(r[2]) - hex(r[1])) / 1024, $2, $6)
		}
		function hex(s,   i, v, c) {
			v = 0
			for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
			return v
		}
		$6 ~ /^\// { next }
		FNR == NR { n[key()]--; next }
		{ n[key()]++ }
		END {
			for (k in n) {
				if (n[k] == 0) continue
				c = n[k] > 0 ? n[k] : -n[k]
				printf "%s%s%s%s", sep, (n[k] > 0 ? "+" : "-"), (c > 1 ? c " x " : ""), k
				sep = "; "
			}
		}' "$1" "$2" | sed 's/ *;/;/g; s/ *$//'
}

# ---- where the library's address space goes (notes) -----------------------------------------
run m-off LD_PRELOAD="$PRE" ENORMOUSTEXT=0 -- --n 0 --maps "$R/m-off"
run m-wait LD_PRELOAD="$PRE" ENORMOUSTEXT_DEFER=10s -- --n 0 --maps "$R/m-wait"
run m-serve LD_PRELOAD="$PRE" ENORMOUSTEXT_DEFER=1ms -- --wait 300 --n 0 --maps "$R/m-serve"
for m in m-off m-wait m-serve; do
	[ -s "$R/$m.before" ] || fail "as_prog wrote no maps ($m): $(head -2 "$R/$m.err")"
done
kb() { sed -n 's/^as_prog: address space \([0-9]*\) kB when measured.*/\1/p' "$R/$1.err"; }
note "the worker, waiting (in place before main): +$(($(kb m-wait) - $(kb m-off))) kB: $(anon_diff "$R/m-off.before" "$R/m-wait.before")"
note "its pass, once done (serving): +$(($(kb m-serve) - $(kb m-wait))) kB more: $(anon_diff "$R/m-wait.before" "$R/m-serve.before")"

# ---- the runs ---------------------------------------------------------------------------------------
run plain -- 
[ "$(cat "$R/plain.rc")" = 0 ] || fail "the plain run exited $(cat "$R/plain.rc"): $(cat "$R/plain.err")"
grep -qx 'mapped 100 of 100' "$R/plain.out" || fail "the plain run printed '$(cat "$R/plain.out")', not 'mapped 100 of 100'"
run plain-wait -- --wait 300
run plain-after -- --after 400
run plain-pace -- --pace 2000
nfail=0
ncases=0
check() {
	local name=$1 plain=$2 what=$3
	ncases=$((ncases + 1))
	if cmp -s "$R/$name.out" "$R/$plain.out" && [ "$(cat "$R/$name.rc")" = "$(cat "$R/$plain.rc")" ]; then
		note "$what: as plain ($(cat "$R/$name.out")) [$(lib_said "$name")] [$(said "$name")]"
	else
		nfail=$((nfail + 1))
		echo "FAIL $what: '$(cat "$R/$name.out")' (exit $(cat "$R/$name.rc")), plain '$(cat "$R/$plain.out")' (exit $(cat "$R/$plain.rc"))"
		echo "   library: $(lib_said "$name")"
		echo "   as_prog: $(said "$name")"
		echo "   plain:   $(said "$plain")"
	fi
}
run nodefer LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=1 --
check nodefer plain "no deferral"
run waiting LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=10s --
check waiting plain "ENORMOUSTEXT_DEFER=10s, the worker still waiting"
run serving LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=1ms -- --wait 300
check serving plain-wait "ENORMOUSTEXT_DEFER=1ms, measured 300 ms in (the worker done, serving)"
run after LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=100ms -- --after 400
check after plain-after "ENORMOUSTEXT_DEFER=100ms, the limit set at once and the mapping 400 ms later (the pass in between)"
run during LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=50ms -- --pace 2000
check during plain-pace "ENORMOUSTEXT_DEFER=50ms, a mapping every 2 ms (the pass while the program maps)"
[ "$nfail" = 0 ] || fail "$nfail of $ncases preloaded runs fitted less (or more) than the plain run under a RLIMIT_AS the program set itself after start"
echo "PASS [$T]: $ncases runs that lower RLIMIT_AS after start fit what the plain run fits"
