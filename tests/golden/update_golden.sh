#!/usr/bin/env bash
# Regenerates the golden input and tests/golden/expected/ from it with the
# aiprof in BUILD_DIR; the same for the device and communication input
# (make_golden_device_input.py, device_outputs.sh: expected_device/) and
# tests/golden/expected_cluster/ (cluster_outputs.sh).  Review the diff before committing: the expected
# files are the analyser's contract (CSV/JSON bytes, database rows).
# Usage: tests/golden/update_golden.sh BUILD_DIR
set -eu
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$SRC/tests/golden/input" "$SRC/tests/golden/expected" "$SRC/tests/golden/expected_cluster" \
  "$SRC/tests/golden/expected_device"
/usr/bin/python3 "$SRC/tests/golden/make_golden_input.py" "$SRC/tests/golden/input/golden_ascend_pt"
bash "$SRC/tests/golden/golden_outputs.sh" "$BUILD" "$SRC" "$SRC/tests/golden/expected"
/usr/bin/python3 "$SRC/tests/golden/make_golden_device_input.py" \
  "$SRC/tests/golden/input/golden_device_ascend_pt"
bash "$SRC/tests/golden/device_outputs.sh" "$BUILD" "$SRC" "$SRC/tests/golden/expected_device"
bash "$SRC/tests/golden/cluster_outputs.sh" "$BUILD" "$SRC" "$SRC/tests/golden/expected_cluster"
echo "updated tests/golden/input and tests/golden/expected{,_device,_cluster}"
