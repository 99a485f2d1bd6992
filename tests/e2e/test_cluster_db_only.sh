#!/usr/bin/env bash
# test_cluster_db_only.sh — `aiprof cluster` on ranks exported as databases
# only (`aiprof analyse --export-type db`, torch_npu's ExportType.Db; issue
# 26 §4): no step_trace_time.csv nor communication*.json, analysis.db in
# their place, which msprof-analyze reads; main refused every such rank
# ("cannot open …/step_trace_time.csv").
# Each rank's profiler_info says `_export_type: ["db"]`, as a run with
# ExportType.Db records it, and `aiprof cluster` analyses the raw data
# itself (which then writes the databases only).
# - 4 ranks of raw data (the golden input, make_cluster_dirs.py --raw):
#   all 4 used, exit 0, the same cluster_step_trace_time.csv as the same
#   ranks recorded as text;
# - the 4-rank MPI example (rank 2 slowed; skipped without MPI): one run
#   exported as text and as db, `aiprof cluster` on each: every text output
#   (cluster_step_trace_time.csv, communication_group.json,
#   cluster_communication(_matrix).json) byte for byte the same, and the
#   same verdict (rank 2 slow).
set -u
BUILD=$1
SRC=$2
AIPROF="$BUILD/bin/aiprof"
T=$(mktemp -d /tmp/aiprof_cluster_dbonly_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
OUTS="cluster_step_trace_time.csv communication_group.json cluster_communication.json cluster_communication_matrix.json"

as_db() { # DIR...: profiler_info's export type "db", as ExportType.Db records it
  python3 - "$@" <<'PY'
import glob, json, os, sys
n = 0
for top in sys.argv[1:]:
    for p in glob.glob(os.path.join(top, "**", "profiler_info_*.json"), recursive=True):
        d = json.load(open(p))
        d["config"]["experimental_config"]["_export_type"] = ["db"]
        json.dump(d, open(p, "w"))
        n += 1
if not n:
    sys.exit("no profiler_info found")
PY
}

same_outputs() { # TEXT_JOB DB_JOB FILES...
  local a=$1 b=$2; shift 2
  for f in "$@"; do
    cmp -s "$a/cluster_analysis_output/$f" "$b/cluster_analysis_output/$f" ||
      { echo "FAIL: $f differs between the text and the db export"; fail=1; }
  done
}

mkdir -p "$T/raw"
python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/raw" 0 0 --ranks 4 --raw >/dev/null
cp -r "$T/raw" "$T/rawdb"
as_db "$T/rawdb" || fail=1
"$AIPROF" cluster -q "$T/raw" >"$T/raw.log" 2>&1 || { cat "$T/raw.log"; echo "FAIL: text ranks"; fail=1; }
"$AIPROF" cluster -q -j 2 "$T/rawdb" >"$T/rawdb.log" 2>&1; rc=$?
{ [ $rc = 0 ] && grep -q "^4 ranks analysed, 0 directories not used" "$T/rawdb.log"; } ||
  { cat "$T/rawdb.log"; echo "FAIL: db-only ranks (exit $rc)"; fail=1; }
[ "$(ls "$T"/rawdb/*/*/ASCEND_PROFILER_OUTPUT/analysis.db | wc -l)" = 4 ] &&
  ! ls "$T"/rawdb/*/*/ASCEND_PROFILER_OUTPUT/step_trace_time.csv >/dev/null 2>&1 ||
  { ls -R "$T/rawdb" | head -40; echo "FAIL: not 4 ranks with analysis.db and no step_trace_time.csv"; fail=1; }
same_outputs "$T/raw" "$T/rawdb" cluster_step_trace_time.csv communication_group.json

if [ ! -x "$BUILD/bin/mpi_train" ] || ! command -v mpirun >/dev/null; then
  echo "SKIPPED db-only MPI job: no MPI (apt-get install openmpi-bin libopenmpi-dev)"
else
  MPIRUN=(mpirun -np 4 --oversubscribe)
  [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl=self,vader
  mkdir -p "$T/mpi"
  if ! "${MPIRUN[@]}" "$BUILD/bin/mpi_train" --steps 3 --params 20000 --ring 300 \
       --compute-ms 2 --slow-rank 2 --slow-ms 20 --dir "$T/mpi" >"$T/mpi.log" 2>&1; then
    cat "$T/mpi.log"; echo "FAIL: mpi_train"; exit 1
  fi
  cp -r "$T/mpi" "$T/mpidb"
  as_db "$T/mpidb" || fail=1
  "$AIPROF" cluster -q "$T/mpi" >"$T/mpi_text.log" 2>&1 || { cat "$T/mpi_text.log"; echo "FAIL: MPI text"; fail=1; }
  "$AIPROF" cluster -q "$T/mpidb" >"$T/mpi_db.log" 2>&1; rc=$?
  { [ $rc = 0 ] && grep -q "^slow rank: 2 " "$T/mpi_db.log"; } ||
    { cat "$T/mpi_db.log"; echo "FAIL: MPI db-only ranks (exit $rc)"; fail=1; }
  # shellcheck disable=SC2086
  same_outputs "$T/mpi" "$T/mpidb" $OUTS
  diff <(sed "s#$T/mpidb#X#g" "$T/mpi_db.log") <(sed "s#$T/mpi#X#g" "$T/mpi_text.log") ||
    { echo "FAIL: the verdicts differ"; fail=1; }
fi
[ $fail = 0 ] && echo "PASS"
exit $fail
