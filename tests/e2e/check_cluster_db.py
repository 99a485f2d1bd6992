"""check_cluster_db.py DIR [--no-db] — `aiprof cluster --html` on the
synthetic pipeline/data-parallel job of make_cluster_parallel.py, checked
against what that job is: cluster_analysis.db's tables with
msprof-analyze's DDL text and the expected rows (DP/PP/TP Index by
Megatron's layout, stage rows with the max of their ranks,
CommunicationGroupMapping with the group ids and pg names matched through
double_hash, HostInfo / RankDeviceMap from the ranks' dbs, ClusterBaseInfo
without "rank"), cluster_step_trace_time.csv's index and stage columns,
and cluster_report.html's stacked-bar chart (one stack per rank, the
three parts summing to the rank's step time) and heat map (the links
between the right global ranks, the slow one marked)."""
import csv
import json
import os
import re
import sqlite3
import sys

top = sys.argv[1]
with_db = "--no-db" not in sys.argv[2:]
out = os.path.join(top, "cluster_analysis_output")
fail = []


def want(cond, msg):
    if not cond:
        fail.append(msg)


db = sqlite3.connect(os.path.join(out, "cluster_analysis.db"))
ddl = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type='table'"))
want(ddl.get("ClusterStepTraceTime") ==
     "CREATE TABLE ClusterStepTraceTime(step TEXT,type TEXT,\"index\" TEXT,computing NUMERIC,"
     "communication_not_overlapped NUMERIC,overlapped NUMERIC,communication NUMERIC,"
     "free NUMERIC,stage NUMERIC,bubble NUMERIC,"
     "communication_not_overlapped_and_exclude_receive NUMERIC,preparing NUMERIC,"
     "dp_index INTEGER,pp_index INTEGER,tp_index INTEGER)", "ClusterStepTraceTime DDL %r"
     % ddl.get("ClusterStepTraceTime"))
want(ddl.get("CommunicationGroupMapping") ==
     'CREATE TABLE "CommunicationGroupMapping" (\n"type" TEXT,\n  "rank_set" TEXT,\n'
     '  "group_name" TEXT,\n  "group_id" TEXT,\n  "pg_name" TEXT\n)', "mapping DDL")
want(ddl.get("HostInfo") == "CREATE TABLE HostInfo(hostUid TEXT,hostName TEXT)", "HostInfo DDL")
want(ddl.get("RankDeviceMap") == "CREATE TABLE RankDeviceMap(rankId INTEGER,deviceId INTEGER,"
     "hostUid TEXT,profilePath TEXT)", "RankDeviceMap DDL")
want(ddl.get("ClusterBaseInfo") == "CREATE TABLE ClusterBaseInfo(key TEXT,value TEXT)",
     "ClusterBaseInfo DDL")
want("CommunicationGroup" not in ddl, "CommunicationGroup written (msprof-analyze never does)")

PTD = {0: (0, 0, 0), 1: (1, 0, 0), 2: (0, 1, 0), 3: (1, 1, 0)}
rows = db.execute("SELECT * FROM ClusterStepTraceTime").fetchall()
rank_rows = [r for r in rows if r[1] == "rank"]
stage_rows = [r for r in rows if r[1] == "stage"]
want(len(rank_rows) == 8 and len(stage_rows) == 4, "rows %d rank, %d stage"
     % (len(rank_rows), len(stage_rows)))
for r in rank_rows:
    rank = int(r[2])
    want(tuple(r[12:]) == PTD[rank], "rank %d DP/PP/TP %s" % (rank, r[12:]))
    want(r[3] == 1000.0 * (rank + 1) and r[7] == 500.0 + 100 * int(r[0]),
         "rank %d step %s computing/free %s %s" % (rank, r[0], r[3], r[7]))
for r in stage_rows:
    members = [int(x) for x in r[2].strip("()").split(",")]
    want(members in ([0, 1], [2, 3]), "stage index %r" % r[2])
    best = max(1000.0 * (m + 1) for m in members)
    want(r[3] == best and r[12:] == ("NA",) * 3, "stage %s step %s: %s" % (r[2], r[0], r))
