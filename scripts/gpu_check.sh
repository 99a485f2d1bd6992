#!/usr/bin/env bash
# scripts/gpu_check.sh — the CUDA back end checked on a GPU machine, in one
# command that goes through on a machine lent for minutes, without network
# (docs/CUDA.md "The GPU run"):
#   0. what the build needs and the machine may lack comes with the check:
#      Debian 12 packages (scripts/gpu_deps.sh fetch .gpu_debs, here) are
#      unpacked into a prefix and built against (--debs DIR, default
#      .gpu_debs when present);
#   1. builds libaiprof and the CLI against this machine's CUDA (cupti.h
#      from the toolkit or from the pip wheels of $PYTHON's site-packages);
#   2. builds examples/cuda/cuda_streams.cu with nvcc and runs it under
#      `aiprof run` (a program that never heard of aiprof), checking its
#      kernels against what it says it launched;
#   3. then builds the Python package and the PyTorch adapter for
#      $PYTHON's torch: a failure there does not take the C result with it;
#   4. runs the torch loop without a profiler, under aiprof and twice under
#      torch.profiler, comparing kernels per name (scripts/gpu_check.py).
# Every step runs under `timeout` (the whole check is meant to fit in about
# 8 minutes of a GPU machine); a failed step prints its output, aiprof's
# log and profiler_info.json, and the check goes on where it can.
#
# --device cpu: the rehearsal (tests/e2e/test_gpu_check_rehearsal.sh) — the
# same steps on this machine without a GPU: the C half on the stand-in
# driver and CUPTI (tests/e2e/cuda), the torch half on the CPU with a torch
# 2.x ($PYTHON, else $AIP_TORCH2_PYTHON, else .venv/bin/python; skipped,
# saying so, when there is none).
#
# Usage: scripts/gpu_check.sh [--device cuda|cpu] [--build DIR] [--debs DIR] [OUTDIR]
#   --build DIR   use this build tree (built already) instead of building
#   PYTHON=python3 NVCC=nvcc JOBS=N
# Exits 0 when every target holds, 1 when a step or a target failed, 2 when
# this machine cannot run the check (no NVIDIA driver or GPU, nvcc, cmake).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEVICE=cuda BUILD= DEBS= OUT=
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEVICE=$2; shift 2 ;;
    --build) BUILD=$(cd "$2" && pwd); shift 2 ;;
    --debs) DEBS=$2; shift 2 ;;
    -*) echo "gpu_check: unknown option $1" >&2; exit 2 ;;
    *) OUT=$1; shift ;;
  esac
