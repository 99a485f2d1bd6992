"""check_cluster.py DIR RANKS — aiprof cluster's cluster_analysis_output/
against the ranks' own outputs: cluster_step_trace_time.csv has
msprof-analyze's header (Step, Type, Index + the per-rank columns without
Device_id), one "rank" row per rank and step with that rank's values, and
communication_group.json lists the world group with every rank.

    check_cluster.py DIR RANKS [STEPS PARAMS RING SLOW]

With the mpi_train options (examples/mpi, rank SLOW slowed), also
cluster_communication.json: every rank's every collective split (no note),
Wait + Transit + Idle = Elapse to the ns, Synchronization = Wait, the
ratios wait / (wait + transit), Wait = the last start (or the rank's end,
if earlier) - the rank's start (one host: one clock), the slow rank arriving last (wait 0, its peers > 0)
at a step's first allreduce, the one after its slowed compute, every op's bytes
what the program sent (check_mpi.expected), the start and elapse the
rank's own communication.json has; cluster_communication_matrix.json with
the ring's links (global ranks) carrying RING*8 bytes per step; and the
ClusterCommunication* tables of cluster_analysis.db holding the same
rows."""
import csv
import glob
import json
import os
import sys

# MPI_COMM_WORLD as the outputs name it: msprof-analyze's double_hash of the
# name (how CANN names groups and msprof-analyze maps them back)
WORLD = "3594055298557201744"

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


