#!/usr/bin/env bash
# The CUDA example (examples/cuda/cuda_streams.cu, which scripts/gpu_check.sh
# runs first on a GPU machine) compiled with nvcc and its host side run under
# AddressSanitizer on a stand-in runtime (tests/e2e/cuda/host_cudart.c:
# malloc'd memory, kernels not run), so that a host-side memory error (a
# pinned buffer read after cudaFreeHost) is caught here and not on the GPU
# machine's one run.  Skips (exit 77) without nvcc or an ASan-capable gcc.
set -eu
SRC=$2
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "SKIP: no nvcc (set NVCC)"; exit 77; }
TMP=$(mktemp -d /tmp/aiprof_cuda_asan_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
echo 'int main(void){return 0;}' >"$TMP/t.c"
gcc -fsanitize=address -o "$TMP/t" "$TMP/t.c" 2>/dev/null || { echo "SKIP: gcc has no ASan"; exit 77; }
SAN="-fsanitize=address -fno-omit-frame-pointer"
timeout 300 "$NVCC" -c -O1 -Xcompiler "${SAN// /,}" -o "$TMP/ex.o" "$SRC/examples/cuda/cuda_streams.cu" ||
  { echo "FAIL: nvcc cannot compile the example"; exit 1; }
gcc $SAN -c -o "$TMP/rt.o" "$SRC/tests/e2e/cuda/host_cudart.c"
g++ $SAN -o "$TMP/ex" "$TMP/ex.o" "$TMP/rt.o"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 timeout 120 "$TMP/ex" 3 >"$TMP/out" 2>"$TMP/err" ||
  { echo "FAIL: the example's host side under ASan (exit $?):"; head -30 "$TMP/err"; exit 1; }
grep -q "^launched: scale 3, add 3, transpose 3" "$TMP/out" || { echo "FAIL: $(cat "$TMP/out")"; exit 1; }
! grep -q "AddressSanitizer" "$TMP/err" || { echo "FAIL:"; head -30 "$TMP/err"; exit 1; }
echo "cuda example host side clean under ASan: $(head -1 "$TMP/out")"
