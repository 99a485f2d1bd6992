#!/usr/bin/env bash
# End to end for the CUDA back end (src/collect/cuda) where CUDA can collect
# nothing — the build machines: the toolkit and libcupti, no driver, no GPU.
# A CUDA program unaware of aiprof under `aiprof run`:
#   - runs as without aiprof (same output), and gets a host-only profile;
#   - its log says once why there is no CUDA data, and profiler_info.json
#     says it in aiprof.device_status;
#   - with libcupti unfindable (AIPROF_CUPTI_LIB pointing nowhere) the
#     reason names it;
#   - `aiprof run` arms CUDA_INJECTION64_PATH with libaiprof;
#   - a host-only program gets no CUDA library loaded (no libcupti, no
#     libcuda) and the reason "has not loaded CUDA".
# On a machine with a GPU the first case collects kernels instead: this test
# then checks only what holds there (scripts/gpu_check.sh is the GPU test).
# Skips (exit 77) where the test programs were not built (no CUPTI headers
# or no libcudart).
set -eu
BUILD=$1
B=$BUILD/bin
if [ ! -x "$B/cuda_nogpu" ] || [ ! -x "$B/cuda_nogpu_host" ]; then
  echo "SKIP: the CUDA test programs were not built (no cupti.h or libcudart)"; exit 77
fi
TMP=$(mktemp -d /tmp/aiprof_cuda_e2e_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
one_result() { find "$1" -maxdepth 1 -name "*_ascend_pt" | sort | head -1; }
fail() { echo "FAIL: $*"; exit 1; }

"$B/cuda_nogpu" >"$TMP/plain.out"
gpu=0
grep -q "error 0 (no error)" "$TMP/plain.out" && gpu=1

# 1. The program under aiprof run: same output, a profile, one reason.
"$B/aiprof" run --dir "$TMP/r1" -- "$B/cuda_nogpu" >"$TMP/r1.out" 2>"$TMP/r1.err" ||
  fail "aiprof run failed: $(cat "$TMP/r1.err")"
grep -v "^libcupti loaded\|^libcuda loaded" "$TMP/plain.out" >"$TMP/plain.cmp"
grep -v "^libcupti loaded\|^libcuda loaded\|^aiprof" "$TMP/r1.out" >"$TMP/r1.cmp"
cmp -s "$TMP/plain.cmp" "$TMP/r1.cmp" || fail "the program's output changed under aiprof"
d=$(one_result "$TMP/r1")
[ -f "$d/ASCEND_PROFILER_OUTPUT/trace_view.json" ] || fail "no trace_view.json in $d"
if [ $gpu = 1 ]; then
  echo "a GPU is usable here: the no-GPU checks do not apply"
else
  [ ! -e "$d/ASCEND_PROFILER_OUTPUT/kernel_details.csv" ] || fail "kernel_details.csv without a GPU"
  n=$(cat "$d"/logs/*.log | grep -c "no device data can be collected" || true)
  [ "$n" = 1 ] || fail "the log says why $n times, not once: $(cat "$d"/logs/*.log)"
  grep -q "no device data can be collected (.*CUDA: " "$d"/logs/*.log ||
    fail "the log does not say why CUDA collected nothing: $(cat "$d"/logs/*.log)"
  grep -q '"device_status": "no device data can be collected (.*CUDA: ' "$d/profiler_info.json" ||
    fail "profiler_info.json has no device_status naming CUDA"
fi

# 2. libcupti unfindable: the reason names it; the program runs the same.
AIPROF_CUPTI_LIB=/nonexistent/libcupti.so "$B/aiprof" run --dir "$TMP/r2" -- "$B/cuda_nogpu" \
  >"$TMP/r2.out" 2>"$TMP/r2.err" || fail "aiprof run failed without libcupti"
grep -q "^libcupti loaded: no" "$TMP/r2.out" || fail "a libcupti was loaded although unfindable"
grep -v "^libcupti loaded\|^libcuda loaded\|^aiprof" "$TMP/r2.out" >"$TMP/r2.cmp"
cmp -s "$TMP/plain.cmp" "$TMP/r2.cmp" || fail "the program's output changed without libcupti"
d=$(one_result "$TMP/r2")
grep -q "CUDA: libcupti cannot be loaded from AIPROF_CUPTI_LIB (/nonexistent/libcupti.so" \
  "$d/profiler_info.json" || fail "the missing libcupti is not named: $(grep device_status "$d/profiler_info.json")"

# 3. aiprof run arms the driver's injection with libaiprof.
"$B/aiprof" run --dir "$TMP/r3" -- /usr/bin/env >"$TMP/r3.out" 2>&1 || true
grep -q "^CUDA_INJECTION64_PATH=/.*libaiprof\.so" "$TMP/r3.out" ||
  fail "CUDA_INJECTION64_PATH not set to libaiprof: $(grep CUDA_INJ "$TMP/r3.out")"
CUDA_INJECTION64_PATH=/mine.so "$B/aiprof" run --dir "$TMP/r3b" -- /usr/bin/env >"$TMP/r3b.out" 2>&1 || true
grep -q "^CUDA_INJECTION64_PATH=/mine.so$" "$TMP/r3b.out" || fail "the user's CUDA_INJECTION64_PATH was replaced"

# 4. A host-only program: no CUDA library loaded into it, and the reason.
"$B/aiprof" run --dir "$TMP/r4" -- "$B/cuda_nogpu_host" >"$TMP/r4.out" 2>&1 ||
  fail "aiprof run failed on the host-only program"
grep -q "^libcupti loaded: no" "$TMP/r4.out" || fail "libcupti loaded into a host-only program"
grep -q "^libcuda loaded: no" "$TMP/r4.out" || fail "libcuda loaded into a host-only program"
d=$(one_result "$TMP/r4")
grep -q "CUDA: the program has not initialised CUDA yet" "$d/profiler_info.json" ||
  fail "host-only: $(grep device_status "$d/profiler_info.json")"
echo "cuda no-GPU e2e: all checks passed"
