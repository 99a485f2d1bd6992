#!/usr/bin/env bash
# Golden files of `aiprof cluster` (issue 28 point 6): two fixed jobs
# (tests/golden/cluster_outputs.sh says which) must give exactly the
# committed outputs in tests/golden/expected_cluster/: the CSV and JSON
# bytes, cluster_analysis.db's rows, the HTML report, the verdict and the
# files written back into the ranks.  Regenerate with
# tests/golden/update_golden.sh.
set -eu
BUILD=$1 SRC=$2
TMP=$(mktemp -d /tmp/aiprof_gold_cluster_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
bash "$SRC/tests/golden/cluster_outputs.sh" "$BUILD" "$SRC" "$TMP/out"
if ! diff -r "$SRC/tests/golden/expected_cluster" "$TMP/out" >"$TMP/diff"; then
  head -n 60 "$TMP/diff" >&2
  echo "e2e golden cluster: 0 passed, 1 failed (outputs differ from tests/golden/expected_cluster)"
  exit 1
fi
echo "e2e golden cluster: 1 passed, 0 failed"
