#!/usr/bin/env bash
# Slices nest on every thread track (docs/ANALYSIS.md "Nesting"): the
# checker (tests/e2e/check_nesting.py) finds partial overlaps in both trace
# forms; a program that closes its annotations, ops and ranges out of order
# still gets a trace that nests; so do the golden outputs and the C example.
set -eu
BUILD=$1 SRC=$2
CHECK="/usr/bin/python3 $SRC/tests/e2e/check_nesting.py"
TMP=$(mktemp -d /tmp/aiprof_nest_XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# The checker fails on a partial overlap: Kineto's object form with numeric
# ts, and torch_npu's array form with string ts, where the overlap is 1 ns
# of an absolute epoch time (lost if read as a double).
cat >"$TMP/bad_object.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 10.5, "dur": 10},
 {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 12, "dur": 10},
 {"ph": "X", "name": "c", "pid": 1, "tid": 2, "ts": 12, "dur": 10}]}
JSON
cat >"$TMP/bad_array.json" <<'JSON'
[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": "1700000000000000.000", "dur": 1.000},
 {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": "1700000000000000.999", "dur": 0.002},
 {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": "1700000000000001.000", "dur": 5}]
JSON
cat >"$TMP/good_array.json" <<'JSON'
[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": "1700000000000000.000", "dur": 1.000},
 {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": "1700000000000000.999", "dur": 0.001},
 {"ph": "B", "name": "c", "pid": 1, "tid": 1, "ts": "1700000000000001.000"},
 {"ph": "E", "pid": 1, "tid": 1, "ts": "1700000000000002.000"}]
JSON
for f in bad_object bad_array; do
  if $CHECK "$TMP/$f.json" >"$TMP/out"; then
    echo "check_nesting passed $f.json" >&2; exit 1
  fi
done
$CHECK "$TMP/bad_object.json" >"$TMP/out" || true
grep -q ": 1 mis-nested" "$TMP/out"
$CHECK "$TMP/bad_array.json" >"$TMP/out" || true
grep -q ": 2 mis-nested" "$TMP/out"
$CHECK "$TMP/good_array.json" >"$TMP/out"
grep -q ": 0 mis-nested slice pairs, 0 unmatched ends" "$TMP/out"

# Out-of-order closes: the raw spans overlap, the drawn slices nest, and
# analyse.log says how many pieces were made.
"$BUILD/bin/prog_misnest" "$TMP/mis" >/dev/null
"$BUILD/bin/aiprof" analyse "$TMP/mis" >/dev/null
for d in "$TMP"/mis/*_ascend_pt; do
  $CHECK "$d"
  grep -q "slices were split" "$d/logs/analyse.log"
done

# The golden outputs and the bundled C example.
$CHECK "$SRC/tests/golden/expected/trace_view.json"
"$BUILD/bin/train_loop" --steps 6 --dir "$TMP/ex" >/dev/null
"$BUILD/bin/aiprof" analyse "$TMP/ex" >/dev/null
for d in "$TMP"/ex/*_ascend_pt; do $CHECK "$d"; done
echo "e2e nesting: 1 passed, 0 failed"
