#!/usr/bin/env python3
"""check_comm_outputs.py — the per-rank communication outputs of
examples/mpi/mpi_train against what the program sent (its calls as
check_mpi.py computes them from its options).

    check_comm_outputs.py RUN_DIR NRANKS STEPS PARAMS RING

Every rank directory (analysed) must have, for every MPI call the program
made, one op in communication.json under its CANN-style name
(hcom_<type>__<seq>_0_1@<group> for a collective, hcom_<send|receive>__<k>_<peer>_1
for point-to-point) with the bytes the call moved (exact in analysis.db's
CommAnalyzerBandwidth, to the byte in the JSON's 6-decimal MB), the same
ops in CommAnalyzerTime and COMMUNICATION_OP; communication_matrix.json
with this rank's self link in every entry and the ring's links carrying
RING*8 bytes per step; step_trace_time.csv with Computing +
Communication(Not Overlapped) + Free = Stage + Bubble (the step) and
Communication = Overlapped + Communication(Not Overlapped) in every row,
Communication > 0 where the step has ops, and Bubble = the step's receive
time.
"""
import glob
import json
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_mpi import expected  # noqa: E402

TYPES = {"MPI_Bcast": "broadcast", "MPI_Iallreduce": "allReduce", "MPI_Allreduce": "allReduce",
         "MPI_Irecv": "receive", "MPI_Send": "send", "MPI_Allgather": "allGather",
         "MPI_Reduce": "reduce", "MPI_Barrier": "barrier"}


def fail(msg):
    print(f"check_comm_outputs: FAIL: {msg}")
    sys.exit(1)


def us_ns(text):
    a, b = text.split(".")
    assert len(b) == 3, text
    return int(a) * 1000 + int(b)


def label(group):
    """A group's name in the outputs: msprof-analyze's double_hash of its
    recorded name (CANN names groups so; msprof-analyze maps them back to
    parallel_group_info through it)."""
    a = b = 0
    for c in group:
        a = (a * 29 + ord(c)) & 0xFFFFFFFF
        b = (b * 131 + ord(c)) & 0xFFFFFFFF
    return str(a << 32 | b)


def want_ops(rank, n, steps, params, ring):
    """{key: bytes} of every call rank made."""
    seq, k, out = {}, {}, {}
    for name, group, nbytes, _c, _t, _root, peer, _tag, _nb in expected(rank, n, steps, params,
                                                                         ring):
        t = TYPES[name]
        if peer < 0:
            s = seq.get(group, 0)
            seq[group] = s + 1
            key = f"hcom_{t}__{s}_0_1@{label(group)}"
        else:
            i = k.get((t, peer), 0)
            k[(t, peer)] = i + 1
            key = f"hcom_{t}__{i}_{peer}_1@{label(group)}"
        out[key] = nbytes
    return out


