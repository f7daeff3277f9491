#!/bin/bash
# tool_run_json — `run --dry-run --json` is valid JSON (python3's json.tool
# and the strict checker) holding what the text form says: the same
# variables with the same values, LD_PRELOAD first, the same command words
# (quoted ones whole); run --help's --json names each key run --json
# writes and no other; --json without --dry-run is a usage error.
. "$(dirname "$0")/lib.sh"

args=(--verbose 2 --include 'a b*' --include 'c' --prime 0 --backend file -- printf '%s\n' "it's" x)
t text -- "$TOOL" run -n "${args[@]}"
expect_rc 0; cp "$OUT" "$W/text"
t json -- "$TOOL" run -n --json "${args[@]}"
expect_rc 0; expect_no_err
json "$OUT"
python3 -m json.tool "$OUT" >/dev/null || fail "python3 -m json.tool refuses run --json's output"
# the variables: text "NAME=value" (shell-quoted) vs JSON .environment.NAME
python3 - "$OUT" "$W/text" <<'PY' || fail "run --json and the text form disagree"
import json, shlex, sys
j = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
env = [l for l in lines if not l.startswith("exec")]
text = dict((w.split("=", 1)) for w in (shlex.split(l)[0] for l in env))
if list(j["environment"])[0] != "LD_PRELOAD":
    sys.exit("LD_PRELOAD is not first: %s" % list(j["environment"]))
if j["environment"] != text:
    sys.exit("environment: json %s, text %s" % (j["environment"], text))
cmd = shlex.split([l for l in lines if l.startswith("exec")][0])[1:]
if j["command"] != cmd:
    sys.exit("command: json %s, text %s" % (j["command"], cmd))
if j["environment"]["ENORMOUSTEXT_INCLUDE"] != "a b*:c":
    sys.exit("the two --include not joined: %s" % j["environment"]["ENORMOUSTEXT_INCLUDE"])
if j["command"] != ["printf", "%s\\n", "it's", "x"]:
    sys.exit("the command's words: %s" % j["command"])
PY
# run --help's --json names the keys run --json writes, each of them and
# no other: its words in double quotes, and the words of a parenthesised
# list "(a, b, c)" (the form the help had when it named a key "library"
# that run --json never wrote).
t help -- "$TOOL" run --help
expect_rc 0
awk '{ opt = match($0, /[^ ]/) <= 7 && substr($0, RSTART, 1) == "-" }
	opt && on { exit } opt && / --json / { on = 1 } on' "$OUT" >"$W/help.json"
[ -s "$W/help.json" ] || fail "run --help has no --json option"
python3 - "$W/help.json" "$W/2.json.out" <<'PY' || fail "run --help's --json and what run --json writes disagree"
import json, re, sys
text = " ".join(open(sys.argv[1]).read().split())
named = set(re.findall(r'"([A-Za-z_]+)"', text))
for lst in re.findall(r'\(([a-z_]+(?:, [a-z_]+)+)\)', text):
    named.update(lst.split(", "))
keys = set(json.load(open(sys.argv[2])))
if not named:
    sys.exit("the help of --json names no key: %s" % text)
if named - keys:
    sys.exit("the help of --json names %s, which run --json does not write (it writes %s)"
             % (sorted(named - keys), sorted(keys)))
if keys - named:
    sys.exit("run --json writes %s, which the help of --json does not name" % sorted(keys - named))
print("   keys named and written: %s" % sorted(keys))
PY
t nodry -- "$TOOL" run --json -- true
expect_bad 2 "--json without --dry-run" "--json goes with --dry-run"

pass
