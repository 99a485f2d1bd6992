#!/usr/bin/env bash
# test_mpi.sh — MPI calls recorded through PMPI (libaiprof_mpi.so), checked
# against what examples/mpi/mpi_train sent (tests/e2e/check_mpi.py):
#   1. linked: the example profiles itself (aiprof's C API, -laiprof_mpi),
#      with rank 2 slowed;
#   2. injected: `mpirun -np 4 aiprof run -- mpi_train_plain`, a build of the
#      example that never heard of aiprof;
#   3. `aiprof run --no-mpi` under mpirun records no communication;
#   4. one of each wrapped call on 3 ranks (mpi_calls.c, check_mpi_calls.py).
# Skipped with a message when aiprof was built without MPI or mpirun is missing.
set -u
BUILD=$1
SRC=$2
if [ ! -x "$BUILD/bin/mpi_train" ] || ! command -v mpirun >/dev/null; then
  echo "SKIPPED MPI capture: no MPI (apt-get install openmpi-bin libopenmpi-dev, then rebuild)"
  exit 0
fi
T=$(mktemp -d /tmp/aiprof_mpi_XXXXXX)
trap 'rm -rf "$T"' EXIT
MPIRUN=(mpirun -np 4 --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
# Keep Open MPI to this host's shared memory (no network interfaces probed).
# Keep Open MPI to this host (shared memory), whatever the machine's network.
export OMPI_MCA_btl=self,vader
STEPS=3 PARAMS=20000 RING=300
ARGS=(--steps $STEPS --params $PARAMS --ring $RING --compute-ms 2)
fail=0

echo "== linked, rank 2 slowed"
mkdir -p "$T/linked"
if ! "${MPIRUN[@]}" "$BUILD/bin/mpi_train" "${ARGS[@]}" --slow-rank 2 --slow-ms 5 \
     --dir "$T/linked" >"$T/linked.log" 2>&1; then
  cat "$T/linked.log"; echo "FAIL: mpi_train (linked) failed"; fail=1
else
  python3 "$SRC/tests/e2e/check_mpi.py" "$BUILD/bin/dump_comm" "$T/linked" 4 $STEPS \
    $PARAMS $RING || fail=1
fi

echo "== injected by aiprof run under mpirun"
mkdir -p "$T/run"
if ! "${MPIRUN[@]}" "$BUILD/bin/aiprof" run --dir "$T/run" -- "$BUILD/bin/mpi_train_plain" \
     "${ARGS[@]}" >"$T/run.log" 2>&1; then
  cat "$T/run.log"; echo "FAIL: aiprof run of mpi_train_plain failed"; fail=1
else
  python3 "$SRC/tests/e2e/check_mpi.py" "$BUILD/bin/dump_comm" "$T/run" 4 $STEPS \
    $PARAMS $RING || fail=1
  n=$(grep -c "analysed$" "$T/run.log")
  [ "$n" = 4 ] || { cat "$T/run.log"; echo "FAIL: $n of 4 rank directories analysed"; fail=1; }
  # under mpirun the default level is Level1: the communication summaries
  for d in "$T"/run/*_ascend_pt; do
    grep -q '"_profiler_level": *"Level1"' "$d"/profiler_info_*.json &&
      [ -f "$d/ASCEND_PROFILER_OUTPUT/communication.json" ] &&
      [ -f "$d/ASCEND_PROFILER_OUTPUT/communication_matrix.json" ] ||
      { echo "FAIL: aiprof run under mpirun: $d is not at Level1 with communication.json"; fail=1; }
  done
fi

echo "== aiprof run --profiler-level Level0 under mpirun"
# The seed writes communication.json and communication_matrix.json at
# Level1 and Level2 only: at Level0 none, the summary says why, and
# aiprof cluster names the ranks without them and why.
mkdir -p "$T/lv0"
if ! "${MPIRUN[@]}" "$BUILD/bin/aiprof" run --profiler-level Level0 --dir "$T/lv0" -- \
     "$BUILD/bin/mpi_train_plain" "${ARGS[@]}" >"$T/lv0.log" 2>&1; then
  cat "$T/lv0.log"; echo "FAIL: aiprof run --profiler-level Level0 failed"; fail=1
else
  for d in "$T"/lv0/*_ascend_pt; do
    out="$d/ASCEND_PROFILER_OUTPUT"
    if [ -e "$out/communication.json" ] || [ -e "$out/communication_matrix.json" ] ||
       [ ! -f "$out/step_trace_time.csv" ]; then
      echo "FAIL: Level0: $d has a communication file, or no step_trace_time.csv"; fail=1
    fi
    [ "$("$BUILD/bin/aiprof" summary "$d" | grep -c "communication.json and communication_matrix.json not written (nor analysis.db's CommAnalyzer\* tables): profiler_level=Level0")" = 1 ] ||
      { echo "FAIL: Level0: the summary of $d does not say once why"; fail=1; }
  done
  "$BUILD/bin/aiprof" cluster -q "$T/lv0" >"$T/lv0.cluster" 2>&1 ||
    { cat "$T/lv0.cluster"; echo "FAIL: aiprof cluster on Level0 ranks"; fail=1; }
  grep -q "^no communication data from ranks 0-3: profiled at profiler_level Level0" "$T/lv0.cluster" ||
    { cat "$T/lv0.cluster"; echo "FAIL: aiprof cluster does not say why ranks 0-3 have no communication data"; fail=1; }
fi

echo "== aiprof run --no-mpi"
mkdir -p "$T/nompi"
if ! "${MPIRUN[@]}" "$BUILD/bin/aiprof" run --no-mpi --no-analyse --dir "$T/nompi" -- \
     "$BUILD/bin/mpi_train_plain" "${ARGS[@]}" >"$T/nompi.log" 2>&1; then
  cat "$T/nompi.log"; echo "FAIL: aiprof run --no-mpi failed"; fail=1
else
  for d in "$T"/nompi/*_ascend_pt; do
    ops=$("$BUILD/bin/dump_comm" "$d" | grep -c "^op")
    [ "$ops" = 0 ] || { echo "FAIL: --no-mpi recorded $ops ops in $d"; fail=1; }
  done
  [ "$(ls -d "$T"/nompi/*_ascend_pt | wc -l)" = 4 ] || { echo "FAIL: --no-mpi: not 4 results"; fail=1; }
fi
echo "== every wrapped call, 3 ranks"
mkdir -p "$T/calls"
if ! mpirun -np 3 --oversubscribe $([ "$(id -u)" = 0 ] && echo --allow-run-as-root) \
     "$BUILD/bin/mpi_calls" "$T/calls" >"$T/calls.log" 2>&1; then
  cat "$T/calls.log"; echo "FAIL: mpi_calls failed"; fail=1
else
  python3 "$SRC/tests/e2e/check_mpi_calls.py" "$BUILD/bin/dump_comm" "$T/calls" || fail=1
fi
[ $fail = 0 ] && echo "PASS"
exit $fail
