#!/usr/bin/env bash
# Builds and runs every test: the normal build (all of ctest), an ASan+UBSan
# build (all but the e2e scripts: ctest label e2e), and a TSan build of the
# threaded tests (label threads; the labels: tests/CMakeLists.txt), then
# pytest three times: on the normal build with
# Debian's torch 1.13, on a build for the torch 2.x venv (.venv, torch 2.13),
# and with everything Python loads from us (libaiprof, the aiprof._C
# extension, the PyTorch adapter) built under ASan+UBSan.  AIP_SANITIZER (asan, tsan) tells
# the tests which sanitizer they run under.  Ends with "N passed, N failed"
# summed over all runs.
set -u
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
total_pass=0; total_fail=0
run_ctest() { # dir label-args...
  local dir=$1; shift
  local out
  out=$(cd "$dir" && ctest --output-on-failure -j "$JOBS" "$@" 2>&1)
  echo "$out" | tail -n 40
  local line p f
  line=$(echo "$out" | grep -E "tests passed, [0-9]+ tests failed out of" | tail -1)
  if [ -z "$line" ]; then total_fail=$((total_fail + 1)); return; fi
  f=$(echo "$line" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')
  n=$(echo "$line" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2/')
  # Set-up (label fixture, run for the tests that need it) is no test of
  # its own: not counted, unless it failed (then it counts as a failure).
  local fx
  for fx in $(cd "$dir" && ctest -N -L '^fixture$' | sed -n 's/^ *Test *#[0-9]*: //p'); do
    echo "$out" | grep -qE "Test +#[0-9]+: $fx " || continue # not run here
    echo "$out" | grep -qE "^[[:space:]]*[0-9]+ - $fx \(" && continue # failed
    n=$((n - 1))
  done
  total_pass=$((total_pass + n - f)); total_fail=$((total_fail + f))
  # CI's log keeps only the tail above: what a failed test printed, and
  # whether it fails again (a flake shows here), comes from a second run.
  # Diagnostic only: the failures above stay counted.
  if [ "$f" != 0 ]; then
    echo "-- the failed tests once more, with their output (diagnostic; counted above) --"
    (cd "$dir" && ctest --rerun-failed --output-on-failure "$@" 2>&1) | tail -n 150
  fi
}
# The compiler's and linker's diagnostics ("f.c:1:2: warning: ...",
# "collect2: error: ..."), not the progress lines that name a file error.c.
DIAGNOSTIC='(^|[^[:alnum:]_])(error|warning):'
build() { # dir extra-cmake-args...
  local dir=$1; shift
  cmake -S . -B "$dir" "$@" >/dev/null && cmake --build "$dir" -j "$JOBS" 2>&1 | grep -E "$DIAGNOSTIC" ; return ${PIPESTATUS[0]}
}
# torch 2.x (Kineto): the project's venv (.venv, made or updated by
# scripts/torch2_venv.sh: torch 2.13 on the CPU and the torch-2.x tools the
# tests read our outputs with) and a build of aiprof._C and the adapter for
# it (build-t2), made first: the Python suite runs there again below, and
# ctest's GPU-check rehearsal runs its torch half on it.  A venv that cannot
# be made is a failure: the suite would otherwise pass on torch 1.13 alone.
echo "== torch 2.x venv and build (build-t2) =="
T2_OK=0; T2PY=""
if [ "${AIP_SKIP_TORCH2:-0}" = 1 ]; then
  echo "skipped: AIP_SKIP_TORCH2=1"
elif T2PY=$(bash scripts/torch2_venv.sh || bash scripts/torch2_venv.sh); then
  echo "$("$T2PY" -c 'import torch; print("torch", torch.__version__)') ($T2PY)"
  export AIP_TORCH2_PYTHON=$T2PY
  if build build-t2 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$T2PY"; then
    T2_OK=1
  else total_fail=$((total_fail+1)); fi
else
  echo "FAILED: the torch 2.x venv could not be made (scripts/torch2_venv.sh said why above;"
  echo "        AIP_SKIP_TORCH2=1 skips this part)"
  total_fail=$((total_fail+1))
fi
echo "== normal build =="
if build build -DCMAKE_BUILD_TYPE=RelWithDebInfo; then run_ctest build; else total_fail=$((total_fail+1)); fi
echo "== ASan+UBSan build =="
if build build-asan -DCMAKE_BUILD_TYPE=Debug -DAIP_SANITIZE=address,undefined; then
  ASAN_OPTIONS=detect_leaks=1 AIP_SANITIZER=asan run_ctest build-asan -LE '^e2e$'
else total_fail=$((total_fail+1)); fi
echo "== TSan build =="
if build build-tsan -DCMAKE_BUILD_TYPE=Debug -DAIP_SANITIZE=thread; then
  AIP_SANITIZER=tsan TSAN_OPTIONS="halt_on_error=1" run_ctest build-tsan -L '^threads$'
else total_fail=$((total_fail+1)); fi
run_pytest() { # build-dir extra-env-and-args...
  local dir=$1; shift
  local out line p f
  out=$(cd "$dir" && env PYTHONPATH="$PWD/python" AIPROF_QUIET=1 "$@" 2>&1)
  # On failure CI's log is all there is: show what failed, not only the tail.
  if echo "$out" | grep -q "^=* FAILURES =*$\|^=* ERRORS =*$"; then
    echo "$out" | sed -n '/^=* \(FAILURES\|ERRORS\) =*$/,$p' | head -n 300
  else
    echo "$out" | tail -n 15
  fi
  line=$(echo "$out" | grep -E "[0-9]+ (passed|failed)" | tail -1)
  p=$(echo "$line" | grep -oE "[0-9]+ passed" | grep -oE "[0-9]+" || echo 0)
  f=$(echo "$line" | grep -oE "[0-9]+ (failed|errors?)" | awk '{s += $1} END {print s + 0}')
  [ -z "$line" ] && f=1
  total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-0}))
}
PYTEST="/usr/bin/python3 -m pytest -q -p no:cacheprovider"
echo "== Python tests (pytest, Debian's /usr/bin/python3) =="
if [ -d tests/python ] && [ -d build/python/aiprof ]; then
  run_pytest build $PYTEST "$PWD/tests/python"
