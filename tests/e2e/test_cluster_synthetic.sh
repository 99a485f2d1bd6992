#!/usr/bin/env bash
# test_cluster_synthetic.sh — aiprof cluster on synthetic rank directories
# (tests/e2e/make_cluster_dirs.py; no MPI needed): rank 1 with 2 ms more
# Free per ~21.5 ms step (9.2 % of the step over three steps) and last at
# every collective is named slow with its numbers; the same +2 ms without
# the collective witness, and +0.5 ms (2.3 %, under the 5 % limit) with
# it, are not; cluster_step_trace_time.csv has msprof-analyze's header and
# Python's float text (0.000 → 0.0, 1010.000 → 1010.0), the groups are the
# world collective and the two p2p pairs; a directory with neither
# step_trace_time.csv nor FRAMEWORK/ is named, and one whose raw data
# cannot be analysed (-j 2: in a child) with the analysis's error.  The
# wait / transit / idle split of every collective is the one the
# generator's times give, to the ns, on one host and on two hosts whose
# clocks differ by 2750.5 us (recovered by the median of the collectives'
# end times despite an outlier).  Ranks without communication data are
# named with the reason (Level0, or none recorded).
set -u
BUILD=$1
SRC=$2
AIPROF="$BUILD/bin/aiprof"
T=$(mktemp -d /tmp/aiprof_cluster_syn_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
run() { # NAME SLOW EXTRA_US → $T/NAME.log, exit status in $rc
  mkdir -p "$T/$1"
  python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/$1" "$2" "$3"
  "$AIPROF" cluster "$T/$1" >"$T/$1.log" 2>&1
  rc=$?
}
run slow 1 2000
[ $rc = 0 ] || { cat "$T/slow.log"; echo "FAIL: exit $rc"; fail=1; }
grep -q "^slow rank: 1 — Computing + Free 10.530 ms (Computing 1.500, Free 9.030), 5.955 ms above the ranks' median 4.575 ms: 9.2% of the median step time 64.546 ms (limit 5%); its peers wait for it; it arrived last at 12 of 12 collectives" "$T/slow.log" ||
  { cat "$T/slow.log"; echo "FAIL: rank 1 not named slow with its numbers"; fail=1; }
# msprof-analyze advisor's rule on the same rows: Free 3010 − 1000 us = 2.010 ms over a
# mean row time of 21.515 ms (9.3 %); Computing equal everywhere
grep -q "^advisor rule: Free max difference 2.010 ms over the step rows, 9.3% of their mean time 21.515 ms (limit 5%): has issues in the cluster" "$T/slow.log" &&
  grep -q "^advisor rule: Computing max difference 0.000 ms.*(limit 5%)$" "$T/slow.log" ||
  { cat "$T/slow.log"; echo "FAIL: advisor rule"; fail=1; }
[ "$(grep -c '^slow rank' "$T/slow.log")" = 1 ] || { echo "FAIL: more than one slow rank"; fail=1; }
OUT="$T/slow/cluster_analysis_output"
[ "$(head -1 "$OUT/cluster_step_trace_time.csv")" = "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing" ] ||
  { head -1 "$OUT/cluster_step_trace_time.csv"; echo "FAIL: header"; fail=1; }
[ "$(wc -l < "$OUT/cluster_step_trace_time.csv")" = 13 ] || { echo "FAIL: not 12 rows"; fail=1; }
grep -qx "2,rank,1,500.0,18000.25,0.0,18000.25,3010.0,21510.25,0.0,18000.25,0.0" "$OUT/cluster_step_trace_time.csv" ||
  { cat "$OUT/cluster_step_trace_time.csv"; echo "FAIL: rank 1 step 2 row"; fail=1; }
python3 - "$OUT/communication_group.json" <<'PY' || fail=1
import json, sys
g = json.load(open(sys.argv[1]))
want = {"collective": [[0, 1, 2, 3]], "p2p": [[0, 1], [2, 3]]}
got = {k: g[k] for k in want}
if got != want:
    print("FAIL: groups", got); sys.exit(1)
names = [(x["type"], x["group_name"]) for x in g["comm_group_parallel_info"]]
if names != [("collective", "world"), ("p2p", "pair0"), ("p2p", "pair1")]:
    print("FAIL: comm_group_parallel_info", names); sys.exit(1)
PY

# Wait vs transit: every collective ends together; rank r started it
# (5 + r) ms before, the slow rank 1 ms before: wait (4 + r) ms, the slow
# rank 0, transit 1 ms, idle 0, to the ns (make_cluster_dirs.py).
check_split() { # OUT_DIR [late rank 3 at the first collective]
  python3 - "$1" "${2:-0}" <<'PY'
import json, sqlite3, sys
out, late = sys.argv[1], sys.argv[2] == "1"
cc = json.load(open(out + "/cluster_communication.json"))
ops = cc["(0, 1, 2, 3)"]
bad = []
n = 0
for step, d in ops.items():
    for op, ranks in d.items():
        if op.startswith("Total"):
            continue
        for r, info in ranks.items():
            r = int(r)
            t = info["Communication Time Info"]
            w = 0.0 if r == 1 else 4.0 + r
            idle = 0.5 if late and r == 3 and op == "hcom_allReduce__0_0_1@world" else 0.0
            want = {"Wait Time(ms)": w, "Synchronization Time(ms)": w, "Transit Time(ms)": 1.0,
                    "Idle Time(ms)": idle, "Wait Time Ratio": round(w / (w + 1), 4)}
            got = {k: t.get(k) for k in want}
            if got != want or "Split" in t:
                bad.append((step, op, r, got, want))
            n += 1
tot = ops["step0"]["Total Op Info@world"]["2"]["Communication Time Info"]
if tot["Wait Time(ms)"] != 24.0 or tot["Transit Time(ms)"] != 4.0 or tot["Wait Time Ratio"] != 0.8571:
    bad.append(("total", tot))
db = sqlite3.connect(out + "/cluster_analysis.db")
rows = db.execute("SELECT wait_time, transit_time, idle_time FROM ClusterCommunicationTime "
                  "WHERE rank_id = 0 AND hccl_op_name = 'hcom_allReduce__5_0_1'").fetchall()
if rows != [(4.0, 1.0, 0.0)]:
    bad.append(("db", rows))
if n != 48 or bad:
    print("FAIL: split", n, bad[:4]); sys.exit(1)
PY
}
check_split "$OUT" || fail=1
grep -q "^clocks: every rank on rank 0's host (h0/): one clock, offset 0" "$T/slow.log" ||
  { cat "$T/slow.log"; echo "FAIL: one host, one clock"; fail=1; }
# Ranks 2 and 3 on host h1 whose clock reads 2750.5 us more; rank 3 leaves
# the first collective 0.5 ms late (an outlier): the median recovers the
# offset exactly and the split is the one-host split.
mkdir -p "$T/hosts/cluster_analysis_output"
python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/hosts" 1 2000 2750.5
# cluster_analysis.db already there with another writer's table and a stale
# one of ours: the other stays, ours is replaced with msprof-analyze's columns
python3 -c 'import sqlite3, sys; d = sqlite3.connect(sys.argv[1]); d.execute("CREATE TABLE NotAiprofs(hostUid TEXT, hostName TEXT)"); d.execute("INSERT INTO NotAiprofs VALUES (1, 2)"); d.execute("CREATE TABLE ClusterCommunicationTime(old INTEGER)"); d.commit()' "$T/hosts/cluster_analysis_output/cluster_analysis.db"
"$AIPROF" cluster "$T/hosts" >"$T/hosts.log" 2>&1 || { cat "$T/hosts.log"; echo "FAIL: two hosts"; fail=1; }
for r in 2 3; do
  grep -q "^clock: rank $r (host h1/) runs +2750.500 us from rank 0's clock (median over 24 collective ends" "$T/hosts.log" ||
    { cat "$T/hosts.log"; echo "FAIL: rank $r's clock offset"; fail=1; }
done
check_split "$T/hosts/cluster_analysis_output" 1 || fail=1
python3 - "$T/hosts/cluster_analysis_output/cluster_analysis.db" <<'PY' || fail=1
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in d.execute("PRAGMA table_info(ClusterCommunicationTime)")]
want = ["step", "rank_id", "hccl_op_name", "group_name", "start_timestamp", "elapsed_time",
        "transit_time", "wait_time", "synchronization_time", "idle_time",
        "synchronization_time_ratio", "wait_time_ratio"]
