"""make_cluster_dirs.py DIR SLOW EXTRA_FREE_US — four synthetic rank result
directories (already analysed: profiler_info_{rank}.json,
ASCEND_PROFILER_OUTPUT/step_trace_time.csv and communication.json) for
aiprof cluster, without MPI.  Rank SLOW (-1: none) has EXTRA_FREE_US more
Free per step and arrives last at every collective (shortest elapse)."""
import json
import os
import sys

top, slow, extra = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
HEAD = ("Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,"
        "Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n")
for rank in range(4):
    d = os.path.join(top, "n%d" % (rank // 2), "w%d_2026010100000000%d_ascend_pt" % (rank, rank))
    os.makedirs(os.path.join(d, "ASCEND_PROFILER_OUTPUT"))
    open(os.path.join(d, "profiler_info_%d.json" % rank), "w").write("{}")
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
            ops["hcom_allReduce__%d_0_1@world" % (step * 4 + k)] = {
                "Communication Time Info": {"Start Timestamp(us)": 1.7e15 + step * 1e5 + k,
                                            "Elapse Time(ms)": elapse}}
        ops["Total Op Info"] = {}
        comm["step%d" % step] = {"collective": ops,
                                 "p2p": {"hcom_send__%d_0_1@pair%d" % (step, rank // 2): {}}}
    open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), "w").write(
        HEAD + "".join(rows))
    json.dump(comm, open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication.json"), "w"))
