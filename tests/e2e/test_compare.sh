#!/bin/bash
# `aiprof compare` on real runs (docs/ADVISE.md "compare"): prog_advise's
# `regress` loop is `base` with one op 15 ms slower, one 10 ms op added
# and a temporary twice as big.  compare must name them (text and CSV):
# the added op with its counts 0 -> 8, conv2d slower, the peak +4 MiB;
# two runs of `base` show the same counts and no memory change.  What
# does not depend on the clock is asserted exactly; op times on a shared
# machine are not (the exact ranking and figures: tests/unit/test_insight.c).
set -eu
BUILD=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
AIPROF="$BUILD/bin/aiprof"
fail() { echo "FAIL: $*" >&2; exit 1; }

base=$("$BUILD/bin/prog_advise" base "$TMP/a") || fail "prog_advise base"
base2=$("$BUILD/bin/prog_advise" base "$TMP/b") || fail "prog_advise base (again)"
new=$("$BUILD/bin/prog_advise" regress "$TMP/c") || fail "prog_advise regress"

"$AIPROF" compare -q "$base" "$new" --csv "$TMP/cmp.csv" >"$TMP/cmp.txt" || fail "compare"
python3 - "$TMP/cmp.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
ops = [r for r in rows if r["Section"] == "op"]
added = [r for r in ops if r["Operator Name"] == "aten::added_op"][0]
assert added["Base Operator Number"] == "0" and added["Comparison Operator Number"] == "8", added
assert added["Diff Ratio"] == "inf", added
conv = [r for r in ops if r["Operator Name"] == "aten::conv2d"][0]
assert conv["Input Shape"] == "[[8, 3, 32, 32]]" and float(conv["Diff Duration(ms)"]) > 0, conv
mem = [r for r in rows if r["Section"] == "memory"]
assert mem and float(mem[0]["Diff Duration(ms)"]) == 4.0, mem   # MiB: 4 -> 8
print("ok regress: added op 0 -> 8 calls, conv2d slower, memory +4 MiB")
PY
grep -q "aten::added_op" "$TMP/cmp.txt" || fail "text lacks the added op"

# --html: the same tables as the text, figure for figure, section by section
"$AIPROF" compare -q "$base" "$new" --html "$TMP/cmp.html" >"$TMP/cmp2.txt" || fail "compare --html"
python3 - "$TMP/cmp2.txt" "$TMP/cmp.html" <<'PY'
import sys
from html.parser import HTMLParser
text = {}
section = None
for line in open(sys.argv[1]):
    if line.startswith("["):
        section = line[1:line.index("]")]
        text[section] = []
    elif section and line.startswith("  ") and line.strip():
        text[section].append(line.split()[-6:])
class Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.cur, self.cell = {}, None, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.cur = self.tables.setdefault(a["id"], [])
        elif tag == "tr" and self.cur is not None:
            self.row = []
        elif tag == "td" and "n" in (a.get("class") or "").split():
            self.cell = ""
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.cur is not None and self.row:
            self.cur.append(self.row)
        elif tag == "table":
            self.cur = None
t = Tables()
t.feed(open(sys.argv[2], encoding="utf-8").read())
assert text and set(text) == set(t.tables), (sorted(text), sorted(t.tables))
for sec, rows in text.items():
    assert rows == t.tables[sec], (sec, rows, t.tables[sec])
assert "<script" not in open(sys.argv[2]).read()
print(f"ok html: {sum(len(r) for r in text.values())} rows in {len(text)} tables equal the text's")
PY

# the same program twice: every op's count unchanged, no memory change
# (--threshold 0 shows every row that changed at all)
"$AIPROF" compare -q "$base" "$base2" --threshold 0 --csv "$TMP/same.csv" >"$TMP/same.txt" ||
    fail "compare same"
python3 - "$TMP/same.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert not [r for r in rows if r["Section"] == "memory"], rows
for r in rows:
    if r["Section"] == "op":
        assert r["Base Operator Number"] == r["Comparison Operator Number"] == "8", r
print("ok same program: same op counts, no memory change")
PY

set +e
"$AIPROF" compare -q "$base" >/dev/null 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || fail "one dir: exit $rc"
"$AIPROF" compare -q "$base" "$TMP/nowhere" >/dev/null 2>"$TMP/err"; rc=$?
[ $rc -eq 1 ] && grep -q nowhere "$TMP/err" || fail "missing dir: exit $rc $(cat "$TMP/err")"
"$AIPROF" compare --threshold x "$base" "$new" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad threshold: exit $rc"
"$AIPROF" compare --help | grep -q -- "--threshold" || fail "--help"
set -e
echo "test_compare: ok"
