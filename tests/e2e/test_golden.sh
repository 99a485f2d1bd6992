#!/usr/bin/env bash
# Golden files: the committed raw input (tests/golden/input, made by
# tests/golden/make_golden_input.py) must give exactly the committed outputs
# (tests/golden/expected): CSV and JSON bytes, database rows, memory
# timeline, op_args, summary text, the result directory after
# data_simplification.  Regenerate with tests/golden/update_golden.sh.
set -eu
BUILD=$1 SRC=$2
TMP=$(mktemp -d /tmp/aiprof_gold_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
bash "$SRC/tests/golden/golden_outputs.sh" "$BUILD" "$SRC" "$TMP/out"
if ! diff -r "$SRC/tests/golden/expected" "$TMP/out" >"$TMP/diff"; then
  head -n 60 "$TMP/diff" >&2
  echo "e2e golden: 0 passed, 1 failed (outputs differ from tests/golden/expected)"
  exit 1
fi
echo "e2e golden: 1 passed, 0 failed"
