#!/usr/bin/env bash
# No function the library exports is left without a caller (issue 28
# point 7: aip_cluster_analyse, aip__raw_info_free and aip__recorder_active
# had none): scripts/check_callers.py checks every non-static function
# under src/ is named somewhere else in the tree, tests included.
set -eu
SRC=$2
if python3 "$SRC/scripts/check_callers.py" "$SRC"; then
  echo "e2e callers: 1 passed, 0 failed"
else
  echo "e2e callers: 0 passed, 1 failed (see above)"
  exit 1
fi
