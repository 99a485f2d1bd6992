#!/usr/bin/env bash
# End to end for examples/opencl on whatever OpenCL this machine has (PoCL
# in CI): the C pipeline linked with libaiprof and under `aiprof run`, the
# pyopencl script through aiprof.profiler.  Each must compute the right
# result (the programs check against the host), leave one analysable trace
# of the 3 scheduled steps with every stage op, and summarise.  When
# libaiprof's device back ends find the device (the program does not print
# "no device data will be recorded"), the trace must also hold every
# launch once: per step 2 matmul, 1 relu, 1 softmax; else the summary
# must say that NPU activity was asked for and none recorded.  Skipped
# with a message where the example is not built or no OpenCL device exists.
set -eu
BUILD=$(cd "$1" && pwd) SRC=$(cd "$2" && pwd)
AIPROF="$BUILD/bin/aiprof"
PY=/usr/bin/python3
EXE="$BUILD/bin/opencl_inference"
TMP=$(mktemp -d /tmp/aiprof_opencl_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; echo "e2e opencl example: 0 passed, 1 failed"; exit 1; }

if [ ! -x "$EXE" ]; then
  echo "SKIPPED OpenCL example: not built (no OpenCL headers/library; scripts/install_deps.sh demo)"
  exit 0
fi
set +e
"$EXE" --steps 6 --dir "$TMP/c" >"$TMP/c.out" 2>&1
rc=$?
set -e
if [ $rc != 0 ] && grep -q "no OpenCL platform\|no OpenCL device" "$TMP/c.out"; then
  echo "SKIPPED OpenCL example: $(cat "$TMP/c.out")"
  exit 0
fi
[ $rc = 0 ] || fail "opencl_inference: $(cat "$TMP/c.out")"
grep -q "largest difference from the host's result" "$TMP/c.out" || fail "no result check"
device=1
grep -q "no device data will be recorded" "$TMP/c.out" && device=0

# linked in: one trace of steps 2-4
"$AIPROF" analyse "$TMP/c" -q >/dev/null || fail "analyse"
set -- "$TMP"/c/*_ascend_pt
[ $# = 1 ] && [ -d "$1" ] || fail "expected one result directory, got: $*"
D=$1
"$AIPROF" summary "$D" --html "$TMP/c.html" -q >"$TMP/c.txt" || fail "summary"
grep -q "Steps: 3 " "$TMP/c.txt" || fail "summary lacks the 3 steps: $(cat "$TMP/c.txt")"
for op in infer::load_input infer::layer1 infer::relu infer::layer2 infer::softmax \
          infer::read_output; do
  grep -q "$op" "$TMP/c.txt" || fail "summary lacks $op"
done
check_device() { # summary text
  if [ $device = 1 ]; then
    $PY - "$1" <<'PY' || fail "device section of $1"
import re, sys
text = open(sys.argv[1]).read()
assert "\nDevices:\n" in text, text
text = text.split("kernels by total device time:")[1].split("\nCopies")[0]
counts = {m.group(2): int(m.group(1)) for m in
          re.finditer(r"^\s+[\d.]+\s+[\d.]+%\s+(\d+)\s+[\d.]+\s+[\d.]+\s+(\S+)$", text, re.M)}
assert counts == {"matmul": 6, "relu": 3, "softmax": 3}, counts
PY
  else
    grep -q "NPU activity requested, but no device activity was recorded" "$1" ||
      fail "no-device note missing in $1"
  fi
}
check_device "$TMP/c.txt"

# under aiprof run: the program's own steps mark ProfilerStep# ranges
(cd "$TMP" && "$AIPROF" run --dir "$TMP/run" -- "$EXE" --steps 4 --dir "$TMP/own") \
  >"$TMP/run.out" 2>&1 || fail "aiprof run: $(cat "$TMP/run.out")"
set -- "$TMP"/run/*_ascend_pt
[ $# = 1 ] && [ -d "$1" ] || fail "aiprof run left: $*"
[ ! -e "$TMP/own" ] || fail "the program's own session wrote a trace under aiprof run"
! grep -q "results under $TMP/own" "$TMP/run.out" ||
  fail "under aiprof run the program announced $TMP/own, which does not exist"
"$AIPROF" summary "$1" -q >"$TMP/run.txt" || fail "summary of the aiprof run trace"
grep -q "infer::layer1" "$TMP/run.txt" || fail "aiprof run trace lacks the ops"

# pyopencl through aiprof.profiler
if "$PY" -c "import pyopencl" 2>/dev/null && [ -d "$BUILD/python/aiprof" ]; then
  (cd "$TMP" && PYTHONPATH="$BUILD/python" "$PY" -W ignore "$SRC/examples/opencl/inference_pyopencl.py" \
     --steps 6 --dir "$TMP/py") >"$TMP/py.out" 2>&1 || fail "pyopencl example: $(cat "$TMP/py.out")"
  set -- "$TMP"/py/*_ascend_pt
  [ $# = 1 ] && [ -f "$1/ASCEND_PROFILER_OUTPUT/trace_view.json" ] || fail "pyopencl trace: $*"
  "$AIPROF" summary "$1" -q >"$TMP/py.txt" || fail "summary of the pyopencl trace"
  grep -q "Steps: 3 " "$TMP/py.txt" || fail "pyopencl summary: $(cat "$TMP/py.txt")"
  # record_function scopes: user_annotation slices of the trace
  grep -q '"infer::softmax"' "$1/ASCEND_PROFILER_OUTPUT/trace_view.json" ||
    fail "pyopencl trace lacks infer::softmax"
  check_device "$TMP/py.txt"
else
  echo "SKIPPED pyopencl part: python3-pyopencl or the Python package is missing"
fi
echo "e2e opencl example: 1 passed, 0 failed"
