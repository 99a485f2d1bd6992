#!/usr/bin/env bash
# End to end for `aiprof analyse` on hand-made raw data (no recording core
# involved): folder discovery, parallel children, exit codes, summary line,
# JSON/CSV validity with Python's parsers (strict UTF-8), hostile names,
# salvage of a truncated file, determinism, both trace forms, usage errors.
set -eu
BUILD=$1 SRC=$2
AIPROF="$BUILD/bin/aiprof"
PY=/usr/bin/python3
TMP=$(mktemp -d /tmp/aiprof_cli_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; echo "e2e cli analyse: 0 passed, 1 failed"; exit 1; }

$PY "$SRC/tests/e2e/make_result_dirs.py" "$TMP/runs"

# A folder of result dirs, one of which is junk: exit 1, all others done.
set +e
"$AIPROF" analyse "$TMP/runs" -j 2 >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
[ $rc = 1 ] || fail "exit code with one bad dir: $rc"
grep -qx "analysed 4 directories, 1 failed" "$TMP/out" || fail "summary: $(cat "$TMP/out")"
grep -q "junk_ascend_pt" "$TMP/err" || fail "junk dir not named in errors"
for d in hostile plain cut; do
  [ -f "$TMP/runs/${d}_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json" ] || fail "$d not analysed"
done
[ ! -d "$TMP/runs/junk_ascend_pt/ASCEND_PROFILER_OUTPUT" ] || fail "junk got outputs"
grep -q "truncated\|complete chunk" "$TMP/runs/cut_ascend_pt/logs/analyse.log" || fail "cut not logged"

# Strict parsers: JSON (UTF-8 decoding must succeed), CSV headers and rows.
$PY - "$TMP/runs/hostile_ascend_pt/ASCEND_PROFILER_OUTPUT" <<'EOF' || fail "output check"
import csv, json, os, sys
out = sys.argv[1]
raw = open(os.path.join(out, "trace_view.json"), "rb").read()
assert b"</script>" not in raw
ev = json.loads(raw.decode("utf-8"))
assert isinstance(ev, list)  # torch_npu's form: a top-level array
names = {e["name"] for e in ev if e.get("cat") == "cpu_op"}
for want in ['quote"name', "new\nline", "</script><b>", "bad\ufffd\ufffdutf8",
             "=cmd|' /C calc'!A0", "comma,name", "tab\tand\x01ctl", "ok \u65e5"]:
    assert want in names, (want, names)
pn = [e for e in ev if e.get("name") == "process_name" and e["pid"] == 4242]
assert pn and pn[0]["args"]["name"] == "Python", pn
flows = [e for e in ev if e.get("cat") == "fwdbwd"]
assert len(flows) == 4, flows
assert {e["ph"] for e in flows} == {"s", "f"}
assert all(e.get("bp") == "e" for e in flows)
# ts: absolute epoch µs as a string with exactly 3 decimals; dur a number
import re
for e in ev:
    if "ts" in e:
        assert isinstance(e["ts"], str) and re.fullmatch(r"\d+\.\d{3}", e["ts"]), e
        assert int(e["ts"].replace(".", "")) >= 1700000000000000000, e
    if "dur" in e:
        assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
assert "aiprof" in pn[0]["args"] and "rank" in pn[0]["args"], pn
rows = list(csv.reader(open(os.path.join(out, "operator_details.csv"), newline="", encoding="utf-8")))
assert rows[0] == ["Name", "Input Shapes", "Call Stack", "Host Self Duration(us)",
                   "Host Total Duration(us)", "Device Self Duration(us)",
                   "Device Total Duration(us)", "Device Self Duration With AICore(us)",
                   "Device Total Duration With AICore(us)"]
assert all(len(r) == 9 and r[5:] == ["", "", "", ""] for r in rows[1:]), rows
cells = {r[0] for r in rows[1:]}
assert "'=cmd|' /C calc'!A0" in cells and "comma,name" in cells and "new\nline" in cells, cells
assert len(rows) == 1 + 2 * 9 + 2
st = list(csv.reader(open(os.path.join(out, "step_trace_time.csv"), newline="")))
assert st[0][0] == "Device_id" and len(st[0]) == 11 and len(st) == 3, st
assert st[1][:2] == ["host", "0"] and st[2][:2] == ["host", "1"], st
EOF

# Determinism: analysing again gives identical bytes.
cp -r "$TMP/runs/hostile_ascend_pt/ASCEND_PROFILER_OUTPUT" "$TMP/first"
"$AIPROF" analyse "$TMP/runs/hostile_ascend_pt" -q >/dev/null
diff -r "$TMP/first" "$TMP/runs/hostile_ascend_pt/ASCEND_PROFILER_OUTPUT" || fail "not deterministic"

# Kineto's form on request: the same events as an object, numeric ts
# relative to baseTimeNanoseconds, each equal to the array's string ts.
cp "$TMP/first/trace_view.json" "$TMP/array.json"
"$AIPROF" analyse --trace-format kineto "$TMP/runs/hostile_ascend_pt" -q >/dev/null \
  || fail "--trace-format kineto"