groups = db.execute("SELECT * FROM CommunicationGroupMapping").fetchall()
got = {(g[0], g[1], g[3], g[4]) for g in groups}
exp = {("collective", "(0,1,2,3)", "hccl_world_group", "default_group"),
       ("collective", "(0,1)", "10.0.0.1%enp_dp0", "dp"),
       ("collective", "(2,3)", "10.0.0.2%enp_dp1", "dp"),
       ("p2p", "(0,2)", "10.0.0.1%enp_pp0", "pp"), ("p2p", "(1,3)", "10.0.0.1%enp_pp1", "pp")}
want(got == exp, "CommunicationGroupMapping %s" % sorted(got))
want([(g[0], g[2]) for g in groups] == sorted((g[0], g[2]) for g in groups),
     "mapping rows not sorted by type, group_name")
hosts = db.execute("SELECT * FROM HostInfo").fetchall()
devs = db.execute("SELECT * FROM RankDeviceMap").fetchall()
if with_db:
    want(hosts == [("uid-hostA", "hostA"), ("uid-hostB", "hostB")], "HostInfo %s" % hosts)
    want([d[:3] for d in devs] == [(r, r, "uid-host" + "AABB"[r]) for r in range(4)],
         "RankDeviceMap %s" % devs)
    want(all(os.path.isabs(d[3]) and d[3].endswith("_ascend_pt") for d in devs), "profilePath")
else:
    want(hosts == [(None, "hostA"), (None, "hostB")], "HostInfo without dbs %s" % hosts)
    want(devs == [], "RankDeviceMap without dbs %s" % devs)
base = db.execute("SELECT * FROM ClusterBaseInfo").fetchall()
want(base == [("distributed_args", '{"tensor_model_parallel_size": 1, '
               '"pipeline_model_parallel_size": 2, "data_parallel_size": 2, "world_size": 4, '
               '"sequence_parallel": false}')], "ClusterBaseInfo %s" % base)

with open(os.path.join(out, "cluster_step_trace_time.csv"), newline="") as f:
    table = list(csv.reader(f))
want(table[0][-3:] == ["DP Index", "PP Index", "TP Index"], "csv header %s" % table[0])
want(sorted(r[2] for r in table[1:] if r[1] == "stage") == ["(0, 1)", "(0, 1)", "(2, 3)",
                                                             "(2, 3)"], "csv stage rows")
for r in table[1:]:
    if r[1] == "rank":
        want(tuple(int(x) for x in r[-3:]) == PTD[int(r[2])], "csv indices %s" % r)

html = open(os.path.join(out, "cluster_report.html")).read()
want("<script" not in html and not re.search(r'(src|href)="http', html), "html not self-contained")
chart = html[html.find('id="step-breakdown"'):]
chart = chart[:chart.find("</svg>")]
stacks = re.findall(r'<g class="stack[^"]*">(.*?)</g>', chart)
want(len(stacks) == 4, "%d stacks in the step breakdown, want 4" % len(stacks))
for rank, s in enumerate(stacks):
    vals = [float(v) for v in re.findall(r"<title>%d [^:]*: ([0-9.]+)</title>" % rank, s)]
    # Computing + Communication(Not Overlapped) + Free, ms, over both steps
    exp_ms = (2 * 1000.0 * (rank + 1) + 2 * 2000.0 + 500.0 + 600.0) / 1e3
    want(len(vals) == 3 and abs(sum(vals) - exp_ms) < 1e-6, "rank %d stack %s, want %.3f"
         % (rank, vals, exp_ms))
heat = html[html.find('id="link-heatmap"'):]
heat = heat[:heat.find("</svg>")]
cells = {(int(a), int(b)): "slow" in cls for cls, a, b in
         re.findall(r'<rect class="link( slow)?" data-src="(\d+)" data-dst="(\d+)"', heat)}
want(set(cells) == {(0, 0), (1, 1), (2, 2), (3, 3), (0, 2), (1, 3)}, "heat map cells %s"
     % sorted(cells))
want(cells.get((1, 3)) and not cells.get((0, 2)), "slow link not marked 1->3 only: %s" % cells)
want(re.search(r"1-&gt;3 RDMA: 8\.000000 MB in 16\.000000 ms, 0\.5000 GB/s", heat),
     "1->3 cell numbers")

for m in fail:
    print("FAIL:", m)
sys.exit(1 if fail else 0)