else
  echo "skipped: no Python package built (python3-dev / python3-torch missing?)"
fi
echo "== Python tests (pytest, torch 2.x venv) =="
if [ "$T2_OK" = 1 ]; then
  run_pytest build-t2 "$T2PY" -m pytest -q -p no:cacheprovider "$PWD/tests/python"
else
  echo "skipped: no torch 2.x build (see \"torch 2.x venv and build\" above)"
fi
# Our code loaded into an uninstrumented interpreter: built with ASan+UBSan
# and the ASan runtime preloaded.  `aiprof run` puts its own library first
# in LD_PRELOAD, which ASan refuses: those tests run above.
echo "== Python tests, libaiprof, aiprof._C and the PyTorch adapter under ASan+UBSan =="
asan_rt=$(gcc -print-file-name=libasan.so 2>/dev/null)
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if [ -d build/python/aiprof/ ] && [ -f "$asan_rt" ]; then
  if build build-asan-py -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS=$san" \
       "-DCMAKE_CXX_FLAGS=$san"; then
    # Reports go to files too: pytest captures a test's stderr, and a report
    # that ends the process would be lost with it.
    san_logs="$PWD/build-asan-py/sanitizer"
    rm -f "$san_logs".*
    run_pytest build-asan-py LD_PRELOAD="$asan_rt" \
      ASAN_OPTIONS="detect_leaks=0:log_path=$san_logs" \
      UBSAN_OPTIONS="print_stacktrace=1:log_path=$san_logs" \
      $PYTEST --ignore="$PWD/tests/python/test_no_code_change.py" "$PWD/tests/python"
    for f in "$san_logs".*; do
      if [ -f "$f" ]; then echo "-- sanitizer report $f:"; head -n 60 "$f"; fi
    done
  else total_fail=$((total_fail+1)); fi
else
  echo "skipped: no Python package built, or no ASan runtime"
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