grep -q "Kineto's form" "$TMP/runs/hostile_ascend_pt/logs/analyse.log" || fail "kineto not logged"
$PY - "$TMP/array.json" "$TMP/runs/hostile_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json" \
  <<'EOF' || fail "kineto form"
import json, sys
from decimal import Decimal
arr = json.load(open(sys.argv[1]))
k = json.load(open(sys.argv[2]))
assert isinstance(k, dict) and k["schemaVersion"] == 1, list(k)[:5]
base = k["baseTimeNanoseconds"]
assert base == 1700000000000000000, base
ev = k["traceEvents"]
assert len(ev) == len(arr)
for a, b in zip(arr, ev):
    if "ts" in a:
        assert isinstance(b["ts"], (int, float)), b
        assert int(Decimal(a["ts"]) * 1000) == base + round(b["ts"] * 1000), (a, b)
    if "dur" in a:  # Kineto's ts + dur is the end exactly (binary fractions of a µs)
        assert round((b["ts"] + b["dur"]) * 1000) - round(b["ts"] * 1000) == round(a["dur"] * 1000), (a, b)
EOF
"$AIPROF" analyse --trace-format=torch_npu "$TMP/runs/hostile_ascend_pt" -q >/dev/null \
  || fail "--trace-format=torch_npu"
cmp "$TMP/array.json" "$TMP/runs/hostile_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json" \
  || fail "back to the array form"

# Several PATHs, -j forms, clamping and invalid values are not fatal.
"$AIPROF" analyse -j1 "$TMP/runs/plain_ascend_pt" "$TMP/runs/cut_ascend_pt" >"$TMP/out" 2>/dev/null \
  || fail "two dirs"
grep -qx "analysed 2 directories, 0 failed" "$TMP/out" || fail "two dirs summary"
"$AIPROF" analyse --jobs=9999 "$TMP/runs/plain_ascend_pt" >/dev/null 2>&1 || fail "-j clamp"
"$AIPROF" analyse -j 0 "$TMP/runs/plain_ascend_pt" >/dev/null 2>"$TMP/err" || fail "-j 0"
grep -q "invalid -j" "$TMP/err" || fail "-j 0 warning"

# Export types: db alone writes the databases only; text includes them.
"$AIPROF" analyse --export-type db "$TMP/runs/plain_ascend_pt" >/dev/null 2>&1 || fail "db only"
[ -f "$TMP/runs/plain_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db" ] || fail "db file"
[ ! -f "$TMP/runs/plain_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json" ] || fail "db only wrote json"
"$AIPROF" analyse --export-type text,db "$TMP/runs/plain_ascend_pt" >/dev/null 2>&1 || fail "text,db"
[ -f "$TMP/runs/plain_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json" ] || fail "text,db json"

# Usage errors exit 2; path errors exit 1.
for args in "" "--nope x" "-j" "--export-type" "--trace-format" "--trace-format json x"; do
  set +e
  # shellcheck disable=SC2086
  "$AIPROF" analyse $args >/dev/null 2>"$TMP/err"
  rc=$?
  set -e
  [ $rc = 2 ] || fail "usage error '$args' gave $rc"
  grep -q "aiprof analyse --help" "$TMP/err" || fail "no hint for '$args'"
done
set +e
"$AIPROF" frobnicate >/dev/null 2>&1; [ $? = 2 ] || fail "unknown command"
"$AIPROF" analyse "$TMP/no such" >/dev/null 2>&1; [ $? = 1 ] || fail "bad path chars"
ln -s "$TMP/runs/plain_ascend_pt" "$TMP/link"
"$AIPROF" analyse "$TMP/link" >/dev/null 2>"$TMP/err"; [ $? = 1 ] || fail "symlink"
set -e
grep -q "symbolic link" "$TMP/err" || fail "symlink message"
# A path that is a file, or missing: exit 1, and the message says which.
: > "$TMP/plainfile"
for cmd in analyse summary; do
  set +e
  "$AIPROF" $cmd "$TMP/plainfile" >/dev/null 2>"$TMP/err"; rc=$?
  set -e
  [ $rc = 1 ] || fail "$cmd on a file gave $rc"
  grep -q "plainfile is a file, not a directory" "$TMP/err" || fail "$cmd file: $(cat "$TMP/err")"
  set +e
  "$AIPROF" $cmd "$TMP/missing" >/dev/null 2>"$TMP/err"; rc=$?
  set -e
  [ $rc = 1 ] || fail "$cmd on a missing path gave $rc"
  grep -q "missing: No such file or directory" "$TMP/err" || fail "$cmd missing: $(cat "$TMP/err")"
done
"$AIPROF" --version | grep -q "^aiprof " || fail "version"
"$AIPROF" analyse --help | grep -q "export-type" || fail "analyse help"
echo "e2e cli analyse: 1 passed, 0 failed"