if cols != want or d.execute("SELECT count(*) FROM NotAiprofs").fetchone()[0] != 1:
    print("FAIL: cluster_analysis.db", cols); sys.exit(1)
PY
grep -q "^slow rank: 1 " "$T/hosts.log" || { cat "$T/hosts.log"; echo "FAIL: two hosts: rank 1 not slow"; fail=1; }

# A start that is no clock reading (1e19 us) on rank 0: that collective is
# not split on any rank, each says why, the others still are.
mkdir -p "$T/odd"
python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/odd" 1 2000
python3 - "$T/odd" <<'PY'
import glob, json, sys
p = glob.glob(sys.argv[1] + "/*/w0_*/ASCEND_PROFILER_OUTPUT/communication.json")[0]
c = json.load(open(p))
c["step1"]["collective"]["hcom_allReduce__5_0_1@world"]["Communication Time Info"]["Start Timestamp(us)"] = 1e19
json.dump(c, open(p, "w"))
PY
"$AIPROF" cluster "$T/odd" >"$T/odd.log" 2>&1 || { cat "$T/odd.log"; echo "FAIL: odd start: exit"; fail=1; }
python3 - "$T/odd/cluster_analysis_output/cluster_communication.json" <<'PY' || fail=1
import json, sys
ops = json.load(open(sys.argv[1]))["(0, 1, 2, 3)"]
notes = {int(r): v["Communication Time Info"].get("Split")
         for r, v in ops["step1"]["hcom_allReduce__5_0_1@world"].items()}
