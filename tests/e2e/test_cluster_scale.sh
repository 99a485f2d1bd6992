#!/usr/bin/env bash
# test_cluster_scale.sh — `aiprof cluster` on 1,000 synthetic rank
# directories (make_cluster_dirs.py --ranks 1000: realistic analysed ranks,
# world / tp / dp collectives and p2p, rank 37 with 3 ms more Free per
# step and last at its collectives): every rank and step in
# cluster_step_trace_time.csv, the 1 + 125 + 8 collective groups and the p2p
# group in communication_group.json, rank 37 and no other named slow.
# Then `mpirun -np 2 aiprof cluster --mpi` on the same directories gives the
# same stdout and every output file byte for byte (cmp), also with a broken
# rank among them (exit status 1 in both, the rank named) and with ranks
# that need their raw data analysed (-j 2: forked children inside MPI
# processes).  The single process's peak resident memory stays under
# 320 MiB (issue 30: it was 392 MiB while every rank's summaries and the
# cluster's sums were all held as JSON trees; 234 MiB since the sums are
# streamed and equal values shared; skipped under a sanitizer, whose shadow memory counts).
# The plugin's error paths: missing, its MPI library missing,
# not the plugin; and aiprof itself does not link MPI.
# The MPI part is skipped with a message where aiprof was built without MPI.
set -u
BUILD=$1
SRC=$2
AIPROF="$BUILD/bin/aiprof"
T=$(mktemp -d /tmp/aiprof_cluster_scale_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
export OMPI_MCA_btl=self,vader # this host's shared memory only

python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/job" 37 3000 --ranks 1000 || exit 1
# the aiprof process's own rusage (os.wait4): its peak RSS in KiB
python3 -c 'import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:])
_, st, ru = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write("%d\n" % ru.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(st))' "$T/rss" "$AIPROF" cluster -q "$T/job" >"$T/one.log" 2>&1; rc=$?
OUT="$T/job/cluster_analysis_output"
rss=$(cat "$T/rss" 2>/dev/null || echo 0)
if [ -n "${AIP_SANITIZER:-}" ]; then
  echo "peak RSS bound skipped under $AIP_SANITIZER"
elif [ "$rss" -le 0 ] || [ "$rss" -gt $((320 * 1024)) ]; then
  echo "FAIL: peak RSS of aiprof cluster on 1000 ranks is $((rss / 1024)) MiB (bound 320 MiB)"; fail=1
else
  echo "peak RSS $((rss / 1024)) MiB (bound 320 MiB)"
fi
[ $rc = 0 ] || { tail -5 "$T/one.log"; echo "FAIL: exit $rc"; fail=1; }
grep -q "^1000 ranks analysed, 0 directories not used" "$T/one.log" ||
  { grep -v "^ *[0-9]" "$T/one.log"; echo "FAIL: not 1000 ranks"; fail=1; }
[ "$(grep -c '^slow rank' "$T/one.log")" = 1 ] && grep -q "^slow rank: 37 " "$T/one.log" ||
  { grep "slow" "$T/one.log"; echo "FAIL: rank 37 (alone) not named slow"; fail=1; }
python3 - "$OUT" <<'PY' || fail=1
import csv, json, sys
out = sys.argv[1]
rows = list(csv.reader(open(out + "/cluster_step_trace_time.csv")))
assert rows[0][:4] == ["Step", "Type", "Index", "Computing"], rows[0]
got = sorted((int(r[2]), int(r[0])) for r in rows[1:])
want = [(rank, step) for rank in range(1000) for step in range(3)]
if got != want:
    print("FAIL: cluster_step_trace_time.csv rows are not every rank x step"); sys.exit(1)
for r in rows[1:]:
    c = dict(zip(rows[0], r))
    if abs(float(c["Communication"]) - float(c["Overlapped"]) -
           float(c["Communication(Not Overlapped)"])) > 0.01:
        print("FAIL: Communication != Overlapped + Not Overlapped", r); sys.exit(1)
g = json.load(open(out + "/communication_group.json"))
coll = sorted(map(tuple, g["collective"]))
want = sorted([tuple(range(1000))] + [tuple(range(8 * k, 8 * k + 8)) for k in range(125)] +
              [tuple(range(d, 1000, 8)) for d in range(8)])
if coll != want:
    print("FAIL: collective groups", len(coll)); sys.exit(1)
if g["p2p"] != [list(range(1000))]:
    print("FAIL: p2p groups"); sys.exit(1)
PY

PLUGIN="$BUILD/lib/libaiprof_cluster_mpi.so"
if ldd "$AIPROF" | grep -q "libmpi"; then echo "FAIL: aiprof links MPI"; fail=1; fi
# the plugin's error paths (no mpirun needed: they fail before MPI starts)
AIPROF_CLUSTER_MPI="$T/none.so" "$AIPROF" cluster --mpi -q "$T/job" >"$T/e1.log" 2>&1; rc=$?
{ [ $rc = 1 ] && grep -q "^aiprof cluster: --mpi needs $T/none.so: No such file or directory (aiprof built without MPI" "$T/e1.log"; } ||
  { cat "$T/e1.log"; echo "FAIL: missing plugin (exit $rc)"; fail=1; }
if command -v cc >/dev/null; then
  # a plugin whose MPI library is not installed
  echo 'int aip_missing_mpi_stub(void) { return 0; }' >"$T/m.c"
  cc -shared -fPIC -o "$T/libaipmissingmpi.so" "$T/m.c" &&
    cc -shared -fPIC -o "$T/stub.so" "$T/m.c" -Wl,--no-as-needed -L"$T" -laipmissingmpi &&
    rm "$T/libaipmissingmpi.so"
  AIPROF_CLUSTER_MPI="$T/stub.so" "$AIPROF" cluster --mpi -q "$T/job" >"$T/e2.log" 2>&1; rc=$?
  { [ $rc = 1 ] && grep -q "^aiprof cluster: --mpi: cannot load $T/stub.so: libaipmissingmpi.so: cannot open shared object file.*(is Open MPI installed?" "$T/e2.log"; } ||
    { cat "$T/e2.log"; echo "FAIL: plugin without its MPI library (exit $rc)"; fail=1; }
fi
AIPROF_CLUSTER_MPI="$BUILD/lib/libaiprof.so" "$AIPROF" cluster --mpi -q "$T/job" >"$T/e3.log" 2>&1; rc=$?
{ [ $rc = 1 ] && grep -q "is not aiprof's cluster MPI plugin (no aip__cluster_mpi_plugin)" "$T/e3.log"; } ||
  { cat "$T/e3.log"; echo "FAIL: not the plugin (exit $rc)"; fail=1; }

if [ ! -f "$PLUGIN" ] || ! command -v mpirun >/dev/null; then
  echo "SKIPPED cluster --mpi: no MPI (apt-get install openmpi-bin libopenmpi-dev)"
  [ $fail = 0 ] && echo "PASS"
  exit $fail
fi
MPIRUN=(mpirun -np 2 --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
same() { # NAME DIR: the --mpi run's stdout and outputs are the single run's
  for f in "$2/cluster_analysis_output"/*; do
    cmp "$f" "$T/$1.out/$(basename "$f")" || { echo "FAIL: $1: $(basename "$f") differs"; fail=1; }
  done
  [ "$(ls "$2/cluster_analysis_output" | wc -l)" = "$(ls "$T/$1.out" | wc -l)" ] ||
    { echo "FAIL: $1: other files"; fail=1; }
  cmp "$T/$1.single.log" "$T/$1.mpi.log" ||
    { diff "$T/$1.single.log" "$T/$1.mpi.log" | head; echo "FAIL: $1: stdout differs"; fail=1; }
}
check() { # NAME DIR ARGS...: single, then --mpi with 2 processes; same exit status
  local name=$1 dir=$2
  shift 2
  "$AIPROF" cluster "$@" "$dir" >"$T/$name.single.log" 2>&1; rc1=$?
  mv "$dir/cluster_analysis_output" "$T/$name.out"
  [ "$name" = raw ] && find "$dir" -name ASCEND_PROFILER_OUTPUT -prune -exec rm -rf {} +
  "${MPIRUN[@]}" "$AIPROF" cluster --mpi "$@" "$dir" >"$T/$name.mpi.log" 2>"$T/$name.mpi.err"; rc2=$?
  [ $rc1 = $rc2 ] || { cat "$T/$name.mpi.err"; echo "FAIL: $name: exit $rc1 single, $rc2 --mpi"; fail=1; }
  same "$name" "$dir"
}
cp "$T/one.log" "$T/big.single.log"
mv "$OUT" "$T/big.out"
"${MPIRUN[@]}" "$AIPROF" cluster --mpi -q "$T/job" >"$T/big.mpi.log" 2>"$T/big.mpi.err"; rc=$?
[ $rc = 0 ] || { cat "$T/big.mpi.err"; echo "FAIL: --mpi exit $rc"; fail=1; }
same big "$T/job"
# a broken rank (truncated step_trace_time.csv) handled by process 1: exit 1, named by process 0
rm -rf "$T/job" "$T/big.out"
python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/small" 5 3000 --ranks 24 || exit 1
csv=$(ls "$T"/small/node0/w1_*/ASCEND_PROFILER_OUTPUT/step_trace_time.csv)
head -c 150 "$csv" >"$csv.cut" && mv "$csv.cut" "$csv"
check broken "$T/small" -q
[ $rc1 = 1 ] && grep -q "^not used: .*w1_.*(rank 1): ASCEND_PROFILER_OUTPUT/step_trace_time.csv is truncated" "$T/broken.mpi.log" ||
  { cat "$T/broken.mpi.log"; echo "FAIL: broken rank not named under --mpi"; fail=1; }
# raw data analysed by the processes' forked children (-j 2)
python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/raw" 0 0 --ranks 6 --raw || exit 1
check raw "$T/raw" -q -j 2
[ $rc1 = 0 ] && grep -q "^6 ranks analysed, 0 directories not used" "$T/raw.mpi.log" ||
  { cat "$T/raw.mpi.log" "$T/raw.mpi.err"; echo "FAIL: raw ranks under --mpi"; fail=1; }
[ $fail = 0 ] && echo "PASS"
exit $fail
