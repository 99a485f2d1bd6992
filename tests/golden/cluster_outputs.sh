#!/usr/bin/env bash
# Produces every output of `aiprof cluster` on the golden jobs in OUT_DIR
# (update_golden.sh writes tests/golden/expected_cluster/ with it,
# tests/e2e/test_golden_cluster.sh compares with that):
#   job16/  16 analysed ranks on 2 nodes (tests/e2e/make_cluster_dirs.py
#           --ranks 16 --steps 1, rank 5 slow by 3 ms): tp, dp and
#           world groups, collectives and p2p, communication_matrix.json;
#   job4/   4 ranks on 2 hosts whose clocks differ by 500 us, rank 1 slow
#           (the clock estimate and the split of make_cluster_dirs.py's four()).
# The jobs are made here by make_cluster_dirs.py, whose numbers are fixed
# (no clock, no randomness): committing half a megabyte of rank files would
# pin nothing more.  For each: cluster_analysis_output/'s files (the
# database as text through dump_db.py, the HTML report as written), the
# verdict on stdout, and the communication.json and
# communication_matrix.json the pass wrote back into ranks 0 and 5 (job16)
# or every rank (job4).  Paths are relative, so the bytes do not depend on
# where the job lies.
# Usage: cluster_outputs.sh BUILD_DIR SOURCE_DIR OUT_DIR
set -eu
BUILD=$(cd "$1" && pwd) SRC=$(cd "$2" && pwd) OUT=$3
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
AIPROF="$BUILD/bin/aiprof"
PY=/usr/bin/python3
WORK=$(mktemp -d /tmp/aiprof_golden_cluster_XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
$PY "$SRC/tests/e2e/make_cluster_dirs.py" job16 5 3000 --ranks 16 --steps 1 >/dev/null
$PY "$SRC/tests/e2e/make_cluster_dirs.py" job4 1 2000 500 >/dev/null
for job in job16 job4; do
  mkdir -p "$OUT/$job"
  status=0
  "$AIPROF" cluster -q -j 1 --html "$job" >"$OUT/$job/verdict.txt" 2>&1 || status=$?
  echo "exit status $status" >>"$OUT/$job/verdict.txt"
  for f in "$job"/cluster_analysis_output/*; do
    case $f in
      *.db) $PY "$SRC/tests/golden/dump_db.py" "$f" >"$OUT/$job/$(basename "$f").txt" ;;
      *) cp "$f" "$OUT/$job/" ;;
    esac
  done
  find "$job" -path "*/ASCEND_PROFILER_OUTPUT/communication*.json" | sort | while read -r f; do
    case $job:$f in job16:*/w[05]_*) ;; job16:*) continue ;; esac
    rank_dir=$(basename "$(dirname "$(dirname "$f")")")
    cp "$f" "$OUT/$job/${rank_dir%%_*}_$(basename "$f")"
  done
done
