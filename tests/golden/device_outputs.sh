#!/usr/bin/env bash
# Produces every output of the golden device and communication input
# (tests/golden/input/golden_device_ascend_pt, made by
# make_golden_device_input.py: an OpenCL device and MPI, fixed times) in
# OUT_DIR: ASCEND_PROFILER_OUTPUT's files (the databases as text through
# dump_db.py), the result directory after data_simplification, the device's
# memory timeline and the summary.  update_golden.sh writes
# tests/golden/expected_device/ with it, tests/e2e/test_golden_device.sh
# compares with that.
# Usage: device_outputs.sh BUILD_DIR SOURCE_DIR OUT_DIR
set -eu
BUILD=$(cd "$1" && pwd) SRC=$(cd "$2" && pwd) OUT=$3
AIPROF="$BUILD/bin/aiprof"
PY=/usr/bin/python3
WORK=$(mktemp -d /tmp/aiprof_golden_device_XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp -r "$SRC/tests/golden/input/golden_device_ascend_pt" "$WORK/"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$WORK"
"$AIPROF" analyse golden_device_ascend_pt -q >/dev/null
for f in golden_device_ascend_pt/ASCEND_PROFILER_OUTPUT/*; do
  case $f in
    *.db) $PY "$SRC/tests/golden/dump_db.py" "$f" >"$OUT/$(basename "$f").txt" ;;
    *) cp "$f" "$OUT/" ;;
  esac
done
ls golden_device_ascend_pt >"$OUT/result_dir_listing.txt"
"$AIPROF" memory golden_device_ascend_pt -q --device npu:0 -o tl/memory.json >/dev/null
cp tl/memory.json "$OUT/memory_timeline_npu0.json"
"$AIPROF" summary golden_device_ascend_pt -q >"$OUT/summary.txt"
