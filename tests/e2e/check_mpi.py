#!/usr/bin/env python3
"""check_mpi.py — what examples/mpi/mpi_train recorded, rank by rank,
against what the program sent (computed here from its options).

    check_mpi.py DUMP_TOOL RUN_DIR NRANKS STEPS PARAMS RING

RUN_DIR holds one result directory per rank; DUMP_TOOL (dump_comm)
prints each one's groups and ops as the analyser loads them.  Checked: one
directory per rank (profiler_info_{rank}.json); every MPI call of the
program recorded once, in call order, with its bytes, count, datatype,
root, peer (world rank; MPI_ANY_SOURCE resolved to the sender), tag and
non-blocking flag; the groups with their world ranks; per-communicator
sequence numbers 0, 1, ... that name the same collective on every rank;
each link's bytes seen alike by its sender and its receiver.
"""
import glob
import os
import re
import subprocess
import sys
from collections import defaultdict


def fail(msg):
    print(f"check_mpi: FAIL: {msg}")
    sys.exit(1)


def parse(tool, d):
    out = subprocess.run([tool, d], capture_output=True, text=True)
    if out.returncode:
        fail(f"{tool} {d}: {out.stderr.strip()}")
    groups, ops, bad = {}, [], 0
    for line in out.stdout.splitlines():
        kind, *fields = line.split("\t")
        f = dict(x.split("=", 1) for x in fields)
        if kind == "process":
            bad += int(f["bad"])
        elif kind == "group":
            groups[int(f["id"])] = f
        elif kind == "op":
            ops.append(f)
    if bad:
        fail(f"{d}: {bad} bad communication records")
    return groups, ops


def expected(rank, n, steps, params, ring):
    """(name, group, bytes, count, dtype, root, peer, tag, nb) in call order."""
    world, parity = "MPI_COMM_WORLD", "MPI_Comm[%s]" % ",".join(
        str(r) for r in range(rank % 2, n, 2))
    half = params // 2
    ops = [("MPI_Bcast", world, params * 4, params, "MPI_FLOAT", 0, -1, -1, 0)]
    for s in range(steps):
        ops += [("MPI_Iallreduce", world, half * 4, half, "MPI_FLOAT", -1, -1, -1, 1),
                ("MPI_Allreduce", world, (params - half) * 4, params - half, "MPI_FLOAT",
                 -1, -1, -1, 0),
                ("MPI_Irecv", world, ring * 8, ring, "MPI_DOUBLE", -1, (rank - 1) % n, s, 1),
                ("MPI_Send", world, ring * 8, ring, "MPI_DOUBLE", -1, (rank + 1) % n, s, 0),
                ("MPI_Allreduce", world, 8, 1, "MPI_DOUBLE", -1, -1, -1, 0)]
    ops += [("MPI_Allgather", parity, 4, 1, "MPI_INT", -1, -1, -1, 0),
            ("MPI_Reduce", world, 8, 1, "MPI_DOUBLE", 0, -1, -1, 0),
            ("MPI_Barrier", world, 0, 0, "", -1, -1, -1, 0)]
    return ops


def main():
    tool, run_dir = sys.argv[1], sys.argv[2]
    n, steps, params, ring = (int(x) for x in sys.argv[3:7])
    dirs = sorted(glob.glob(os.path.join(run_dir, "**", "*_ascend_pt"), recursive=True))
    if len(dirs) != n:
        fail(f"{len(dirs)} result directories in {run_dir}, expected {n}")
    by_rank = {}
    for d in dirs:
        infos = [f for f in os.listdir(d) if re.fullmatch(r"profiler_info_\d+\.json", f)]
        if len(infos) != 1:
            fail(f"{d}: profiler_info files {infos}, expected one profiler_info_<rank>.json")
        by_rank[int(infos[0][14:-5])] = d
    if sorted(by_rank) != list(range(n)):
        fail(f"ranks {sorted(by_rank)}, expected 0..{n - 1}")

    seq_ops = defaultdict(dict)   # (group name, seq) -> {rank: (op, bytes)}
    links = defaultdict(lambda: [0, 0])  # (src, dst) -> [sent, received]
    total = 0
    for rank, d in by_rank.items():
        groups, ops = parse(tool, d)
        names = {gid: g["name"] for gid, g in groups.items()}
        for g in groups.values():
            ranks = [int(r) for r in g["ranks"].split(",")] if g["ranks"] else []
            want = list(range(n)) if g["name"] == "MPI_COMM_WORLD" else \
                list(range(rank % 2, n, 2))
            if ranks != want or int(g["n_ranks"]) != len(want) or \
                    int(g["my_rank"]) != want.index(rank):
                fail(f"rank {rank}: group {g}: expected world ranks {want} with this rank at "
                     f"{want.index(rank)}")
        got = [(o["name"], names.get(int(o["group"]), "?"), int(o["bytes"]), int(o["count"]),
                o["dtype"], int(o["root"]), int(o["peer"]), int(o["tag"]), int(o["nb"]))
               for o in ops]
        want = expected(rank, n, steps, params, ring)
        if got != want:
            for i, (g, w) in enumerate(zip(got, want)):
                if g != w:
                    fail(f"rank {rank}: op {i} recorded as {g}, the program made {w}")
            fail(f"rank {rank}: {len(got)} ops recorded, the program made {len(want)}")
        next_seq = defaultdict(int)
        for o, (name, group, nbytes, *_rest) in zip(ops, got):
            if int(o["end"]) < int(o["start"]):
                fail(f"rank {rank}: {name} ends before it starts")
            if o["kind"] == "1":
                seq = int(o["seq"])
                if seq != next_seq[group]:
                    fail(f"rank {rank}: {name} on {group} has sequence {seq}, expected "
                         f"{next_seq[group]}")
                next_seq[group] += 1
                seq_ops[(group, seq)][rank] = (name, nbytes)
            elif o["kind"] == "2":
                links[(rank, int(o["peer"]))][0] += nbytes
            elif o["kind"] == "3":
                links[(int(o["peer"]), rank)][1] += nbytes
        total += len(ops)
    for (group, seq), per_rank in seq_ops.items():
        members = n if group == "MPI_COMM_WORLD" else len(range(0, n, 2))
        if len(per_rank) != members or len(set(per_rank.values())) != 1:
            fail(f"collective {seq} of {group} differs across ranks: {per_rank}")
    for (src, dst), (sent, received) in links.items():
        if sent != received or sent != steps * ring * 8:
            fail(f"link {src}->{dst}: sent {sent} bytes, received {received}, the program "
                 f"sent {steps * ring * 8}")
    print(f"check_mpi: OK: {n} ranks, {total} ops, {len(seq_ops)} collectives matched "
          f"across ranks, {len(links)} links")


if __name__ == "__main__":
    main()
