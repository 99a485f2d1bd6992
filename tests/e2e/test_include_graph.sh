#!/usr/bin/env bash
# The layer rules #include lines show (issue 12's must-shows): no include
# cycle through src/core, no JSON in src/analysis, src/dynamic only through
# its boundary header, and (issue 28) every include between folders an edge
# of the allowed-edges matrix.  scripts/check_includes.py checks them.
set -eu
SRC=$2
if python3 "$SRC/scripts/check_includes.py" "$SRC"; then
  echo "e2e include graph: 1 passed, 0 failed"
else
  echo "e2e include graph: 0 passed, 1 failed (see above)"
  exit 1
fi
