#!/usr/bin/env bash
# End to end for the CUDA back end's CUPTI rules (src/collect/cuda/cuda_cupti.c,
# docs/CUDA.md "CUPTI's rules"), on stand-ins for the driver and CUPTI
# (tests/e2e/cuda/fake_cuda.c, fake_cupti.c) that keep those rules and say
# when one is broken:
#   A. `aiprof run`, the trace ending at exit, CUPTI started by cuInit's
#      injection during main: every kernel is kept — the forced flush runs
#      before libcupti's exit-time teardown, and the last step's unfinished
#      kernels are finished by synchronising first — and the log does not
#      say "no device data" (true when the trace began, false at its end);
#      the device's name is asked of the driver, not on CUPTI's thread;
#      a program that launched nothing is not synchronised;
#   B. another CUPTI client holds the process: aiprof touches nothing of
#      CUPTI's, says so once, and profiles the host;
#   C. two traces in one process: aiprof gives the subscription back at
#      stop (another client can subscribe between them), re-registers its
#      clock at the second start (the other client left its own), and
#      keeps the unsynchronised last step's kernels of each trace;
#   D. a CUPTI that accepts the clock callback but keeps its own clock:
#      the check against cuptiGetTimestamp notices, and kernels are placed
#      through clock samples instead.
#   E. the API callbacks enabled are those of the calls recorded (launch,
#      copy, memory, synchronisation), found by name — not whole domains:
#      cudaGetDevice, cudaStreamIsCapturing, cuCtxGetCurrent... stay off;
#      a CUPTI that cannot name its callbacks gets both domains.
# Kernel times are checked against the trace's host events: a kernel read
# in the wrong clock lands an hour (or decades) away.
set -eu
BUILD=$1
B=$BUILD/bin
F=$BUILD/fake_cuda
if [ ! -x "$B/fake_cuda_prog" ] || [ ! -f "$F/libfake_cupti.so" ]; then
  echo "SKIP: the CUDA stand-ins were not built (no CUPTI headers)"; exit 77
