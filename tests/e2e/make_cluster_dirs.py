"""make_cluster_dirs.py DIR SLOW EXTRA_FREE_US — four synthetic rank result
directories (already analysed: profiler_info_{rank}.json,
ASCEND_PROFILER_OUTPUT/step_trace_time.csv and communication.json) for
aiprof cluster, without MPI.  Rank SLOW (-1: none) has EXTRA_FREE_US more
Free per step and arrives last at every collective (shortest elapse).

    make_cluster_dirs.py DIR SLOW EXTRA_FREE_US [OFFSET_US]

Every collective ends at the same moment on every rank (its step's base
+ k * 10 ms); rank r starts it 5 + r ms before that, the slow rank 1 ms
before, so the split is known: wait (4 + r) ms for the others, 0 for the
slow rank, transit 1 ms, idle 0.  The ranks are on host "h0"
(profiler_info's aiprof.hostname); with OFFSET_US, ranks 2 and 3 are on
host "h1" whose clock reads OFFSET_US more, and rank 3 leaves the first
collective 0.5 ms late (its idle), an outlier the clock estimate's median
must ignore."""
import json
import os
import sys

top, slow, extra = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
offset = float(sys.argv[4]) if len(sys.argv) > 4 else None
HEAD = ("Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,"
        "Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n")
for rank in range(4):
    d = os.path.join(top, "n%d" % (rank // 2), "w%d_2026010100000000%d_ascend_pt" % (rank, rank))
    os.makedirs(os.path.join(d, "ASCEND_PROFILER_OUTPUT"))
    host = "h1" if offset is not None and rank >= 2 else "h0"
    shift = offset if host == "h1" else 0.0
    json.dump({"aiprof": {"hostname": host}}, open(os.path.join(d, "profiler_info_%d.json" % rank), "w"))
    rows = []
    comm = {}
    for step in range(3):
        free = 1000.0 + 10 * rank + (extra if rank == slow else 0)
        c = 20000.25 - (extra if rank == slow else 0)
        rows.append("host,%d,500.000,%.3f,0.000,%.3f,%.3f,%.3f,0.000,%.3f,0.000\n"
                    % (step, c, c, free, c + free + 500, c))
        ops = {}
        for k in range(4):
            elapse = 1.0 if rank == slow else 5.0 + rank
            end = 1.7e15 + step * 1e5 + k * 1e4
            late = 0.5 if offset is not None and rank == 3 and step == 0 and k == 0 else 0.0
            ops["hcom_allReduce__%d_0_1@world" % (step * 4 + k)] = {
                "Communication Time Info": {"Start Timestamp(us)": end - elapse * 1e3 + shift,
                                            "Elapse Time(ms)": elapse + late}}
        ops["Total Op Info"] = {}
        comm["step%d" % step] = {"collective": ops,
                                 "p2p": {"hcom_send__%d_0_1@pair%d" % (step, rank // 2): {}}}
    open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), "w").write(
        HEAD + "".join(rows))
    json.dump(comm, open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication.json"), "w"))