def check_comm(steps, params, ring, slow):
    import sqlite3
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from check_comm_outputs import want_ops
    with open(os.path.join(out, "cluster_communication.json")) as f:
        cc = json.load(f)
    with open(os.path.join(out, "cluster_communication_matrix.json")) as f:
        cm = json.load(f)
    own = {}
    for rank, d in ranks.items():
        with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication.json")) as f:
            for step, kinds in json.load(f).items():
                for kind, ops in kinds.items():
                    for op, info in ops.items():
                        own[(rank, op)] = info
    seen, waits, n_split = {}, {r: 0.0 for r in ranks}, 0
    for rank_set, steps_d in cc.items():
        for step, ops in steps_d.items():
            for op, by_rank in ops.items():
                for rank, info in by_rank.items():
                    rank = int(rank)
                    t = info["Communication Time Info"]
                    if op.startswith("Total Op Info@"):
                        continue
                    seen[(rank, op)] = info
                    mine = own.get((rank, op))
                    if not mine or mine["Communication Time Info"]["Elapse Time(ms)"] != \
                            t["Elapse Time(ms)"] or mine["Communication Time Info"][
                                "Start Timestamp(us)"] != t["Start Timestamp(us)"]:
                        fail.append("rank %d %s: not the rank's own start/elapse" % (rank, op))
                    if op.startswith(("hcom_send", "hcom_receive")):
                        if "Split" not in t:
                            fail.append("rank %d %s: p2p without its note" % (rank, op))
                        continue
                    if "Split" in t:
                        fail.append("rank %d %s: %s" % (rank, op, t["Split"]))
                        continue
                    n_split += 1
                    w, tr, idle = t["Wait Time(ms)"], t["Transit Time(ms)"], t["Idle Time(ms)"]
                    if min(w, tr, idle) < 0 or round((w + tr + idle) * 1e6) != \
                            round(t["Elapse Time(ms)"] * 1e6):
                        fail.append("rank %d %s: wait %s + transit %s + idle %s != elapse %s"
                                    % (rank, op, w, tr, idle, t["Elapse Time(ms)"]))
                    if t["Synchronization Time(ms)"] != w or abs(
                            t["Wait Time Ratio"] - (round(w / (w + tr), 4) if w + tr else 0)) > 1e-9:
                        fail.append("rank %d %s: sync / ratio %s" % (rank, op, t))
                    waits[rank] += w
    for rank in ranks:
        for op, nbytes in want_ops(rank, n_ranks, steps, params, ring).items():
            info = seen.get((rank, op))
            if not info:
                fail.append("rank %d: %s missing from cluster_communication.json" % (rank, op))
                continue
            got = sum(b["Transit Size(MB)"] for b in
                      info["Communication Bandwidth Info"].values()) * 1048576
            if abs(got - nbytes) > 1:
                fail.append("rank %d %s: %.1f bytes, the program sent %d" % (rank, op, got, nbytes))
    # Each step's first allreduce (an Iallreduce, sequence 1 + 3 * step)
    # starts right after the compute the slow rank stretches by 20 ms: it
    # arrives last there and waits for nobody (wait 0), its peers wait for it.
    # Required at one step of the three: on a loaded host the scheduler can
    # hold a rank back longer than that (waits summed over the run are its
    # lottery); the split itself is checked against the starts below.
    last = 0
    for step in range(steps):
        at = {r: seen.get((r, "hcom_allReduce__%d_0_1@%s" % (1 + 3 * step, WORLD)))
              for r in ranks}
        w = {r: i["Communication Time Info"].get("Wait Time(ms)") for r, i in at.items() if i}
        if len(w) == n_ranks and w[slow] == 0 and all(v > 0 for r, v in w.items() if r != slow):
            last += 1
        else:
            print("step %d first allreduce: waits %s, starts %s" % (step, w, {
                r: i["Communication Time Info"]["Start Timestamp(us)"] for r, i in at.items() if i}))
    if not last:
        fail.append("slow rank %d arrived last at none of the %d steps' first allreduce"
                    % (slow, steps))
    # one host, one clock: wait = the last start - own start, to the ns
    by_op = {}
    for (rank, op), info in seen.items():
        by_op.setdefault(op, {})[rank] = info["Communication Time Info"]
    for op, ts in by_op.items():
        if op.startswith(("hcom_send", "hcom_receive")):
            continue
        ns = {r: round(t["Start Timestamp(us)"] * 4) * 250 for r, t in ts.items()}
        a = max(ns.values())
        for r, t in ts.items():  # (a rooted op may let a rank go before: its end)
            want = min(a, ns[r] + round(t["Elapse Time(ms)"] * 1e6)) - ns[r]
            if "Wait Time(ms)" in t and abs(t["Wait Time(ms)"] * 1e6 - want) > 1:
                fail.append("rank %d %s: wait %s, the last start (or its end) - its start %d ns"
                            % (r, op, t["Wait Time(ms)"], want))
    ring_bytes = {}
    for rank_set, steps_d in cm.items():
        for step, ops in steps_d.items():
            for op, links in ops.items():
                for kind in ("send", "receive"):
                    if op == kind + "-total@" + WORLD:
                        for link, v in links.items():
                            ring_bytes[(kind, link)] = ring_bytes.get((kind, link), 0) + \
                                v["Transit Size(MB)"] * 1048576
    for r in ranks:
        for kind in ("send", "receive"):
            got = ring_bytes.get((kind, "%d-%d" % (r, (r + 1) % n_ranks)), 0)
            if abs(got - steps * ring * 8) > steps:
                fail.append("%s link %d-%d: %.1f bytes, the ring sent %d"
                            % (kind, r, (r + 1) % n_ranks, got, steps * ring * 8))
    db = sqlite3.connect(os.path.join(out, "cluster_analysis.db"))
    rows = db.execute("SELECT rank_id, hccl_op_name || '@' || group_name, elapsed_time, wait_time, "
                      "transit_time, idle_time FROM ClusterCommunicationTime "
                      "WHERE hccl_op_name != 'Total Op Info'").fetchall()
    if len(rows) != len(seen):
        fail.append("ClusterCommunicationTime: %d op rows, the JSON %d" % (len(rows), len(seen)))
    for rank, op, el, w, tr, idle in rows:
        t = seen.get((rank, op), {}).get("Communication Time Info", {})
        if el != t.get("Elapse Time(ms)") or (w is None) != ("Split" in t) or (
                w is not None and (w, tr, idle) != (t["Wait Time(ms)"], t["Transit Time(ms)"],
                                                    t["Idle Time(ms)"])):
            fail.append("ClusterCommunicationTime row %s %s differs from the JSON" % (rank, op))
    for table in ("ClusterCommunicationBandwidth", "ClusterCommunicationMatrix"):
        if not db.execute("SELECT count(*) FROM " + table).fetchone()[0]:
            fail.append(table + " is empty")
    print("checked %d split collectives; summed wait per rank %s" % (
        n_split, {r: round(w, 3) for r, w in sorted(waits.items())}))
    if n_split < n_ranks * 10:
        fail.append("only %d split collectives" % n_split)


if len(sys.argv) > 3:
    check_comm(*(int(x) for x in sys.argv[3:7]))
for m in fail:
    print("FAIL:", m)
print("checked %d rank-step rows of %d ranks" % (expected, n_ranks))
sys.exit(1 if fail else 0)
