#!/usr/bin/env bash
# Regenerates the golden input and tests/golden/expected/ from it with the
# aiprof in BUILD_DIR.  Review the diff before committing: the expected
# files are the analyser's contract (CSV/JSON bytes, database rows).
# Usage: tests/golden/update_golden.sh BUILD_DIR
set -eu
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$SRC/tests/golden/input" "$SRC/tests/golden/expected"
/usr/bin/python3 "$SRC/tests/golden/make_golden_input.py" "$SRC/tests/golden/input/golden_ascend_pt"
bash "$SRC/tests/golden/golden_outputs.sh" "$BUILD" "$SRC" "$SRC/tests/golden/expected"
echo "updated tests/golden/input and tests/golden/expected"
