#!/bin/bash
# tool_setup_json — `setup --json` is valid JSON (python3's json.tool and
# the strict checker) holding what the lines say, on a --root tree: the
# writes (path, value, was) of a plain run, of --persist (and its files'
# settings) and of --undo (the files removed, the restore commands, with
# --root); --dry-run says so and writes nothing.
. "$(dirname "$0")/lib.sh"

r=$W/root
fake_sysfs "$r" madvise madvise 0
mkdir -p "$r/proc"
printf 'MemTotal:        4194304 kB\nHugepagesize:       2048 kB\n' >"$r/proc/meminfo"
cp -r "$r" "$W/r2"
pair() { # LABEL ARGS...: the text form into $W/LABEL.text, the JSON into $W/LABEL.json (both on copies of the tree)
	local label=$1
	shift
	rm -rf "$W/a" "$W/b"; cp -r "$r" "$W/a"; cp -r "$r" "$W/b"
	t "$label.text" -- "$TOOL" setup --root "$W/a" "$@"
	expect_rc 0; sed "s|$W/a|ROOT|g" "$OUT" >"$W/$label.text"
	t "$label.json" -- "$TOOL" setup --root "$W/b" --json "$@"
	expect_rc 0; json "$OUT"
	python3 -m json.tool "$OUT" >/dev/null || fail "$label: python3 -m json.tool refuses it"
	sed "s|$W/b|ROOT|g" "$OUT" >"$W/$label.json"
	diff -r "$W/a" "$W/b" >/dev/null || fail "$label: --json changed the tree otherwise than the text form"
}
check() { # LABEL: every figure of the lines in the JSON, and the other way
	python3 - "$W/$1.json" "$W/$1.text" <<'PY' || fail "$1: the JSON and the lines disagree"
import json, re, sys
j = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().splitlines()
dry = j["dry_run"]
verb = "would write" if dry else "write"
want = ["%s %s: %s (was %s)" % (verb, w["path"], w["value"], w["was"]) for w in j["writes"]]
got = [l for l in text if re.match(r"^(would )?write \S+: .* \(was .*\)$", l)]
if want != got:
    sys.exit("writes: json %s, text %s" % (want, got))
for f in j.get("files", []):
    head = [l for l in text if l.startswith(f["action"] + " " + f["path"])]
    if not head:
        sys.exit("file %s %s not in the text" % (f["action"], f["path"]))
    for s in f.get("settings", []):
        if f["action"].endswith("remove"):
            if "%s %s" % (s["key"], s["value"]) not in head[0]:
                sys.exit("%s: %s %s not in '%s'" % (f["path"], s["key"], s["value"], head[0]))
        elif not any(s["value"] in l and s["key"].split("/")[-1] in l for l in text if l.startswith("    ")):
            sys.exit("%s: %s = %s not among the lines" % (f["path"], s["key"], s["value"]))
restore = [l.strip() for l in text if l.startswith("  enormoustext setup")]
if restore != j.get("restore", restore):
    sys.exit("restore: json %s, text %s" % (j.get("restore"), restore))
PY
}
pair plain --thp never --defrag defer
check plain
pair dry --thp never --hugetlb-pages 4 --dry-run
check dry
grep -q '"dry_run": true' "$W/dry.json" || fail "--dry-run --json does not say dry_run"
# --persist, then --undo on the tree it left
t persist -- "$TOOL" setup --root "$r" --persist --thp never --hugetlb-pages 4
expect_rc 0
pair persist2 --persist --defrag never
check persist2
grep -q '"applied_by": "systemd-tmpfiles"' "$W/persist2.json" || fail "--persist --json does not name who applies the file"
pair undo --undo
check undo
grep -q '"ROOT/etc/sysctl.d/60-enormoustext.conf"' "$W/undo.json" || fail "--undo --json does not name the sysctl file"
grep -q '"enormoustext setup --root ROOT --thp madvise"' "$W/undo.json" || fail "--undo --json: no restore command with --root: $(grep -A3 restore "$W/undo.json")"

pass