done
case "$DEVICE" in cuda|cpu) ;; *) echo "gpu_check: --device cuda or cpu, not $DEVICE" >&2; exit 2 ;; esac
OUT=${OUT:-$(mktemp -d /tmp/aiprof_gpu_check_XXXXXX)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
JOBS=${JOBS:-$(nproc)}
C_ITERS=20
FAILED=""

say() { echo "gpu_check: $*"; }
cannot() {
  say "cannot run here: $*" >&2
  say "this check needs an NVIDIA GPU with its driver, nvcc and cmake (and a torch with CUDA for its second half)" >&2
  exit 2
}

# What aiprof said about the runs under $1: its log and profiler_info.json.
show_aiprof() {
  local d f
  for d in $(find "$1" -maxdepth 2 -name "*_ascend_pt" 2>/dev/null | sort); do
    for f in "$d"/logs/*.log; do
      [ -f "$f" ] && { echo "---- $f"; tail -n 40 "$f"; }
    done
    [ -f "$d/profiler_info.json" ] && { echo "---- $d/profiler_info.json"; cat "$d/profiler_info.json"; echo; }
  done
  return 0
}

# step NAME SECONDS CMD...: CMD under timeout, its output in $OUT/NAME.log
# (printed); a failure is said, counted, and returned.
step() {
  local name=$1 limit=$2 rc=0
  shift 2
  say "[$name] $*"
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
  if [ $rc = 0 ]; then
    return 0
  fi
  tail -n 60 "$OUT/$name.log"
  say "[$name] FAILED (exit $rc$([ $rc = 124 ] && echo ", over its ${limit} s"))"
  FAILED="$FAILED $name"
  return $rc
}
show() { cat "$OUT/$1.log"; }

# ---- the machine -------------------------------------------------------------
if [ "$DEVICE" = cuda ]; then
  PYTHON=${PYTHON:-python3}
  command -v nvidia-smi >/dev/null 2>&1 || cannot "no nvidia-smi (no NVIDIA driver on this machine)"
  gpus=$(nvidia-smi -L 2>/dev/null || true)
  [ -n "$gpus" ] || cannot "nvidia-smi lists no GPU"
  NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  [ -x "$NVCC" ] || cannot "no nvcc (set NVCC)"
  say "$gpus"
  say "$("$NVCC" --version | tail -n 1)"
else
  PYTHON=${PYTHON:-${AIP_TORCH2_PYTHON:-$SRC/.venv/bin/python}}
fi
[ -n "$BUILD" ] || command -v cmake >/dev/null 2>&1 || cannot "no cmake"
PYBIN=$(command -v "$PYTHON" 2>/dev/null || true)
torch_info=""
if [ -n "$PYBIN" ]; then
  torch_info=$(timeout 120 "$PYBIN" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())' 2>&1 | tail -n 1) || torch_info=""
fi
say "python $PYTHON: ${torch_info:-no torch}; results in $OUT"

# ---- 0. carried packages -----------------------------------------------------
[ -n "$DEBS" ] || { [ -d "$SRC/.gpu_debs" ] && DEBS=$SRC/.gpu_debs; } || true
if [ -n "$DEBS" ]; then
  exports=$("$SRC/scripts/gpu_deps.sh" unpack "$DEBS" "$OUT/prefix") || cannot "the packages in $DEBS cannot be unpacked"
  eval "$exports"
fi

# ---- 1. libaiprof and the CLI ------------------------------------------------
if [ -z "$BUILD" ]; then
  BUILD=$OUT/build
  hints=""
  if [ -n "$PYBIN" ]; then # pip wheels: nvidia/cuda_cupti/include, nvidia/cu13/include
    hints=$("$PYBIN" -c 'import glob, sysconfig; p = sysconfig.get_paths()["purelib"]; print(";".join(sorted(glob.glob(p + "/nvidia/*/include"))))' 2>/dev/null || true)
  fi
  step cmake 180 cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAIP_CUDA=ON \
    ${PYBIN:+-DPython3_EXECUTABLE="$PYBIN"} ${hints:+-DAIP_CUDA_HINTS="$hints"} || exit 1
  grep "aiprof" "$OUT/cmake.log" || true
  step build_lib 300 cmake --build "$BUILD" -j"$JOBS" --target aiprof aiprof_cli || exit 1
fi
LIB=$BUILD/lib/libaiprof.so.0
# Captured first, then searched: `nm | grep -q` under pipefail fails when
# grep stops at its match and nm dies of SIGPIPE.
syms=$(nm -D "$LIB")
grep -q " T InitializeInjection" <<<"$syms" ||
  { say "libaiprof was built without the CUDA back end (see $OUT/cmake.log)"; exit 1; }
deps=$(ldd "$LIB")
if grep -q -E "libcupti|libcuda" <<<"$deps"; then
  say "libaiprof links CUDA; it must load it at run time"; exit 1
fi

# ---- 2. the C program under aiprof run --------------------------------------
c_check() { # $1: what was launched, name=count,...
  step c_check 60 python3 "$SRC/scripts/gpu_check.py" --out "$OUT/c" --c-result "$OUT/c" --c-only \
    --c-expect "$1" && show c_check || show_aiprof "$OUT/c"
}
if [ "$DEVICE" = cuda ]; then
  cache=$(ldconfig -p 2>/dev/null || true)
  if [ -z "${AIPROF_CUPTI_LIB:-}" ] && [ -n "$PYBIN" ] && ! grep -q libcupti <<<"$cache" &&
     ! ls /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda/lib64/libcupti.so* >/dev/null 2>&1; then
    # A CUDA program without torch finds the wheel's libcupti through this.
    wheel=$("$PYBIN" -c 'import glob, sysconfig; print((sorted(glob.glob(sysconfig.get_paths()["purelib"] + "/nvidia/*/lib/libcupti.so*")) + [""])[0])' 2>/dev/null || true)
    [ -n "$wheel" ] && export AIPROF_CUPTI_LIB=$wheel && say "libcupti from a wheel: $wheel"
  fi
  if step c_build 120 "$NVCC" -O2 -o "$OUT/cuda_streams" "$SRC/examples/cuda/cuda_streams.cu"; then
    if step c_run 180 "$BUILD/bin/aiprof" run --dir "$OUT/c" -- "$OUT/cuda_streams" "$C_ITERS"; then
      show c_run
      c_check "scale=$C_ITERS,add=$C_ITERS,transpose=$C_ITERS"
    else
      show_aiprof "$OUT/c"
    fi
  fi
else
  [ -x "$BUILD/bin/fake_cuda_prog" ] || cannot "$BUILD has no fake_cuda_prog (the CUDA stand-ins)"
  if AIPROF_CUPTI_LIB=$BUILD/fake_cuda/libfake_cupti.so step c_run 120 \
       "$BUILD/bin/aiprof" run --dir "$OUT/c" -- "$BUILD/bin/fake_cuda_prog" run 5 4; then
    show c_run
    c_check "fake_kernel_a=12,fake_kernel_b=8"
  else
    show_aiprof "$OUT/c"
  fi
fi

# ---- 3. the Python package and the PyTorch adapter ---------------------------
# Only what the torch half needs (not the tests and benchmarks): the machine
# is lent for minutes.
if [ "$BUILD" = "$OUT/build" ]; then
  step build_py 400 cmake --build "$BUILD" -j"$JOBS" --target aiprof_py_C aiprof_py_files \
    aiprof_torch || true
fi

# ---- 4. the torch loop -------------------------------------------------------
# The aiprof package and adapter built for $PYBIN: this build, or (--device
# cpu, given a build for another Python) a torch 2.x build beside it
# (BUILD-t2, or build-t2 in the same directory: `make build BUILD=build-t2
# PYTHON=.venv/bin/python`).
built_for() { grep -s '^_Python3_EXECUTABLE:INTERNAL=' "$1/CMakeCache.txt" | cut -d= -f2; }
TORCH_BUILD=""
for b in "$BUILD" "$BUILD-t2" "$(dirname "$BUILD")/build-t2"; do
  if [ -n "$PYBIN" ] && [ "$(realpath -s "$(built_for "$b")" 2>/dev/null)" = "$(realpath -s "$PYBIN")" ]; then
    TORCH_BUILD=$b; break
  fi
done
run_torch=1
case "$DEVICE:$torch_info" in
  cuda:*True) TORCH_BUILD=${TORCH_BUILD:-$BUILD} ;;
  cpu:2.*)
    if [ -z "$TORCH_BUILD" ]; then
      say "SKIP the torch half: no aiprof build for $PYBIN (make build BUILD=build-t2 PYTHON=$PYTHON)"
      run_torch=0
    fi ;;
  cpu:*) say "SKIP the torch half: no torch 2.x at $PYTHON (set PYTHON or AIP_TORCH2_PYTHON)"; run_torch=0 ;;
  *) say "the torch half cannot run: $PYTHON has ${torch_info:-no torch} (torch.cuda.is_available() must be true)"
     FAILED="$FAILED torch"; run_torch=0 ;;
esac
if [ $run_torch = 1 ]; then
  adapter=$(ls "$TORCH_BUILD"/python/aiprof/libaiprof_torch*.so 2>/dev/null || true)
  say "the torch half with $TORCH_BUILD/python; PyTorch adapter: ${adapter:-not built (see $OUT/cmake.log, $OUT/build_py.log)}"
  if PYTHONPATH="$TORCH_BUILD/python${PYTHONPATH:+:$PYTHONPATH}" step torch 500 "$PYBIN" \
       "$SRC/scripts/gpu_check.py" --device "$DEVICE" --out "$OUT/torch"; then
    show torch
  else
    show_aiprof "$OUT/torch"
  fi
fi

if [ -n "$FAILED" ]; then
  say "done: FAILED:$FAILED; results in $OUT"
  exit 1
fi
say "done: every step passed; results in $OUT"
