"""make_cluster_parallel.py DIR [--no-db] — four synthetic rank result
directories of a pipeline- and data-parallel job (TP 1, PP 2, DP 2; world
4), already analysed, for `aiprof cluster`'s database, parallel-group,
link-matrix and HTML outputs (tests/e2e/test_cluster_db.sh) and for the
msprof-analyze comparison (tests/python/test_cluster_parity.py).

Groups, named in the files as CANN does, by str(double_hash(group_id)):
world (all ranks, collective, pg_name default_group), dp0 = {0,1} and
dp1 = {2,3} (collective, pg_name dp), pp0 = {0,2} and pp1 = {1,3} (p2p,
pg_name pp).  Per step rank 0 sends 4 MiB to rank 2 in 2 ms and rank 1 sends
4 MiB to rank 3 in 8 ms (the slow link); ranks 0 and 1 are on host A, 2 and
3 on host B (HOST_INFO of ascend_pytorch_profiler_{rank}.db, device id =
rank; --no-db: no db, the host name from profiler_info_{rank}.json only).
profiler_metadata.json holds distributed_args and parallel_group_info.
"""
import json
import os
import sqlite3
import sys

HEAD = ("Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,"
        "Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n")
STEPS = 2
MB = 4.0
SEND_MS = {0: 2.0, 1: 8.0}          # sender rank -> ms per transfer


def double_hash(s):
    a = b = 0
    for ch in s:
        a = (a * 29 + ord(ch)) & 0xFFFFFFFF
        b = (b * 131 + ord(ch)) & 0xFFFFFFFF
    return (a << 32) | b


GROUPS = {  # group_id -> (pg_name, global ranks, class)
    "hccl_world_group": ("default_group", [0, 1, 2, 3], "collective"),
    "10.0.0.1%enp_dp0": ("dp", [0, 1], "collective"),
    "10.0.0.2%enp_dp1": ("dp", [2, 3], "collective"),
    "10.0.0.1%enp_pp0": ("pp", [0, 2], "p2p"),
    "10.0.0.1%enp_pp1": ("pp", [1, 3], "p2p"),
}
NAME = {gid: str(double_hash(gid)) for gid in GROUPS}


def comm_op(start, elapse, mb, transport):
    return {"Communication Time Info": {
                "Start Timestamp(us)": start, "Elapse Time(ms)": elapse, "Transit Time(ms)": 0,
                "Wait Time(ms)": 0, "Synchronization Time(ms)": 0, "Idle Time(ms)": 0,
                "Wait Time Ratio": 0, "Synchronization Time Ratio": 0},
            "Communication Bandwidth Info": {transport: {
                "Transit Size(MB)": mb, "Transit Time(ms)": elapse,
                "Bandwidth(GB/s)": round(mb / elapse, 4) if elapse else 0,
                "Large Packet Ratio": 1.0, "Size Distribution": {str(mb): [1, elapse]}}}}


def link(transport, mb, ms, op):
    return {"Transport Type": transport, "Transit Size(MB)": mb, "Transit Time(ms)": ms,
            "Bandwidth(GB/s)": round(mb / ms, 4) if ms else 0, "Op Name": op}


def rank_files(rank):
    comm, matrix = {}, {}
    for step in range(STEPS):
        t0 = 1.7e15 + step * 1e5
        coll, p2p, mcoll, mp2p = {}, {}, {}, {}
        for gid, (_, ranks, cls) in GROUPS.items():
            if rank not in ranks:
                continue
            me = ranks.index(rank)
            if cls == "collective":
                op = "hcom_allReduce__%d_0_1" % step
                coll["%s@%s" % (op, NAME[gid])] = comm_op(t0 + 10, 1.0 + rank, 1.0, "SDMA")
                for label in ("top1", "middle", "total"):  # only total is summed
                    mcoll["allreduce-%s@%s" % (label, NAME[gid])] = {
                        "%d-%d" % (me, me): link("LOCAL", 1.0, 1.0 + rank, op)}
            else:
                sender = ranks[0]
                peer = 1 - me
                ms = SEND_MS[sender]
                kind = "send" if rank == sender else "receive"
                op = "hcom_%s__%d_%d_1" % (kind, step, peer)
                p2p["%s@%s" % (op, NAME[gid])] = comm_op(t0 + 50, ms if kind == "send" else 9.0,
                                                         MB, "SDMA")
                for label in ("top1", "total"):
                    mp2p["%s-%s@%s" % (kind, label, NAME[gid])] = {
                        "%d-%d" % (me, me): link("LOCAL", 0.0, 0.0, op),
                        # the receiver's view of the same transfer: a longer time
                        "0-1": link("SDMA", MB, ms if kind == "send" else 9.0, op)}
        coll["Total Op Info"] = {}
        comm["step%d" % step] = {"collective": coll, "p2p": p2p}
        matrix["step%d" % step] = {"collective": mcoll, "p2p": mp2p}
    return comm, matrix


def main():
    top = sys.argv[1]
    with_db = "--no-db" not in sys.argv[2:]
    for rank in range(4):
        d = os.path.join(top, "node%d" % (rank // 2), "w%d_2026010100000000%d_ascend_pt" % (rank, rank))
        out = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
        os.makedirs(out)
        host = "hostA" if rank < 2 else "hostB"
        json.dump({"rank_id": rank, "aiprof": {"hostname": host}},
                  open(os.path.join(d, "profiler_info_%d.json" % rank), "w"))
        meta = {
            "distributed_args": {"tensor_model_parallel_size": 1,
                                 "pipeline_model_parallel_size": 2, "data_parallel_size": 2,
                                 "world_size": 4, "rank": rank, "sequence_parallel": False},
            "parallel_group_info": {
                gid: {"group_name": pg, "group_rank": ranks.index(rank), "global_ranks": ranks}
                for gid, (pg, ranks, _) in GROUPS.items() if rank in ranks},
        }
        json.dump(meta, open(os.path.join(d, "profiler_metadata.json"), "w"))
        rows = []
        for step in range(STEPS):
            comp, free = 1000.0 * (rank + 1), 500.0 + 100 * step
            c = 2000.0
            rows.append("host,%d,%.3f,%.3f,0.000,%.3f,%.3f,%.3f,%.3f,%.3f,10.000\n"
                        % (step, comp, c, c, free, comp + c + free - 9.0 * rank, 9.0 * rank,
                           c - 9.0 * rank))
        open(os.path.join(out, "step_trace_time.csv"), "w").write(HEAD + "".join(rows))
        comm, matrix = rank_files(rank)
        json.dump(comm, open(os.path.join(out, "communication.json"), "w"))
        json.dump(matrix, open(os.path.join(out, "communication_matrix.json"), "w"))
        if with_db:
            db = sqlite3.connect(os.path.join(out, "ascend_pytorch_profiler_%d.db" % rank))
            db.execute("CREATE TABLE HOST_INFO (hostUid TEXT, hostName TEXT)")
            db.execute("INSERT INTO HOST_INFO VALUES (?, ?)", ("uid-" + host, host))
            db.execute("CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER)")
            db.execute("INSERT INTO RANK_DEVICE_MAP VALUES (?, ?)", (rank, rank))
            db.commit()
            db.close()


if __name__ == "__main__":
    main()
