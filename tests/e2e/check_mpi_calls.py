#!/usr/bin/env python3
"""check_mpi_calls.py — tests/e2e/mpi_calls.c's record, rank by rank,
against what each of its calls sends (computed here).

    check_mpi_calls.py DUMP_TOOL RUN_DIR

Each rank's ops in call order: (name, group, bytes, count, dtype, root,
peer, tag, non-blocking); collective sequence numbers 0, 1, ... per group.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_mpi import fail, parse  # noqa: E402

W, D1, D2 = "MPI_COMM_WORLD", "MPI_Comm[0,1,2]", "MPI_Comm[0,1,2]#1"
I, DB = "MPI_INT", "MPI_DOUBLE"


def expected(r):
    nxt, prv = (r + 1) % 3, (r + 2) % 3
    c = lambda name, b, n, t, root=-1, nb=0, g=W: (name, g, b, n, t, root, -1, -1, nb)
    return [
        c("MPI_Gather", 8, 2, I, 1),
        c("MPI_Gatherv", 4 * (r + 1), r + 1, I, 0),
        c("MPI_Allgatherv", 4 * (r + 1), r + 1, I),
        c("MPI_Scatter", 24, 3, DB, 2),
        c("MPI_Scatterv", 4 * (r + 1), r + 1, I, 0),
        c("MPI_Alltoall", 24, 6, I),
        c("MPI_Alltoallv", 24, 6, I),
        c("MPI_Alltoallw", 24 if r == 1 else 12, 3, DB if r == 1 else I),
        c("MPI_Reduce_scatter", 24, 6, I),
        c("MPI_Reduce_scatter_block", 24, 6, I),
        c("MPI_Scan", 16, 4, I),
        c("MPI_Exscan", 16, 4, I),
        c("MPI_Allreduce", 12, 3, I),
        c("MPI_Ibcast", 20, 5, I, 1, 1),
        c("MPI_Ibarrier", 0, 0, "", -1, 1),
        c("MPI_Ialltoall", 12, 3, I, -1, 1),
        c("MPI_Iallreduce", 8, 2, I, -1, 1),
        ("MPI_Sendrecv", W, 40, 10, I, -1, nxt, 5, 0),
        ("MPI_Irecv", W, 28, 7, I, -1, prv, 9, 1),   # MPI_ANY_SOURCE, MPI_ANY_TAG, 64 posted
        ("MPI_Isend", W, 28, 7, I, -1, nxt, 9, 1),
        ("MPI_Irecv", W, 44, 11, I, -1, prv, 3, 1),
        ("MPI_Ssend", W, 44, 11, I, -1, nxt, 3, 0),
        ("MPI_Send", W, 0, 0, I, -1, -1, 1, 0),      # MPI_PROC_NULL
        c("MPI_Bcast", 24, 2, "", 0),                # a derived type: no name
        c("MPI_Allreduce", 4, 1, I, g=D1),
        c("MPI_Allreduce", 4, 1, I, g=D2),
    ]


def main():
    tool, run_dir = sys.argv[1], sys.argv[2]
    dirs = glob.glob(os.path.join(run_dir, "*_ascend_pt"))
    if len(dirs) != 3:
        fail(f"{len(dirs)} result directories in {run_dir}, expected 3")
    for d in dirs:
        infos = [f for f in os.listdir(d) if re.fullmatch(r"profiler_info_\d+\.json", f)]
        if len(infos) != 1:
            fail(f"{d}: profiler_info files {infos}")
        r = int(infos[0][14:-5])
        groups, ops = parse(tool, d)
        names = {gid: g["name"] for gid, g in groups.items()}
        for g in groups.values():
            if g["ranks"] != "0,1,2" or int(g["my_rank"]) != r:
                fail(f"rank {r}: group {g}")
        got = [(o["name"], names.get(int(o["group"]), "?"), int(o["bytes"]), int(o["count"]),
                o["dtype"], int(o["root"]), int(o["peer"]), int(o["tag"]), int(o["nb"]))
               for o in ops]
        want = expected(r)
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                fail(f"rank {r}: op {i} recorded as {g}, the program made {w}")
        if len(got) != len(want):
            fail(f"rank {r}: {len(got)} ops recorded, the program made {len(want)}")
        seqs = {}
        for o, g in zip(ops, got):
            if o["kind"] == "1":
                if int(o["seq"]) != seqs.get(g[1], 0):
                    fail(f"rank {r}: {g[0]} on {g[1]}: sequence {o['seq']}")
                seqs[g[1]] = int(o["seq"]) + 1
    print(f"check_mpi_calls: OK: 3 ranks, {len(want)} calls each")


if __name__ == "__main__":
    main()
