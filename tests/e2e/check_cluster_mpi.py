"""check_cluster_mpi.py DIR STEPS RING SLOW — `aiprof cluster --html` on
the 4-rank mpi_train run (tests/e2e/test_cluster.sh): the link matrix
between global ranks carries what the program sent round its ring (RING
doubles, 8 bytes each, from rank r to r+1 once per step: the test
computes the bytes, the report's MB are 2^20 bytes with 6 decimals per
record summed), each link counted once; cluster_analysis.db has one
ClusterStepTraceTime row per rank and step, the world group in
CommunicationGroupMapping, a HostInfo row and a RankDeviceMap row per
rank; cluster_report.html has a stacked bar per rank (the slow one SLOW
marked) and heat-map cells for the ring links and the ranks' own links."""
import os
import re
import sqlite3
import sys

top, steps, ring, slow = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
out = os.path.join(top, "cluster_analysis_output")
fail = []
html = open(os.path.join(out, "cluster_report.html")).read()
table = html[html.find('id="link-table"'):]
links = {}
for src, dst, tr, mb, ms, bw, n in re.findall(
        r"<tr[^>]*><td>(\d+)</td><td>(\d+)</td><td>([A-Z]+)(?: \(slow\))?</td><td>([0-9.]+)</td>"
        r"<td>([0-9.]+)</td><td>([0-9.]+)</td><td>(\d+)</td></tr>", table):
    links[(int(src), int(dst))] = (tr, float(mb), int(n))
want_bytes = steps * ring * 8
for r in range(4):
    got = links.get((r, (r + 1) % 4))
    if not got:
        fail.append("no link %d->%d in %s" % (r, (r + 1) % 4, sorted(links)))
        continue
    tr, mb, n = got
    # each record's MB is rounded to 6 decimals: at most 0.5e-6 MB off per record
    if tr != "SDMA" or abs(mb * 1048576 - want_bytes) > n * 0.5e-6 * 1048576 + 1e-6:
        fail.append("link %d->%d: %s %.6f MB = %.1f bytes in %d records, the program sent %d"
                    % (r, (r + 1) % 4, tr, mb, mb * 1048576, n, want_bytes))
    if (r, r) not in links or links[(r, r)][0] != "LOCAL":
        fail.append("rank %d has no LOCAL link" % r)
peers = {k for k in links if k[0] != k[1]}
if peers != {(r, (r + 1) % 4) for r in range(4)}:
    fail.append("links between ranks %s, the ring's only expected" % sorted(peers))
stacks = re.findall(r'<g class="stack( marked)?">', html)
if len(stacks) != 4 or [bool(m) for m in stacks] != [r == slow for r in range(4)]:
    fail.append("stacked bars %s, want 4 with rank %d marked" % (stacks, slow))
cells = set(re.findall(r'data-src="(\d+)" data-dst="(\d+)"', html))
if cells != {(str(a), str(b)) for a, b in links}:
    fail.append("heat-map cells %s differ from the links %s" % (sorted(cells), sorted(links)))

db = sqlite3.connect(os.path.join(out, "cluster_analysis.db"))
n_rows = db.execute("SELECT count(*) FROM ClusterStepTraceTime WHERE type='rank'").fetchone()[0]
idx = sorted(int(x) for (x,) in db.execute("SELECT DISTINCT \"index\" FROM ClusterStepTraceTime"))
if idx != [0, 1, 2, 3] or n_rows < 4 * steps:
    fail.append("ClusterStepTraceTime: ranks %s, %d rows" % (idx, n_rows))
# MPI_COMM_WORLD by its label, msprof-analyze's double_hash of its name
world = db.execute("SELECT rank_set FROM CommunicationGroupMapping WHERE type='collective' AND "
                   "group_name='3594055298557201744'").fetchall()
if world != [("(0,1,2,3)",)]:
    fail.append("CommunicationGroupMapping world %s" % world)
hosts = db.execute("SELECT count(*) FROM HostInfo").fetchone()[0]
devs = db.execute("SELECT rankId, deviceId FROM RankDeviceMap").fetchall()
if hosts != 1 or sorted(devs) != [(r, -1) for r in range(4)]:
    fail.append("HostInfo %d rows, RankDeviceMap %s" % (hosts, devs))
for m in fail:
    print("FAIL:", m)
sys.exit(1 if fail else 0)
