#!/usr/bin/env bash
# make demo: profile the bundled examples, analyse them, print a short
# summary and where the results are.
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/.."
OUT=${AIP_DEMO_DIR:-demo_result}
rm -rf "$OUT"
mkdir -p "$OUT"

echo "== C example: examples/c/train_loop.c (2 threads, schedule wait=1 warmup=1 active=2) =="
"$BUILD/bin/train_loop" --steps 8 --dir "$OUT/c"
"$BUILD/bin/aiprof" analyse "$OUT/c"

summarise() { # result dir
  local d=$1 out="$1/ASCEND_PROFILER_OUTPUT"
  echo
  echo "result: $d"
  [ -f "$out/trace_view.json" ] && echo "  trace_view.json      $(du -h "$out/trace_view.json" | cut -f1)  (MindStudio Insight, msprof-analyze; for ui.perfetto.dev: aiprof analyse --trace-format perfetto; for HTA, TensorBoard, speedscope or chrome://tracing: --trace-format kineto)"
  if [ -f "$out/operator_details.csv" ]; then
    echo "  top operators by host self time (us):"
    /usr/bin/python3 - "$out/operator_details.csv" <<'PY'
import csv, sys, collections
tot = collections.Counter(); cnt = collections.Counter()
for row in csv.DictReader(open(sys.argv[1], newline="")):
    tot[row["Name"]] += float(row["Host Self Duration(us)"]); cnt[row["Name"]] += 1
for name, us in tot.most_common(8):
    print(f"    {name:<28} calls {cnt[name]:>5}  self {us:>12.3f}")
PY
  fi
  if [ -f "$out/step_trace_time.csv" ]; then
    echo "  steps (us):"
    /usr/bin/python3 - "$out/step_trace_time.csv" <<'PY'
import csv, sys
for row in csv.DictReader(open(sys.argv[1], newline="")):
    print(f"    step {row['Step'] or '-':>4}  computing {float(row['Computing']):>12.3f}  "
          f"communication {float(row['Communication']):>12.3f}  free {float(row['Free']):>12.3f}")
PY
  fi
}
for d in "$OUT"/c/*_ascend_pt; do summarise "$d"; done

# The Python example runs on torch 2.x (the project's venv, .venv: torch
# 2.13 with Kineto, made by scripts/torch2_venv.sh) when it can be had, with
# aiprof._C and the adapter built for it in build-t2; else on Debian's
# torch 1.13 with the main build.
PYRUN=(); PYBUILD=""
if [ -f examples/python/train_mlp.py ]; then
  if T2PY=$(bash scripts/torch2_venv.sh) && \
     cmake -S . -B build-t2 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$T2PY" >/dev/null && \
     cmake --build build-t2 -j "$(nproc 2>/dev/null || echo 2)" --target aiprof_py_C aiprof_torch \
       -- --no-print-directory >/dev/null && [ -f build-t2/python/aiprof/libaiprof_torch.so ]; then
    PYRUN=("$T2PY"); PYBUILD=build-t2
  elif /usr/bin/python3 -c "import torch" 2>/dev/null && [ -d "$BUILD/python/aiprof" ]; then
    echo "(torch 2.x venv not available: the Python example runs on Debian's torch 1.13)"
    PYRUN=(/usr/bin/python3); PYBUILD=$BUILD
  fi
fi
if [ ${#PYRUN[@]} -gt 0 ]; then
  echo
  echo "== Python example: examples/python/train_mlp.py (PyTorch $(PYTHONPATH="$PYBUILD/python" "${PYRUN[@]}" -c 'import torch; print(torch.__version__)') MLP, schedule wait=1 warmup=1 active=2 repeat=1) =="
  PYTHONPATH="$PYBUILD/python" "${PYRUN[@]}" examples/python/train_mlp.py --dir "$OUT/python"
  for d in "$OUT"/python/*_ascend_pt; do [ -d "$d" ] && summarise "$d"; done
fi

# examples/opencl: built when CMake found OpenCL (make demo installs it).
echo
if [ -x "$BUILD/bin/opencl_inference" ]; then
  echo "== OpenCL example: examples/opencl/inference.c (matmul/relu/softmax on two queues, schedule wait=1 warmup=1 active=3 repeat=1) =="
  if command -v clinfo >/dev/null; then clinfo -l 2>/dev/null | sed 's/^/  /'; fi
  if "$BUILD/bin/opencl_inference" --steps 8 --dir "$OUT/opencl"; then
    "$BUILD/bin/aiprof" analyse "$OUT/opencl"
    for d in "$OUT"/opencl/*_ascend_pt; do
      [ -d "$d" ] || continue
      echo
      "$BUILD/bin/aiprof" summary "$d" --html "$d/summary.html" -q
      echo "  HTML report: $d/summary.html"
    done
  else
    echo "  (the OpenCL example could not run: see its message above)"
  fi
else
  echo "== OpenCL example not built: CMake found no OpenCL headers/library (make demo installs them as root) =="
fi
if [ -x "$BUILD/bin/mpi_train" ] && command -v mpirun >/dev/null; then
  echo
  echo "== MPI example: examples/mpi/mpi_train.c (4 ranks, rank 2 slowed; MPI calls through PMPI) =="
  mpi_args=(-np 4 --oversubscribe)
  [ "$(id -u)" = 0 ] && mpi_args+=(--allow-run-as-root)
  mkdir -p "$OUT/mpi"
  OMPI_MCA_btl=self,vader mpirun "${mpi_args[@]}" "$BUILD/bin/mpi_train" --slow-rank 2 \
    --dir "$OUT/mpi"
  for d in "$OUT"/mpi/*_ascend_pt; do
    "$BUILD/bin/aiprof" analyse "$d" >/dev/null && summarise "$d"
  done
  echo
  echo "== aiprof cluster $OUT/mpi: the ranks side by side, the slow rank =="
  "$BUILD/bin/aiprof" cluster -q --html "$OUT/mpi" || true
  echo "  cluster report: $OUT/mpi/cluster_analysis_output/cluster_report.html"
fi
echo
echo "All results are under $OUT/"
