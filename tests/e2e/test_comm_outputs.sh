#!/usr/bin/env bash
# test_comm_outputs.sh — the per-rank communication outputs of the 4-rank
# MPI example (examples/mpi/mpi_train, rank 2 slowed), checked against what
# the program sent (tests/e2e/check_comm_outputs.py): communication.json,
# communication_matrix.json, analysis.db's CommAnalyzer tables,
# COMMUNICATION_OP, step_trace_time's identities; the timeline's slices
# (Communication layer included) nest in both trace forms
# (tests/e2e/check_nesting.py).
# Skipped with a message when aiprof was built without MPI or mpirun is missing.
set -u
BUILD=$1
SRC=$2
if [ ! -x "$BUILD/bin/mpi_train" ] || ! command -v mpirun >/dev/null; then
  echo "SKIPPED communication outputs: no MPI (apt-get install openmpi-bin libopenmpi-dev)"
  exit 0
fi
T=$(mktemp -d /tmp/aiprof_comm_XXXXXX)
trap 'rm -rf "$T"' EXIT
MPIRUN=(mpirun -np 4 --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader # this host's shared memory only
STEPS=3 PARAMS=20000 RING=300
if ! "${MPIRUN[@]}" "$BUILD/bin/mpi_train" --steps $STEPS --params $PARAMS --ring $RING \
     --compute-ms 2 --slow-rank 2 --slow-ms 5 --dir "$T" >"$T.log" 2>&1; then
  cat "$T.log"; rm -f "$T.log"; echo "FAIL: mpi_train failed"; exit 1
fi
rm -f "$T.log"
fail=0
for form in torch_npu kineto; do
  for d in "$T"/*_ascend_pt; do
    "$BUILD/bin/aiprof" analyse -q --trace-format $form "$d" >/dev/null ||
      { echo "FAIL: aiprof analyse $d"; fail=1; }
    python3 "$SRC/tests/e2e/check_nesting.py" "$d/ASCEND_PROFILER_OUTPUT/trace_view.json" |
      grep -q " 0 mis-nested slice pairs, 0 unmatched ends" ||
      { echo "FAIL: $form trace of $d does not nest"; fail=1; }
    # MPI_COMM_WORLD by its label, msprof-analyze's double_hash of the name
    grep -q '"Group 3594055298557201744 Communication"' "$d/ASCEND_PROFILER_OUTPUT/trace_view.json" ||
      { echo "FAIL: $form trace of $d has no Communication layer"; fail=1; }
  done
  python3 "$SRC/tests/e2e/check_comm_outputs.py" "$T" 4 $STEPS $PARAMS $RING || fail=1
done
[ $fail = 0 ] && echo "PASS"
exit $fail
