#!/usr/bin/env bash
# No include cycle among src/core files (a must-show of issue 12), checked
# by scripts/check_include_cycles.py over the `#include "..."` graph of src/
# and include/.
set -eu
SRC=$2
if python3 "$SRC/scripts/check_include_cycles.py" "$SRC"; then
  echo "e2e include graph: 1 passed, 0 failed"
else
  echo "e2e include graph: 0 passed, 1 failed (include cycle through src/core)"
  exit 1
fi
