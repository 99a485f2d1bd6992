#!/usr/bin/env bash
# test_cluster_db.sh — `aiprof cluster --html` on a synthetic pipeline- and
# data-parallel job (tests/e2e/make_cluster_parallel.py; no MPI needed):
# cluster_analysis.db, the DP/PP/TP and stage rows, the groups matched to
# parallel_group_info, cluster_report.html (tests/e2e/check_cluster_db.py);
# the slow link named with its numbers (rank 1 -> 3 over RDMA: the hosts
# differ), the fast one not; the same without the ranks' dbs; a
# profiler_metadata.json that is not JSON and distributed_args that do not
# fit named, without index columns; the other
# writer's tables in cluster_analysis.db kept and ours replaced on a rerun;
# a symbolic link in place of the db refused; the progress bar on a
# terminal (a pty), none with -q or when stderr is a file.
set -u
BUILD=$1
SRC=$2
AIPROF="$BUILD/bin/aiprof"
T=$(mktemp -d /tmp/aiprof_cluster_db_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
"$AIPROF" cluster --help | grep -q "cluster_report.html" && "$AIPROF" cluster --help | grep -q "cluster_analysis.db" ||
  { echo "FAIL: --help does not name cluster_report.html and cluster_analysis.db"; fail=1; }
python3 "$SRC/tests/e2e/make_cluster_parallel.py" "$T/job"
"$AIPROF" cluster --html "$T/job" >"$T/out.log" 2>"$T/err.log"; rc=$?
[ $rc = 0 ] || { cat "$T/out.log" "$T/err.log"; echo "FAIL: exit $rc"; fail=1; }
python3 "$SRC/tests/e2e/check_cluster_db.py" "$T/job" || { cat "$T/out.log"; fail=1; }
grep -q "^slow link: 1->3 RDMA — 0.5000 GB/s (8.000000 MB in 16.000000 ms, 2 records), 60.0% below the RDMA links' median 1.2500 GB/s (limit 5%)$" "$T/out.log" ||
  { cat "$T/out.log"; echo "FAIL: slow link 1->3 not named with its numbers"; fail=1; }
grep -q "^links RDMA: 2, bandwidth mean 1.2500 GB/s, median 1.2500, max 2.0000 (0->2), min 0.5000 (1->3): max - min is 120.0% of the mean" "$T/out.log" ||
  { cat "$T/out.log"; echo "FAIL: RDMA link summary"; fail=1; }
# the advisor's form: per (step, rank) the SDMA size and transit time of the split
# collectives (point-to-point ops have no transit time: not split)
grep -q "^advisor rule (slow link): SDMA bandwidth over 8 (step, rank) rows: mean 0.7500 GB/s, max 1.0000 (step0 rank 0), min 0.5000 (step0 rank 2): difference 0.5000 GB/s, 66.7% of the mean (limit 5%): slow link$" "$T/out.log" ||
  { cat "$T/out.log"; echo "FAIL: advisor slow-link rule"; fail=1; }
[ "$(grep -c '^slow link:' "$T/out.log")" = 1 ] || { cat "$T/out.log"; echo "FAIL: not one slow link"; fail=1; }
grep -q "^report: .*cluster_analysis_output/cluster_report.html$" "$T/out.log" || { echo "FAIL: report line"; fail=1; }
# a file, not a terminal: no bar
grep -q "rank directories" "$T/err.log" && { cat "$T/err.log"; echo "FAIL: a bar on a file"; fail=1; }

# Without the ranks' ascend_pytorch_profiler dbs: host names from profiler_info.
python3 "$SRC/tests/e2e/make_cluster_parallel.py" "$T/nodb" --no-db
"$AIPROF" cluster --html -q "$T/nodb" >"$T/nodb.log" 2>&1 || { cat "$T/nodb.log"; echo "FAIL: --no-db exit"; fail=1; }
python3 "$SRC/tests/e2e/check_cluster_db.py" "$T/nodb" --no-db || fail=1
grep -q "^slow link: 1->3 RDMA" "$T/nodb.log" || { cat "$T/nodb.log"; echo "FAIL: --no-db slow link"; fail=1; }

# profiler_metadata.json not JSON on rank 0, distributed_args the layout
# refuses on the others: each said, no index columns, the rest written.
python3 "$SRC/tests/e2e/make_cluster_parallel.py" "$T/badmeta"
echo "{oops" > "$T/badmeta/node0/w0_20260101000000000_ascend_pt/profiler_metadata.json"
sed -i 's/"world_size": 4/"world_size": 8/' "$T"/badmeta/node*/w[123]_*/profiler_metadata.json
env -u AIPROF_QUIET "$AIPROF" cluster "$T/badmeta" >"$T/badmeta.log" 2>&1; rc=$? # the warning is wanted
{ [ $rc = 0 ] && grep -q "w0_20260101000000000_ascend_pt/profiler_metadata.json is not a JSON object (line 1: .*): its distributed_args and parallel_group_info are not used" "$T/badmeta.log" &&
  grep -q "^distributed_args not used (no DP/PP/TP Index): rank 1's profiler_metadata.json distributed_args: world_size 8 is not tensor 1 x pipeline 2 x data 2 parallel" "$T/badmeta.log" &&
  ! head -1 "$T/badmeta/cluster_analysis_output/cluster_step_trace_time.csv" | grep -q "DP Index"; } ||
  { cat "$T/badmeta.log"; echo "FAIL: bad metadata (exit $rc)"; fail=1; }

# The other writer's table stays; ours are replaced, not appended to.
DB="$T/job/cluster_analysis_output/cluster_analysis.db"
python3 - "$DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE NotAiprofs (step TEXT, rank_id INTEGER)")
db.execute("INSERT INTO NotAiprofs VALUES ('step0', 7)")
db.commit()
PY
"$AIPROF" cluster -q "$T/job" >/dev/null 2>&1 || { echo "FAIL: rerun"; fail=1; }
python3 - "$DB" <<'PY' || fail=1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("SELECT count(*) FROM ClusterStepTraceTime").fetchone()[0]
other = db.execute("SELECT * FROM NotAiprofs").fetchall()
if n != 12 or other != [("step0", 7)]:
    print("FAIL: rerun: %d step rows (want 12), other table %s" % (n, other)); sys.exit(1)
