#!/usr/bin/env bash
# The rehearsal of scripts/gpu_check.sh on a machine without a GPU:
# `gpu_check.sh --device cpu --build BUILD` goes through every step the GPU
# run takes — the C half on the stand-in driver and CUPTI (tests/e2e/cuda),
# its kernels checked against what the program launched; the torch loop
# without a profiler, under aiprof and twice under torch.profiler, on the
# CPU, with a torch 2.x ($AIP_TORCH2_PYTHON, else SRC/.venv/bin/python; the
# torch half says SKIP without one) — and must exit 0.
set -eu
BUILD=$1
SRC=$2
if [ ! -x "$BUILD/bin/fake_cuda_prog" ]; then
  echo "SKIP: the CUDA stand-ins were not built (no CUPTI headers)"; exit 77
fi
TMP=$(mktemp -d /tmp/aiprof_gpu_rehearsal_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export AIP_TORCH2_PYTHON=${AIP_TORCH2_PYTHON:-$SRC/.venv/bin/python}
rc=0
bash "$SRC/scripts/gpu_check.sh" --device cpu --build "$BUILD" "$TMP/out" >"$TMP/log" 2>&1 || rc=$?
cat "$TMP/log"
[ $rc = 0 ] || { echo "FAIL: gpu_check.sh --device cpu exited $rc"; exit 1; }
grep -q "^CUDA C example: kernels .*: OK" "$TMP/log" || { echo "FAIL: the C half did not check its kernels"; exit 1; }
if grep -q "SKIP the torch half" "$TMP/log"; then
  echo "the torch half was skipped: $(grep "SKIP the torch half" "$TMP/log")"
else
  grep -q "^--device cpu: the runs and the reading of their results went through" "$TMP/log" ||
    { echo "FAIL: the torch half did not go through"; exit 1; }
fi
echo "gpu_check rehearsal: passed"