def main():
    run_dir = sys.argv[1]
    n, steps, params, ring = (int(x) for x in sys.argv[2:6])
    dirs = sorted(glob.glob(os.path.join(run_dir, "**", "*_ascend_pt"), recursive=True))
    if len(dirs) != n:
        fail(f"{len(dirs)} result directories, expected {n}")
    checked = 0
    for d in dirs:
        info = [f for f in os.listdir(d) if re.fullmatch(r"profiler_info_\d+\.json", f)]
        rank = int(info[0][14:-5])
        out = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
        want = want_ops(rank, n, steps, params, ring)
        with open(os.path.join(out, "communication.json")) as f:
            comm = json.load(f)
        got, step_recv = {}, {}
        for step, classes in comm.items():
            if not re.fullmatch(r"step\d+", step) or set(classes) != {"collective", "p2p"}:
                fail(f"rank {rank}: step key {step!r} with {sorted(classes)}")
            for cls, ops in classes.items():
                for key, o in ops.items():
                    if key == "Total Op Info":
                        continue
                    is_p2p = "send" in key or "receive" in key
                    if is_p2p != (cls == "p2p"):
                        fail(f"rank {rank}: {key} under {cls}")
                    if key in got:
                        fail(f"rank {rank}: {key} twice")
                    bw = o["Communication Bandwidth Info"]["SDMA"]
                    got[key] = bw["Transit Size(MB)"] * 1048576
                    t = o["Communication Time Info"]
                    # one rank knows its start and elapse only: the split,
                    # the transit time and the bandwidth are left out, never 0
                    if t["Elapse Time(ms)"] < 0 or set(t) != {"Start Timestamp(us)",
                                                            "Elapse Time(ms)"}:
                        fail(f"rank {rank}: {key}: times {t}")
                    if set(bw) != {"Transit Size(MB)", "Large Packet Ratio"}:
                        fail(f"rank {rank}: {key}: bandwidth block {bw}")
                    if key.startswith("hcom_receive"):
                        step_recv[step] = step_recv.get(step, 0) + \
                            round(t["Elapse Time(ms)"] * 1e6)
        if set(got) != set(want):
            fail(f"rank {rank}: ops {sorted(set(got) ^ set(want))} differ from the program's")
        for key, b in want.items():
            if abs(got[key] - b) > 1:
                fail(f"rank {rank}: {key}: {got[key]:.1f} bytes, the program sent {b}")
        db = sqlite3.connect(os.path.join(out, "analysis.db"))
        rows = db.execute("SELECT hccl_op_name || '@' || group_name, transit_size "
                          "FROM CommAnalyzerBandwidth").fetchall()
        exact = {k: round(v * 1048576, 6) for k, v in rows}
        if exact != {k: float(v) for k, v in want.items()}:
            fail(f"rank {rank}: CommAnalyzerBandwidth {exact} != {want}")
        if db.execute("SELECT count(*) FROM CommAnalyzerTime").fetchone()[0] != len(want):
            fail(f"rank {rank}: CommAnalyzerTime rows")
        db.close()
        db = sqlite3.connect(os.path.join(out, f"ascend_pytorch_profiler_{rank}.db"))
        names = {r[0] for r in db.execute(
            "SELECT n.value || '@' || g.value FROM COMMUNICATION_OP c JOIN STRING_IDS n ON "
            "n.id = c.opName JOIN STRING_IDS g ON g.id = c.groupName")}
        if names != set(want):
            fail(f"rank {rank}: COMMUNICATION_OP names {sorted(names ^ set(want))}")
        db.close()

        with open(os.path.join(out, "communication_matrix.json")) as f:
            matrix = json.load(f)
        ring_bytes = {}
        for step, classes in matrix.items():
            for cls, entries in classes.items():
                for key, links in entries.items():
                    group = key.split("@", 1)[1]
                    me = rank if group == label("MPI_COMM_WORLD") else rank // 2
                    if f"{me}-{me}" not in links:
                        fail(f"rank {rank}: {step} {key} has no self link {me}-{me}")
                    if key.startswith(("send-total", "receive-total")):
                        for link, v in links.items():
                            if link != f"{me}-{me}":
                                ring_bytes[(key[:4], link)] = ring_bytes.get(
                                    (key[:4], link), 0) + v["Transit Size(MB)"] * 1048576
        want_links = {("send", f"{rank}-{(rank + 1) % n}"): steps * ring * 8,
                      ("rece", f"{(rank - 1) % n}-{rank}"): steps * ring * 8}
        if set(ring_bytes) != set(want_links) or any(
                abs(ring_bytes[k] - v) > steps for k, v in want_links.items()):
            fail(f"rank {rank}: matrix ring links {ring_bytes}, expected {want_links}")

        with open(os.path.join(out, "step_trace_time.csv"), newline="") as f:
            lines = f.read().split("\r\n")
        head = lines[0].split(",")
        for line in filter(None, lines[1:]):
            r = dict(zip(head, line.split(",")))
            v = {k: us_ns(x) for k, x in r.items() if k not in ("Device_id", "Step")}
            dur = v["Stage"] + v["Bubble"]
            if v["Computing"] + v["Communication(Not Overlapped)"] + v["Free"] != dur:
                fail(f"rank {rank}: step {r['Step']}: Computing + Not Overlapped + Free "
                     f"!= step: {r}")
            if v["Communication"] != v["Overlapped"] + v["Communication(Not Overlapped)"]:
                fail(f"rank {rank}: step {r['Step']}: Communication != Overlapped + Not "
                     f"Overlapped: {r}")
            step = f"step{r['Step']}"
            if step in comm and v["Communication"] <= 0:
                fail(f"rank {rank}: {step} has ops but Communication {r['Communication']}")
            # receives of one step do not overlap here: the sum is the union
            if abs(v["Bubble"] - step_recv.get(step, 0)) > 1:
                fail(f"rank {rank}: {step}: Bubble {v['Bubble']} ns, receives "
                     f"{step_recv.get(step, 0)} ns")
        checked += 1
    print(f"check_comm_outputs: OK: {checked} ranks, {len(want)} ops each")


if __name__ == "__main__":
    main()
