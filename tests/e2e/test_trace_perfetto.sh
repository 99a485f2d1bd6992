#!/usr/bin/env bash
# End to end for trace.perfetto-trace (`--trace-format perfetto`,
# docs/RESULT_LAYOUT.md): profiles covering every layer of trace_view.json
# — the golden input (ops, annotations, Python functions, mstx marks and
# ranges, memory, GC, fwdbwd), the fake device back end (CANN calls,
# queues with kernels and copies, overlap, op → kernel and HostToDevice
# flows), host_sys counters, OS runtime calls, split (mis-nested) slices,
# and MPI communication when mpirun exists — are analysed with it, and
# each file is decoded with Perfetto's published schema (the perfetto
# package's perfetto_trace_pb2) and compared with trace_view.json of the
# same analysis (tests/python/perfetto_check.py: slices nest, the same
# slices / instants / counters / flows at the same ns).  Skipped (77) when
# no Python with the perfetto package is found ($AIP_PERFETTO_PYTHON, else
# $AIP_TORCH2_PYTHON, else SRC/.venv/bin/python: the torch 2.x venv, whose
# requirements carry it).
set -eu
BUILD=$1 SRC=$2
B=$BUILD/bin
PY=${AIP_PERFETTO_PYTHON:-${AIP_TORCH2_PYTHON:-$SRC/.venv/bin/python}}
CHECK=$SRC/tests/python/perfetto_check.py
if [ ! -x "$PY" ] || ! "$PY" -c 'from perfetto.protos.perfetto.trace import perfetto_trace_pb2' \
     2>/dev/null; then
  echo "SKIPPED: no Python with the perfetto package's protobuf schema ($PY)"
  exit 77
fi
TMP=$(mktemp -d /tmp/aiprof_perfetto_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
passed=0
fail() { echo "FAIL: $*" >&2; echo "e2e perfetto: $passed passed, 1 failed"; exit 1; }

check() { # DIR WHAT: analyse with --trace-format perfetto, decode, compare
  "$B/aiprof" analyse -q --trace-format perfetto "$1" >/dev/null || fail "analyse $2"
  local f="$1/ASCEND_PROFILER_OUTPUT/trace.perfetto-trace"
  [ -f "$f" ] || fail "$2: no trace.perfetto-trace"
  [ "$(stat -c %a "$f")" = 640 ] || fail "$2: mode $(stat -c %a "$f"), not 640"
  "$PY" "$CHECK" "$1" >"$TMP/check.out" 2>&1 || { cat "$TMP/check.out"; fail "$2: check"; }
  echo "$2: $(tail -1 "$TMP/check.out" | sed 's/^[^{]*//')"
  passed=$((passed + 1))
}

cp -r "$SRC/tests/golden/input/golden_ascend_pt" "$TMP/"
check "$TMP/golden_ascend_pt" golden

mkdir -p "$TMP/dev"
DEV=$("$B/fake_device_profile" "$TMP/dev" 3 schedule) || fail "fake_device_profile"
check "$DEV" device

"$B/prog_host_sys" "$TMP/hs" >"$TMP/hs.out" || fail "prog_host_sys"
check "$(head -1 "$TMP/hs.out")" host_sys

AIPROF_OSRT_THRESHOLD_NS=0 "$B/prog_osrt" "$TMP/os" 20 >/dev/null || fail "prog_osrt"
check "$(ls -d "$TMP"/os/*_ascend_pt)" osrt

"$B/prog_misnest" "$TMP/mis" >/dev/null || fail "prog_misnest"
check "$(ls -d "$TMP"/mis/*_ascend_pt)" split_slices

if [ -x "$B/mpi_train" ] && command -v mpirun >/dev/null; then
  MPIRUN=(mpirun -np 2 --oversubscribe)
  [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
  OMPI_MCA_btl=self,vader "${MPIRUN[@]}" "$B/mpi_train" --steps 2 --params 2000 --ring 100 \
    --compute-ms 1 --dir "$TMP/mpi" >"$TMP/mpi.log" 2>&1 || { cat "$TMP/mpi.log"; fail "mpi_train"; }
  for d in "$TMP"/mpi/*_ascend_pt; do check "$d" communication; done
else
  echo "communication: not run (no MPI)"
fi

# bench_trace_perfetto's profiles (bench_analyse.c's generator: nested ops
# on 3 threads with steps; with --device a runtime call and a kernel per
# op triple, kernels of different threads starting together).
for dev in "" --device; do
  k=$("$B/bench_trace_perfetto" 20000 3 $dev --keep --rounds 1 | sed -n 's/^  kept: //p')
  [ -d "$k/bench_ascend_pt" ] || fail "bench_trace_perfetto $dev"
  mv "$k" "$TMP/bench$dev" && check "$TMP/bench$dev/bench_ascend_pt" "bench$dev"
done

# `aiprof run --trace-format perfetto` analyses with it.
"$B/aiprof" run --trace-format perfetto --dir "$TMP/run" -- sleep 0.1 >/dev/null 2>&1 ||
  fail "aiprof run --trace-format perfetto"
RUN=$(ls -d "$TMP"/run/*_ascend_pt)
[ -f "$RUN/ASCEND_PROFILER_OUTPUT/trace.perfetto-trace" ] || fail "aiprof run: no perfetto file"
"$PY" "$CHECK" "$RUN" >/dev/null || fail "aiprof run: check"
passed=$((passed + 1))

# Re-analysed in the default form, the directory no longer holds the file
# (only this analysis's outputs stay); an unknown form is a usage error.
"$B/aiprof" analyse -q "$DEV" >/dev/null || fail "analyse (default form)"
[ ! -e "$DEV/ASCEND_PROFILER_OUTPUT/trace.perfetto-trace" ] ||
  fail "trace.perfetto-trace left from an earlier analysis"
set +e
"$B/aiprof" analyse -q --trace-format protobuf "$DEV" >/dev/null 2>"$TMP/err"
rc=$?
set -e
[ $rc = 2 ] && grep -q "perfetto" "$TMP/err" || fail "unknown trace format: rc $rc, $(cat "$TMP/err")"
passed=$((passed + 1))
echo "e2e perfetto: $passed passed, 0 failed"
