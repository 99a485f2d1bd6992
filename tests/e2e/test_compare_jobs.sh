#!/usr/bin/env bash
# test_compare_jobs.sh — `aiprof compare BASE NEW` on two jobs
# (docs/ADVISE.md "Two jobs"): the 3-rank MPI example run twice, the
# second time with rank 1 slowed by 60 ms a step.  The ranks are matched by
# global rank; the per-rank step breakdown (text, CSV with a Rank column,
# HTML) must show rank 1's own time (Computing + Free, the slow-rank rule's
# measure) grown the most, by more than half the planted 60 ms, and its
# peers' Communication(Not Overlapped) grown (they wait for it); a result
# directory against a job is an error.  Skipped (77) without MPI.
set -u
BUILD=$1
AIPROF="$BUILD/bin/aiprof"
if [ ! -x "$BUILD/bin/mpi_train" ] || ! command -v mpirun >/dev/null; then
  echo "SKIPPED compare of two jobs: no MPI (apt-get install openmpi-bin libopenmpi-dev)"
  exit 77
fi
T=$(mktemp -d /tmp/aiprof_compare_jobs_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
MPIRUN=(mpirun -np 3 --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader # this host's shared memory only
for job in base new; do
  extra=()
  [ $job = new ] && extra=(--slow-rank 1 --slow-ms 60)
  mkdir -p "$T/$job"
  "${MPIRUN[@]}" "$BUILD/bin/mpi_train" --steps 4 --params 20000 --ring 300 --compute-ms 2 \
    "${extra[@]}" --dir "$T/$job" >"$T/$job.log" 2>&1 || { cat "$T/$job.log"; fail "mpi_train $job"; }
done
"$AIPROF" compare -q "$T/base" "$T/new" --csv "$T/cmp.csv" --html "$T/cmp.html" >"$T/cmp.txt" ||
  fail "compare of two jobs: exit $?"
grep -q "^\[step\] per rank" "$T/cmp.txt" || fail "no per-rank step table: $(head -20 "$T/cmp.txt")"
grep -q "^\[rank   1\] top changes" "$T/cmp.txt" || fail "no top changes for rank 1"
python3 - "$T" <<'PY' || exit 1
import csv, sys
t = sys.argv[1]
rows = list(csv.DictReader(open(f"{t}/cmp.csv", newline="")))
busy, comm = {}, {}
for r in rows:
    if r["Section"] == "step" and r["Operator Name"] in ("Computing", "Free"):
        busy[int(r["Rank"])] = busy.get(int(r["Rank"]), 0) + float(r["Diff Duration(ms)"])
    if r["Section"] == "step" and r["Operator Name"] == "Communication(Not Overlapped)":
        comm[int(r["Rank"])] = float(r["Diff Duration(ms)"])
assert 1 in busy, busy
slowest = max(busy, key=busy.get)
assert slowest == 1, f"Computing + Free grew most on rank {slowest}, not 1: {busy}"
assert busy[1] > 30, f"rank 1's Computing + Free grew {busy[1]:.3f} ms a step, planted 60: {busy}"
assert all(comm.get(k, 0) > 0 for k in (0, 2)), f"the peers' waits did not grow: {comm}"
html = open(f"{t}/cmp.html", encoding="utf-8").read()
assert '<table id="steps">' in html and '<table id="rank-1">' in html, "HTML tables"
print(f"ok: Computing + Free per step row grew by {busy[1]:.1f} ms on rank 1, " +
      ", ".join(f"{busy.get(k, 0):.1f} on rank {k}" for k in (0, 2)))
PY
# like with like only
one=$(ls -d "$T"/base/*_ascend_pt | head -1)
"$AIPROF" compare -q "$one" "$T/new" >/dev/null 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "compare two result directories or two jobs" "$T/err" ||
  fail "a directory against a job: exit $rc, $(cat "$T/err")"
echo "test_compare_jobs: ok"
