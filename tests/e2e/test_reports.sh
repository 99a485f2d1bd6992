#!/usr/bin/env bash
# End to end for the report commands on the golden input (hostile names
# included): `aiprof memory` in its four formats (parsed with Python's
# json/gzip), `aiprof summary` text and --html, both HTML pages rendered by
# headless Chromium (Debian's package; installed when missing and root,
# else that part is skipped with a message): the screenshot must show
# something, the DOM must hold the charts and tables, and no recorded name
# may have become markup.  Also: hostile names intact in JSON, CSV and SQL.
set -eu
BUILD=$1 SRC=$2
AIPROF="$BUILD/bin/aiprof"
PY=/usr/bin/python3
TMP=$(mktemp -d /tmp/aiprof_reports_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; echo "e2e reports: 0 passed, 1 failed"; exit 1; }

cp -r "$SRC/tests/golden/input/golden_ascend_pt" "$TMP/"
D="$TMP/golden_ascend_pt"

# memory timeline, every format
for f in m.html m.json m.json.gz m.raw.json.gz; do
  "$AIPROF" memory "$D" --output "$TMP/tl/$f" --device cpu -q >"$TMP/out" || fail "memory $f"
  grep -q "19 memory records of cpu" "$TMP/out" || fail "memory $f output: $(cat "$TMP/out")"
done
$PY - "$TMP/tl" <<'EOF' || fail "memory timeline files"
import gzip, json, os, sys
d = sys.argv[1]
plain = json.load(open(os.path.join(d, "m.json")))
gz = json.load(gzip.open(os.path.join(d, "m.json.gz"), "rt"))
assert plain == gz
times, sizes = plain
assert len(times) == len(sizes) and all(len(s) == 9 and s[0] == 0 for s in sizes)
assert times == sorted(times)
raw = json.load(gzip.open(os.path.join(d, "m.raw.json.gz"), "rt"))
assert all(len(e) == 4 and e[1] in (1, 2, 3, 4) and 0 <= e[3] <= 7 for e in raw), raw
assert raw[0][:2] == [-1, 1]                  # PREEXISTING first, at -1
assert sum(e[2] for e in raw) == sum(sizes[-1])   # the end state adds up
cats = {e[3] for e in raw}
assert {3, 6, 7} <= cats, cats                # TEMPORARY, AUTOGRAD_DETAIL, UNKNOWN
EOF
set +e
"$AIPROF" memory "$D" -o "$TMP/x.txt" >/dev/null 2>&1; [ $? = 1 ] || fail "bad suffix"
"$AIPROF" memory "$D" -o "$TMP/x.json" --device tpu >/dev/null 2>&1; [ $? = 1 ] || fail "bad device"
"$AIPROF" memory "$D" >/dev/null 2>&1; [ $? = 2 ] || fail "no output: usage"
"$AIPROF" summary >/dev/null 2>&1; [ $? = 2 ] || fail "summary without DIR"
"$AIPROF" summary "$TMP/nope" >/dev/null 2>&1; [ $? = 1 ] || fail "summary of nothing"
set -e

# summary text and page
"$AIPROF" summary "$D" --html "$TMP/report.html" -q >"$TMP/summary.txt" || fail "summary"
for want in "Top 11 of 11 ops by self time" "Steps: 2  min 0.380 ms  median 0.380 ms" \
            "peak allocated 115.00 KiB" "NPU activity requested" "3 events were dropped"; do
  grep -qF "$want" "$TMP/summary.txt" || fail "summary lacks '$want'"
done
if grep -q $'\x1b' "$TMP/summary.txt"; then fail "escape byte in terminal output"; fi
grep -q "<script" "$TMP/report.html" && fail "report holds a script element"

# hostile names: intact in JSON, CSV and SQL, and harmless
"$AIPROF" analyse "$D" -q >/dev/null || fail "analyse"
$PY - "$D/ASCEND_PROFILER_OUTPUT" <<'EOF' || fail "hostile names"
import csv, json, os, sqlite3, sys
out = sys.argv[1]
hostile = "quote\"comma,=cmd\n</script><img src=x onerror=alert(1)>"
bad = "bad\ufffd\ufffdutf8 \u65e5"
raw = open(os.path.join(out, "trace_view.json"), "rb").read()
assert b"</script>" not in raw and b"<img" not in raw
names = {e["name"] for e in json.loads(raw.decode("utf-8"))}
assert hostile in names and bad in names and "@SUM(A1)" in names
rows = list(csv.reader(open(os.path.join(out, "operator_details.csv"), newline="", encoding="utf-8")))
cells = {r[0] for r in rows[1:]}
assert hostile in cells and bad in cells and "'@SUM(A1)" in cells, cells
con = sqlite3.connect(os.path.join(out, "ascend_pytorch_profiler.db"))
vals = {v for (v,) in con.execute("SELECT value FROM STRING_IDS")}
assert hostile in vals and bad in vals and "@SUM(A1)" in vals, vals
n = con.execute("SELECT count(*) FROM PYTORCH_API a JOIN STRING_IDS s ON a.name = s.id "
                "WHERE s.value = ?", (hostile,)).fetchone()[0]
assert n == 2, n
EOF

# render both pages in headless Chromium
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian's chromium for the rendering check..." >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null 2>&1 || true
  CHROME=$(command -v chromium || true)
fi
if [ -z "$CHROME" ]; then
  echo "SKIPPED rendering check: chromium is not installed (apt-get install chromium as root)"
  echo "e2e reports: 1 passed, 0 failed"
  exit 0
fi
render() { # page png dom window-size
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size="$4" --screenshot="$2" "file://$1" >/dev/null 2>&1 || return 1
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --dump-dom "file://$1" \
    >"$3" 2>/dev/null
}
render "$TMP/report.html" "$TMP/report.png" "$TMP/report.dom" 1000,1400 || fail "chromium: report"
render "$TMP/tl/m.html" "$TMP/m.png" "$TMP/m.dom" 1000,700 || fail "chromium: memory timeline"
$PY "$SRC/tests/e2e/check_png.py" "$TMP/report.png" 0.02 8 || fail "report screenshot blank"
$PY "$SRC/tests/e2e/check_png.py" "$TMP/m.png" 0.05 6 || fail "memory screenshot blank"
$PY - "$TMP/report.dom" "$TMP/m.dom" <<'EOF' || fail "rendered DOM"
import sys
from html.parser import HTMLParser

class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.text = [], set(), []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.ids.update(v for k, v in attrs if k == "id")
    def handle_data(self, data):
        self.text.append(data)

rep = Tags(); rep.feed(open(sys.argv[1], encoding="utf-8").read())
mem = Tags(); mem.feed(open(sys.argv[2], encoding="utf-8").read())
for want in ("step-chart", "memory-chart", "top-ops", "notes", "memory-peaks"):
    assert want in rep.ids, (want, rep.ids)
assert rep.tags.count("rect") >= 2 and rep.tags.count("polygon") == 8, rep.tags
assert "img" not in rep.tags and "script" not in rep.tags, "a recorded name became markup"
text = "".join(rep.text)
assert "quote\"comma,=cmd\n</script><img src=x onerror=alert(1)>" in text
assert "memory-timeline" in mem.ids and mem.tags.count("polygon") == 8
assert "Max memory allocated" in "".join(mem.text)
EOF
echo "e2e reports: 1 passed, 0 failed"
