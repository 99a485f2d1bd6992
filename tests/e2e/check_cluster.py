"""check_cluster.py DIR RANKS — aiprof cluster's cluster_analysis_output/
against the ranks' own outputs: cluster_step_trace_time.csv has
msprof-analyze's header (Step, Type, Index + the per-rank columns without
Device_id), one "rank" row per rank and step with that rank's values, and
communication_group.json lists the world group with every rank."""
import csv
import glob
import json
import os
import sys

top, n_ranks = sys.argv[1], int(sys.argv[2])
out = os.path.join(top, "cluster_analysis_output")
fail = []

ranks = {}
for d in glob.glob(os.path.join(top, "**", "*_ascend_pt"), recursive=True):
    info = glob.glob(os.path.join(d, "profiler_info_*.json"))
    assert len(info) == 1, d
    ranks[int(os.path.basename(info[0])[14:-5])] = d
assert sorted(ranks) == list(range(n_ranks)), sorted(ranks)

with open(os.path.join(out, "cluster_step_trace_time.csv"), newline="") as f:
    rows = list(csv.reader(f))
head = rows[0]
want = ["Step", "Type", "Index", "Computing", "Communication(Not Overlapped)", "Overlapped",
        "Communication", "Free", "Stage", "Bubble",
        "Communication(Not Overlapped and Exclude Receive)", "Preparing"]
if head != want:
    fail.append("header %s, want %s" % (head, want))
got = {}
for r in rows[1:]:
    if r[1] != "rank":
        fail.append("row type %r" % r[1])
        continue
    key = (int(r[2]), r[0])
    if key in got:
        fail.append("rank %d step %s twice" % key)
    got[key] = r
expected = 0
for rank, d in ranks.items():
    with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), newline="") as f:
        for row in csv.DictReader(f):
            expected += 1
            r = got.get((rank, row["Step"]))
            if not r:
                fail.append("no row for rank %d step %s" % (rank, row["Step"]))
                continue
            for i, col in enumerate(head[3:], 3):
                if abs(float(r[i]) - float(row[col])) > 1e-9:
                    fail.append("rank %d step %s %s: %s, the rank's csv %s"
                                % (rank, row["Step"], col, r[i], row[col]))
if len(got) != expected:
    fail.append("%d rows, want one per rank and step: %d" % (len(got), expected))
if expected < 2 * n_ranks:
    fail.append("only %d rank steps" % expected)

with open(os.path.join(out, "communication_group.json")) as f:
    groups = json.load(f)
if list(range(n_ranks)) not in groups.get("collective", []):
    fail.append("collective groups %s lack the world group" % groups.get("collective"))
for g in groups.get("comm_group_parallel_info", []):
    if g["rank_set"] != sorted(g["rank_set"]):
        fail.append("rank_set %s not sorted" % g["rank_set"])

for m in fail:
    print("FAIL:", m)
print("checked %d rank-step rows of %d ranks" % (expected, n_ranks))
sys.exit(1 if fail else 0)
