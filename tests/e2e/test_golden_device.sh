#!/usr/bin/env bash
# Golden files of the device (OpenCL) and communication (MPI) outputs
# (issue 28 point 6): the committed raw input
# tests/golden/input/golden_device_ascend_pt (make_golden_device_input.py:
# fixed times, no device needed) must give exactly the committed outputs in
# tests/golden/expected_device/: kernel_details.csv, communication*.json,
# the device tables of both databases, trace_view.json's device and
# communication tracks, the device memory timeline and the summary.
# Regenerate with tests/golden/update_golden.sh.
set -eu
BUILD=$1 SRC=$2
TMP=$(mktemp -d /tmp/aiprof_gold_device_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
bash "$SRC/tests/golden/device_outputs.sh" "$BUILD" "$SRC" "$TMP/out"
if ! diff -r "$SRC/tests/golden/expected_device" "$TMP/out" >"$TMP/diff"; then
  head -n 60 "$TMP/diff" >&2
  echo "e2e golden device: 0 passed, 1 failed (outputs differ from tests/golden/expected_device)"
  exit 1
fi
echo "e2e golden device: 1 passed, 0 failed"