PY
[ "$(stat -c %a "$DB")" = 640 ] || [ "$(( 0$(stat -c %a "$DB") & 0137 ))" = 0 ] || { echo "FAIL: db mode $(stat -c %a "$DB")"; fail=1; }
rm "$DB" && ln -s "$T/elsewhere.db" "$DB"
"$AIPROF" cluster -q "$T/job" >"$T/link.log" 2>&1; rc=$?
{ [ $rc = 1 ] && grep -q "symbolic link" "$T/link.log" && [ ! -e "$T/elsewhere.db" ]; } ||
  { cat "$T/link.log"; echo "FAIL: a symlinked db not refused (exit $rc)"; fail=1; }
rm -f "$DB"

# Progress on a terminal: raw data analysed (the golden input as rank 0),
# then the ranks read, each one line redrawn with \r; -q: none.
mkdir -p "$T/raw"
cp -r "$SRC/tests/golden/input/golden_ascend_pt" "$T/raw/w_0_1_ascend_pt"
mv "$T/raw/w_0_1_ascend_pt/profiler_info.json" "$T/raw/w_0_1_ascend_pt/profiler_info_0.json"
python3 - "$AIPROF" "$T/raw" <<'PY' || fail=1
import os, pty, sys
def run(*args):
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.argv[1], [sys.argv[1], "cluster", *args, sys.argv[2]])
    out = b""
    while True:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
    _, st = os.waitpid(pid, 0)
    return out.decode(), os.waitstatus_to_exitcode(st)
out, rc = run()
bad = []
if rc != 0: bad.append("exit %d" % rc)
if "\r[##############################] 100%  1/1 rank directories analysed\r\n" not in out:
    bad.append("no analysed bar")
if "\r[##############################] 100%  1/1 rank directories read\r\n" not in out:
    bad.append("no read bar")
if "analysing " in out: bad.append("plain lines on a terminal")
q, _ = run("-q")
if "rank directories" in q: bad.append("a bar with -q")
for b in bad:
    print("FAIL: progress:", b)
if bad:
    print(repr(out)); sys.exit(1)
PY
[ $fail = 0 ] && echo "PASS"
exit $fail
