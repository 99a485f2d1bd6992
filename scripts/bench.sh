#!/usr/bin/env bash
# make bench: every benchmark prints its figures (ratios against an anchor
# measured in the same run).
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.."
status=0
for b in "$BUILD"/bin/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b") =="
  "$b" || status=1
done
if [ -f bench/python_overhead.py ] && [ -d "$BUILD/python/aiprof" ]; then
  echo "== python_overhead.py =="
  PYTHONPATH="$BUILD/python" /usr/bin/python3 bench/python_overhead.py || status=1
fi
# issue 15: the PMPI wrappers' cost on 2 ranks, and aiprof cluster at scale
for py in mpi_overhead.py cluster_scale.py; do
  echo "== $py =="
  /usr/bin/python3 "bench/$py" "$BUILD" || status=1
done
exit $status
