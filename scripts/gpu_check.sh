#!/usr/bin/env bash
# scripts/gpu_check.sh — the CUDA back end checked on a GPU machine, in one
# command (docs/CUDA.md "What is verified where"):
#   1. builds aiprof against this machine's CUDA (CUPTI headers) and the
#      torch of $PYTHON (the PyTorch adapter against its headers: a pip
#      torch 2.x compiles adapters/torch/torch_compat.h's 2.x side);
#   2. builds examples/cuda/cuda_streams.cu with nvcc and runs it under
#      `aiprof run` (a program that never heard of aiprof: the driver's
#      injection starts CUPTI at cuInit), checking its kernels;
#   3. runs a torch training loop (an MLP on cuda) without a profiler, under
#      aiprof and under torch.profiler (Kineto + CUPTI) and prints kernel
#      counts and summed times per name (aiprof vs Kineto), per-op overhead,
#      stop+export time per event and the nesting check (scripts/gpu_check.py).
# Usage: scripts/gpu_check.sh [OUTDIR]      (PYTHON=python3 NVCC=nvcc JOBS=N)
# Exits 1 when a target is missed, 2 when this machine cannot run the check
# (no NVIDIA driver or GPU, no torch with CUDA, no nvcc, no cmake).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
OUT=${1:-$(mktemp -d /tmp/aiprof_gpu_check_XXXXXX)}
JOBS=${JOBS:-$(nproc)}
export GPU_CHECK_C_ITERS=20

cannot() {
  echo "gpu_check: cannot run here: $*" >&2
  echo "gpu_check: this check needs an NVIDIA GPU with its driver, nvcc, cmake and a torch with CUDA" >&2
  exit 2
}

command -v nvidia-smi >/dev/null 2>&1 || cannot "no nvidia-smi (no NVIDIA driver on this machine)"
gpus=$(nvidia-smi -L 2>/dev/null || true)
[ -n "$gpus" ] || cannot "nvidia-smi lists no GPU"
command -v cmake >/dev/null 2>&1 || cannot "no cmake"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || cannot "no nvcc (set NVCC)"
PYBIN=$(command -v "$PYTHON") || cannot "no $PYTHON"
torch_info=$("$PYBIN" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())' 2>&1) ||
  cannot "$PYTHON cannot import torch: $torch_info"
case "$torch_info" in
  *True) ;;
  *) cannot "torch.cuda.is_available() is false ($torch_info)" ;;
esac

mkdir -p "$OUT"
echo "gpu_check: $gpus"
echo "gpu_check: torch $torch_info ($PYBIN), $("$NVCC" --version | tail -1), results in $OUT"

# 1. Build.
BUILD=$OUT/build
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$PYBIN" \
  -DAIP_CUDA=ON >"$OUT/cmake.log" 2>&1 || { tail -20 "$OUT/cmake.log"; exit 1; }
grep "aiprof" "$OUT/cmake.log" || true
cmake --build "$BUILD" -j"$JOBS" >"$OUT/build.log" 2>&1 || {
  grep -E "error|Error" "$OUT/build.log" | head -30; exit 1; }
nm -D "$BUILD/lib/libaiprof.so.0" | grep -q " T InitializeInjection" ||
  { echo "gpu_check: libaiprof was built without the CUDA back end (see $OUT/cmake.log)"; exit 1; }
if ldd "$BUILD/lib/libaiprof.so.0" | grep -q -E "libcupti|libcuda"; then
  echo "gpu_check: libaiprof links CUDA; it must load it at run time"; exit 1
fi
if ls "$BUILD"/python/aiprof/libaiprof_torch*.so >/dev/null 2>&1; then
  echo "gpu_check: PyTorch adapter built against $("$PYBIN" -c 'import torch; print(torch.__version__)')"
else
  echo "gpu_check: the PyTorch adapter was not built (see $OUT/cmake.log)"; exit 1
fi

# 2. The CUDA C example under aiprof run.
"$NVCC" -O2 -o "$OUT/cuda_streams" "$SRC/examples/cuda/cuda_streams.cu"
"$BUILD/bin/aiprof" run --dir "$OUT/c" -- "$OUT/cuda_streams" "$GPU_CHECK_C_ITERS"

# 3. The torch loop: no profiler, aiprof, Kineto; the comparison.
rc=0
PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" "$PYBIN" "$SRC/scripts/gpu_check.py" \
  --out "$OUT/torch" --c-result "$OUT/c" || rc=$?
echo "gpu_check: done (exit $rc); results in $OUT"
exit "$rc"
