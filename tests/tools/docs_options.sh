#!/bin/bash
# tool_docs_options — the command lines the documents show use options
# their subcommand has: every `enormoustext CMD [SUB] ... -x/--name` in
# README.md, tools/README.md, docs/*.md and examples/README.md is checked
# against CMD's option table (`enormoustext __generate options`), up to a
# '--' or a '#' comment (what follows is another program's or prose).  The
# synopses were written in five places and disagreed (main.c's `perfmap
# PID` against the READMEs', `profile show --png` after --png was gone).
# A checker that finds nothing at all is a broken checker: the documents
# must show at least 40 such options.
. "$(dirname "$0")/lib.sh"

src=$(cd "$TT_SRC/../.." && pwd)
t tables -- "$TOOL" __generate options
expect_rc 0; cp "$OUT" "$W/options"
python3 - "$W/options" "$src" >"$W/report" <<'PY'
import glob, re, sys
opts = {}
for l in open(sys.argv[1]).read().splitlines():
    c, lng, sh, val = l.split("\t")
    opts.setdefault(c, set()).update(x for x in (lng, sh) if x)
subs = {c.split()[1] for c in opts if " " in c}
root = sys.argv[2]
files = [root + "/README.md", root + "/tools/README.md"] + sorted(glob.glob(root + "/docs/*.md")) + \
        sorted(glob.glob(root + "/examples/README.md"))
bad = checked = 0
for f in files:
    for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
        for m in re.finditer(r"enormoustext ([a-z]+)((?: [^`|\n#]*)?)", line):
            cmd, words = m.group(1), m.group(2).split()
            if cmd == "profile" and words and words[0] in subs:
                cmd, words = "profile " + words[0], words[1:]
            if cmd not in opts:
                continue
            for w in words:
                if w == "--":
                    break
                name = w.split("=")[0].rstrip(",.;:)'\"")
                if not re.match(r"^--?[a-zA-Z][a-zA-Z0-9-]*$", name):
                    continue
                checked += 1
                if not name.startswith("--") and len(name) > 2 and all("-" + ch in opts[cmd] for ch in name[1:]):
                    continue          # bundled short options
                if name not in opts[cmd]:
                    print("%s:%d: `enormoustext %s` has no option %s" % (f[len(root) + 1:], n, cmd, name))
                    bad += 1
print("checked %d options" % checked)
sys.exit(1 if bad else 0)
PY
rc=$?
sed 's/^/   | /' "$W/report"
[ $rc = 0 ] || fail "the documents show options their subcommand does not have: $(grep -v '^checked' "$W/report" | head -5)"
n=$(sed -n 's/^checked \([0-9]*\) options$/\1/p' "$W/report")
[ "${n:-0}" -ge 40 ] || fail "only ${n:-0} options found in the documents: the checker is broken"

pass
