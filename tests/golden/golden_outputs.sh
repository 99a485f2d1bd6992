#!/usr/bin/env bash
# Produces every output of the golden input in OUT_DIR (used by
# update_golden.sh to make tests/golden/expected/ and by
# tests/e2e/test_golden.sh to compare with it).
# Usage: golden_outputs.sh BUILD_DIR SOURCE_DIR OUT_DIR
set -eu
BUILD=$1 SRC=$2 OUT=$3
AIPROF="$BUILD/bin/aiprof"
PY=/usr/bin/python3
WORK=$(mktemp -d /tmp/aiprof_golden_XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp -r "$SRC/tests/golden/input/golden_ascend_pt" "$WORK/"
mkdir -p "$OUT"
cd "$WORK"
"$AIPROF" analyse golden_ascend_pt -q >/dev/null
for f in golden_ascend_pt/ASCEND_PROFILER_OUTPUT/*; do
  case $f in
    *.db) $PY "$SRC/tests/golden/dump_db.py" "$f" >"$OUT/$(basename "$f").txt" ;;
    *) cp "$f" "$OUT/" ;;
  esac
done
cp golden_ascend_pt_op_args/op_args.csv "$OUT/op_args.csv"
ls golden_ascend_pt >"$OUT/result_dir_listing.txt"
"$AIPROF" memory golden_ascend_pt -q -o tl/memory.json >/dev/null
"$AIPROF" memory golden_ascend_pt -q -o tl/memory.raw.json.gz >/dev/null
cp tl/memory.json "$OUT/memory_timeline.json"
gzip -dc tl/memory.raw.json.gz >"$OUT/memory_timeline.raw.json"
"$AIPROF" summary golden_ascend_pt -q >"$OUT/summary.txt"