want = {0: "not split: its start or elapse time is not a usable number"}
want.update({r: "not split: on 3 of the 4 ranks of group world" for r in (1, 2, 3)})
split = sum("Split" not in v["Communication Time Info"] for d in ops.values()
            for op, ranks in d.items() if not op.startswith("Total") for v in ranks.values())
if notes != want or split != 44:
    print("FAIL: odd start", notes, split); sys.exit(1)
PY
grep -q "^   0                 11          1 " "$T/odd.log" || { cat "$T/odd.log"; echo "FAIL: odd start: counts"; fail=1; }

run small 1 500
grep -q "^no slow rank" "$T/small.log" || { cat "$T/small.log"; echo "FAIL: +0.5 ms named"; fail=1; }
# The same +2 ms of Free without the collective witness: rank 3 arrives last.
mkdir -p "$T/nowit"
python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/nowit" 3 0
python3 - "$T/nowit" <<'PY'
import glob, sys
p = glob.glob(sys.argv[1] + "/*/w1_*/ASCEND_PROFILER_OUTPUT/step_trace_time.csv")[0]
lines = open(p).read().splitlines(True)
out = [lines[0]]
for l in lines[1:]:
    c = l.rstrip("\n").split(",")
    c[6] = "%.3f" % (float(c[6]) + 2000)
    out.append(",".join(c) + "\n")
open(p, "w").write("".join(out))
PY
"$AIPROF" cluster "$T/nowit" >"$T/nowit.log" 2>&1
grep -q "^slow rank: 1" "$T/nowit.log" && { cat "$T/nowit.log"; echo "FAIL: rank 1 named without the witness"; fail=1; }

# Ranks without communication data are named, with why: ranks 2-3
# profiled at Level0 (no communication.json: the seed writes it at Level1+),
# rank 1 at Level1 without any while the others have some; the pass runs
# on with rank 0's communication.
mkdir -p "$T/lv0"
python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/lv0" -1 0
python3 - "$T/lv0" <<'PY'
import glob, json, os, sys
for rank, level in ((1, "Level1"), (2, "Level0"), (3, "Level0")):
    (d,) = glob.glob(sys.argv[1] + "/*/w%d_*" % rank)
    p = os.path.join(d, "profiler_info_%d.json" % rank)
    info = json.load(open(p))
    info["config"] = {"experimental_config": {"_profiler_level": level}}
    json.dump(info, open(p, "w"))
    for f in glob.glob(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication*.json")):
        os.remove(f)
PY
"$AIPROF" cluster "$T/lv0" >"$T/lv0.log" 2>&1 || { cat "$T/lv0.log"; echo "FAIL: cluster with Level0 ranks"; fail=1; }
grep -qx "no communication data from ranks 2-3: profiled at profiler_level Level0 (or Level_none), and communication.json and communication_matrix.json are written at Level1 and Level2 only (the seed); profile again with aiprof run --profiler-level Level1 or experimental_config profiler_level=Level1" "$T/lv0.log" &&
  grep -qx "no communication data from rank 1: no communication.json (no communication was recorded)" "$T/lv0.log" ||
  { cat "$T/lv0.log"; echo "FAIL: the ranks without communication data are not named with why"; fail=1; }

mkdir -p "$T/slow/n9/w9_1_ascend_pt" && echo '{}' > "$T/slow/n9/w9_1_ascend_pt/profiler_info_9.json"
mkdir -p "$T/slow/n6/w6_1_ascend_pt/FRAMEWORK" && echo '{}' > "$T/slow/n6/w6_1_ascend_pt/profiler_info_6.json"
printf 'not raw data, not at all' > "$T/slow/n6/w6_1_ascend_pt/FRAMEWORK/aiprof.raw"
"$AIPROF" cluster -j 2 "$T/slow" >"$T/bad.log" 2>&1; rc=$?
# the analysis runs in a child; its error comes back with the directory's name
grep -q "^not used: .*w6_1_ascend_pt (rank 6): analysis failed: .*not aiprof raw data" "$T/bad.log" ||
  { cat "$T/bad.log"; echo "FAIL: failed analysis not named"; fail=1; }
{ [ $rc = 1 ] && grep -q "^not used: .*w9_1_ascend_pt (rank 9): neither ASCEND_PROFILER_OUTPUT/step_trace_time.csv nor FRAMEWORK/" "$T/bad.log" &&
  grep -q "^slow rank: 1 " "$T/bad.log"; } || { cat "$T/bad.log"; echo "FAIL: empty rank dir (exit $rc)"; fail=1; }
[ $fail = 0 ] && echo "PASS"
exit $fail
