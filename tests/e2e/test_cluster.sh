#!/usr/bin/env bash
# test_cluster.sh — `aiprof cluster DIR` on the 4-rank MPI example with
# rank 2 slowed (examples/mpi/mpi_train --slow-rank 2), its result
# directories two levels below DIR, analysed by `aiprof cluster -j 2`: the
# verdict names rank 2 and no other rank; cluster_step_trace_time.csv has one row per rank and step with the
# rank's own values and communication_group.json the world group
# and cluster_communication(_matrix).json / the ClusterCommunication* tables
# the split of every collective (rank 2's peers wait for it), the bytes the
# program sent per op and per ring link (tests/e2e/check_cluster.py).
# Then bad directories are added — a truncated step_trace_time.csv, no profiler_info_{rank}.json, the same
# rank from an older run, a run from another job (its collectives shifted
# by a day) — and each is named with its reason, exit status 1, while the
# four good ranks are still analysed and rank 2 still named.  --html:
# the report, cluster_analysis.db and the link matrix's bytes per ring link
# (tests/e2e/check_cluster_mpi.py).  --help and usage errors: exit 0 and 2.
# Skipped with a message when aiprof was built without MPI or mpirun is missing.
set -u
BUILD=$1
SRC=$2
AIPROF="$BUILD/bin/aiprof"
fail=0
"$AIPROF" cluster --help | grep -q "cluster_step_trace_time.csv" || { echo "FAIL: --help"; fail=1; }
"$AIPROF" cluster >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: no DIR is not exit 2"; fail=1; }
"$AIPROF" cluster --bogus x >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: bad option not 2"; fail=1; }
if [ ! -x "$BUILD/bin/mpi_train" ] || ! command -v mpirun >/dev/null; then
  echo "SKIPPED cluster: no MPI (apt-get install openmpi-bin libopenmpi-dev)"
  exit $fail
fi
T=$(mktemp -d /tmp/aiprof_cluster_XXXXXX)
trap 'rm -rf "$T"' EXIT
"$AIPROF" cluster "$T" >"$T/empty.log" 2>&1; rc=$?
{ [ $rc = 1 ] && grep -q "no rank result directory" "$T/empty.log"; } ||
  { cat "$T/empty.log"; echo "FAIL: empty DIR: exit $rc"; fail=1; }
[ -e "$T/cluster_analysis_output" ] && { echo "FAIL: an output folder for no rank"; fail=1; }
rm -f "$T/empty.log"
MPIRUN=(mpirun -np 4 --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader # this host's shared memory only
mkdir -p "$T/job/node0"
if ! "${MPIRUN[@]}" "$BUILD/bin/mpi_train" --steps 3 --params 20000 --ring 300 \
     --compute-ms 2 --slow-rank 2 --slow-ms 20 --dir "$T/job/node0" >"$T.log" 2>&1; then
  cat "$T.log"; rm -f "$T.log"; echo "FAIL: mpi_train failed"; exit 1
fi
rm -f "$T.log"

check_verdict() { # LOG: rank 2 named slow, no other rank
  grep -q "^slow rank: 2 " "$1" || { cat "$1"; echo "FAIL: rank 2 not named slow"; fail=1; }
  if grep "^slow rank:" "$1" | grep -vq "^slow rank: 2 "; then
    cat "$1"; echo "FAIL: another rank named slow"; fail=1
  fi
  grep -q "^4 ranks analysed" "$1" || { cat "$1"; echo "FAIL: not 4 ranks analysed"; fail=1; }
}

"$AIPROF" cluster -j 2 "$T/job" >"$T/out1.log" 2>&1; rc=$? # analysed by two children
[ "$(grep -c '^analysing ' "$T/out1.log")" = 4 ] || { cat "$T/out1.log"; echo "FAIL: not 4 analysed"; fail=1; }
[ $rc = 0 ] || { cat "$T/out1.log"; echo "FAIL: aiprof cluster exit $rc"; fail=1; }
check_verdict "$T/out1.log"
# A slow link with the slow rank at one end says its time includes waiting for it.
if grep -E "^slow link: (2->[0-9]+|[0-9]+->2) " "$T/out1.log" | grep -vq "; rank 2 is slow: "; then
  grep "^slow link" "$T/out1.log"; echo "FAIL: a slow link to or from rank 2 without the note"; fail=1
fi
python3 "$SRC/tests/e2e/check_cluster.py" "$T/job" 4 3 20000 300 2 || fail=1
# --html, cluster_analysis.db and the link matrix (bytes per ring link = what was sent)
"$AIPROF" cluster --html -q "$T/job" >"$T/html.log" 2>&1 || { cat "$T/html.log"; echo "FAIL: --html"; fail=1; }
python3 "$SRC/tests/e2e/check_cluster_mpi.py" "$T/job" 3 300 2 || fail=1

# Bad directories beside the good ones (the good ones are analysed already).
BAD="$T/job/node1"
mkdir -p "$BAD"
src_dir() { grep -l . "$T"/job/node0/*/profiler_info_"$1".json | xargs dirname; }
cp -r "$(src_dir 1)" "$BAD/w_1_20000101000000001_ascend_pt"        # older duplicate of rank 1
cp -r "$(src_dir 3)" "$BAD/w_9_20991231000000000_ascend_pt"        # truncated csv
csv="$BAD/w_9_20991231000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"
mv "$BAD/w_9_20991231000000000_ascend_pt/profiler_info_3.json" \
   "$BAD/w_9_20991231000000000_ascend_pt/profiler_info_9.json"
head -c $(( $(stat -c %s "$csv") - 7 )) "$csv" > "$csv.t" && mv "$csv.t" "$csv"
cp -r "$(src_dir 0)" "$BAD/w_7_1_ascend_pt"                          # no profiler_info
rm "$BAD/w_7_1_ascend_pt"/profiler_info_*.json
cp -r "$(src_dir 0)" "$BAD/w_5_1_ascend_pt"                          # another job
mv "$BAD/w_5_1_ascend_pt/profiler_info_0.json" "$BAD/w_5_1_ascend_pt/profiler_info_5.json"
python3 - "$BAD/w_5_1_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
for step in d.values():
    for kind in step.values():
        for op in kind.values():
            t = op.get("Communication Time Info", {})
            if "Start Timestamp(us)" in t:
                t["Start Timestamp(us)"] += 86400e6
json.dump(d, open(p, "w"))
PY
"$AIPROF" cluster "$T/job" >"$T/out2.log" 2>&1; rc=$?
[ $rc = 1 ] || { cat "$T/out2.log"; echo "FAIL: bad directories: exit $rc, want 1"; fail=1; }
check_verdict "$T/out2.log"
for want in "w_1_20000101000000001_ascend_pt (rank 1): rank 1 also in" \
            "w_9_20991231000000000_ascend_pt (rank 9): .*truncated" \
            "w_7_1_ascend_pt: no profiler_info_{rank}.json" \
            "w_5_1_ascend_pt (rank 5): from another job"; do
  grep -q "^not used: .*$want" "$T/out2.log" ||
    { cat "$T/out2.log"; echo "FAIL: not named: $want"; fail=1; }
done
grep -q "4 directories not used" "$T/out2.log" || { echo "FAIL: count of not used"; fail=1; }
# the second run's rows: the four good ranks only
cp -r "$T/job/cluster_analysis_output" "$T/job/node0/"
python3 "$SRC/tests/e2e/check_cluster.py" "$T/job/node0" 4 3 20000 300 2 || fail=1
[ $fail = 0 ] && echo "PASS"
exit $fail