fi
TMP=$(mktemp -d /tmp/aiprof_cupti_rules_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export AIPROF_CUPTI_LIB=$F/libfake_cupti.so
fail() { echo "FAIL: $*"; exit 1; }
no_rule_broken() { # $1: the stand-in's stderr
  ! grep -q "^fake_cupti:" "$1" || fail "$2: $(grep "^fake_cupti:" "$1" | sort | uniq -c)"
}
# analyse DIR: the result directories the program wrote itself (the public
# API saves the raw trace; `aiprof run` analyses, a program asks for it).
analyse() {
  local d
  for d in "$1"/*_ascend_pt; do
    "$B/aiprof" analyse "$d" >/dev/null 2>&1 || fail "aiprof analyse $d failed"
  done
}
# check_kernels DIR N: every result directory under DIR has N stand-in
# kernels in kernel_details.csv, each inside its trace's host time span.
check_kernels() {
  python3 - "$1" "$2" <<'PY'
import csv, glob, json, os, sys
dirs = sorted(glob.glob(os.path.join(sys.argv[1], "*_ascend_pt")))
want = int(sys.argv[2])
if not dirs:
    sys.exit(f"FAIL: no result directory under {sys.argv[1]}")
for d in dirs:
    out = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
    path = os.path.join(out, "kernel_details.csv")
    rows = list(csv.DictReader(open(path))) if os.path.exists(path) else []
    n = sum(r["Name"].startswith("fake_kernel") for r in rows)
    if n != want:
        sys.exit(f"FAIL: {d}: {n} kernels in kernel_details.csv, {want} launched")
    ev = json.load(open(os.path.join(out, "trace_view.json")))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    xs = [e for e in ev if e.get("ph") == "X"]
    host = [e for e in xs if not e["name"].startswith("fake_kernel")]
    kern = [e for e in xs if e["name"].startswith("fake_kernel")]
    lo = min(float(e["ts"]) for e in host)
    hi = max(float(e["ts"]) + float(e.get("dur", 0)) for e in host)
    slack = 1e6  # 1 s in µs: a kernel read in another clock is an hour away
    bad = [e for e in kern if not lo - slack <= float(e["ts"]) <= hi + slack]
    if len(kern) != want or bad:
        sys.exit(f"FAIL: {d}: {len(kern)} kernels in trace_view.json, {len(bad)} outside the "
                 f"trace's host span [{lo}, {hi}] µs, e.g. {bad[:1]}")
print(f"{len(dirs)} trace(s) with {want} kernels each, all inside their host span")
PY
}

# A. aiprof run: 4 steps of 5 kernels, the last not synchronised by the program.
"$B/aiprof" run --dir "$TMP/a" -- "$B/fake_cuda_prog" run 5 4 >"$TMP/a.out" 2>"$TMP/a.err" ||
  fail "aiprof run failed: $(cat "$TMP/a.err")"
grep -q "^launched 20 kernels" "$TMP/a.out" || fail "the program did not run: $(cat "$TMP/a.out")"
no_rule_broken "$TMP/a.err" "aiprof run at exit"
check_kernels "$TMP/a" 20 || exit 1
# The device's name, asked of the driver on the program's thread.
grep -q '"Fake CUDA device 0"' "$TMP"/a/*/ASCEND_PROFILER_OUTPUT/trace_view.json ||
  fail "the device's name is not in trace_view.json"
# CUPTI started at cuInit, after the trace began: no "no device data" said.
! grep -h "no device data can be collected" "$TMP"/a/*/logs/*.log ||
  fail "the log says there is no device data, and there is"

# A2. A program that launches nothing: the stop does not synchronise (no
# CUDA work of the program's to wait for; a context it never made).
"$B/aiprof" run --dir "$TMP/a2" -- "$B/fake_cuda_prog" run 0 1 >"$TMP/a2.out" 2>"$TMP/a2.err" ||
  fail "aiprof run failed on a program launching nothing: $(cat "$TMP/a2.err")"
no_rule_broken "$TMP/a2.err" "a program launching nothing"

# B. Another client holds CUPTI: host profile, one message, CUPTI left alone.
FAKE_CUPTI_OTHER_CLIENT=1 "$B/aiprof" run --dir "$TMP/b" -- "$B/fake_cuda_prog" run 5 4 \
  >"$TMP/b.out" 2>"$TMP/b.err" || fail "aiprof run failed beside another client: $(cat "$TMP/b.err")"
grep -q "^launched 20 kernels" "$TMP/b.out" || fail "the program did not run beside another client"
no_rule_broken "$TMP/b.err" "beside another CUPTI client"
d=$(find "$TMP/b" -maxdepth 1 -name "*_ascend_pt" | head -1)
[ -f "$d/ASCEND_PROFILER_OUTPUT/trace_view.json" ] || fail "no host profile beside another client"
n=$(cat "$d"/logs/*.log | grep -c "WARNING.*another CUPTI client .* holds this process" || true)
[ "$n" = 1 ] || fail "the log says $n times that another client holds CUPTI: $(cat "$d"/logs/*.log)"

# C. Two traces; between them another client subscribes, then leaves its clock.
"$B/fake_cuda_prog" api "$TMP/c" 4 3 >"$TMP/c.out" 2>"$TMP/c.err" ||
  fail "two traces: $(cat "$TMP/c.err")"
grep -q "^other client: subscribed" "$TMP/c.out" ||
  fail "aiprof kept CUPTI after its stop: $(grep "other client" "$TMP/c.out")"
no_rule_broken "$TMP/c.err" "two traces"
[ "$(find "$TMP/c" -maxdepth 1 -name "*_ascend_pt" | wc -l)" = 2 ] || fail "not two result directories"
analyse "$TMP/c"
check_kernels "$TMP/c" 12 || exit 1

# D. A CUPTI that keeps its own clock (CLOCK_REALTIME).
FAKE_CUPTI_IGNORE_TS_CB=1 "$B/fake_cuda_prog" api "$TMP/d" 4 3 >"$TMP/d.out" 2>"$TMP/d.err" ||
  fail "own clock: $(cat "$TMP/d.err")"
no_rule_broken "$TMP/d.err" "CUPTI's own clock"
analyse "$TMP/d"
check_kernels "$TMP/d" 12 || exit 1
# E. Which callbacks: by id, only the recorded calls (each of 2 traces).
FAKE_CUPTI_LIST_CALLBACKS=1 "$B/fake_cuda_prog" api "$TMP/e" 2 2 >"$TMP/e.out" 2>"$TMP/e.err" ||
  fail "callbacks: $(cat "$TMP/e.err")"
no_rule_broken "$TMP/e.err" "enabling callbacks"
got=$(grep "^enabled " "$TMP/e.out" | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')
want="2 enabled callback DRIVER cuCtxSynchronize;2 enabled callback DRIVER cuLaunchKernel;"
want+="2 enabled callback DRIVER cuMemAlloc_v2;2 enabled callback RUNTIME cudaDeviceSynchronize_v3020;"
want+="2 enabled callback RUNTIME cudaLaunchKernel_v7000;2 enabled callback RUNTIME cudaMallocAsync_v11020;"
want+="2 enabled callback RUNTIME cudaMemcpyAsync_v3020;2 enabled callback RUNTIME cudaStreamSynchronize_v3020;"
[ "$got" = "$want" ] || fail "callbacks enabled: $got, want $want"
analyse "$TMP/e"
check_kernels "$TMP/e" 4 || exit 1
# E2. A CUPTI without callback names: the two domains, as before.
FAKE_CUPTI_NO_NAMES=1 FAKE_CUPTI_LIST_CALLBACKS=1 "$B/fake_cuda_prog" api "$TMP/e2" 2 2 \
  >"$TMP/e2.out" 2>"$TMP/e2.err" || fail "callbacks without names: $(cat "$TMP/e2.err")"
got=$(grep "^enabled " "$TMP/e2.out" | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')
[ "$got" = "2 enabled domain DRIVER;2 enabled domain RUNTIME;" ] ||
  fail "callbacks enabled by a CUPTI without names: $got"
echo "cuda CUPTI rules e2e: all checks passed"
