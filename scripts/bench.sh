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
# The PyTorch benchmarks against torch.profiler: on torch 2.x with Kineto
# (the project's venv, .venv, and build-t2 built for it: the anchor users
# compare us with), and on Debian's torch 1.13 (its legacy profiler) beside.
pybench() { # label python build-dir
  local label=$1 py=$2 dir=$3
  for b in python_overhead.py python_start.py; do
    [ -f "bench/$b" ] || continue
    echo "== $b ($label: $(PYTHONPATH="$dir/python" "$py" -c 'import torch; print("torch", torch.__version__)')) =="
    PYTHONPATH="$dir/python" "$py" "bench/$b" || status=1
  done
}
if T2PY=$(bash scripts/torch2_venv.sh) && \
   cmake -S . -B build-t2 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$T2PY" >/dev/null && \
   cmake --build build-t2 -j "$(nproc 2>/dev/null || echo 2)" -- --no-print-directory >/dev/null; then
  pybench "Kineto" "$T2PY" build-t2
else
  echo "== python benchmarks on torch 2.x: no torch 2.x venv (scripts/torch2_venv.sh said why) =="
  status=1
fi
if [ -d "$BUILD/python/aiprof" ] && /usr/bin/python3 -c "import torch" 2>/dev/null; then
  pybench "Debian, legacy profiler" /usr/bin/python3 "$BUILD"
fi
# issue 29: advise and compare on the 10 M-event profile; msprof-analyze's
# advisor beside them on 1 M events (it takes minutes per million)
echo "== insight_bench.sh =="
bash bench/insight_bench.sh "$BUILD" || status=1
bash bench/insight_bench.sh "$BUILD" 1000000 || status=1
# issue 15: the PMPI wrappers' cost on 2 ranks, and aiprof cluster at scale
for py in mpi_overhead.py cluster_scale.py; do
  echo "== $py =="
  /usr/bin/python3 "bench/$py" "$BUILD" || status=1
done
exit $status
