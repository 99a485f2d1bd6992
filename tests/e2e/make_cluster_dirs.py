"""make_cluster_dirs.py — synthetic rank result directories for `aiprof
cluster`, without MPI.

  make_cluster_dirs.py DIR SLOW EXTRA_FREE_US [OFFSET_US]
      Four small directories (already analysed: profiler_info_{rank}.json,
      ASCEND_PROFILER_OUTPUT/step_trace_time.csv and communication.json).
      Rank SLOW (-1: none) has EXTRA_FREE_US more Free per step and arrives
      last at every collective (shortest elapse); the split of each
      collective is known (four()'s comment), and with OFFSET_US ranks 2-3
      are on a second host whose clock is OFFSET_US ahead.
      test_cluster_synthetic.sh checks its numbers.

  make_cluster_dirs.py DIR SLOW EXTRA_FREE_US --ranks N [--steps S]
      N realistic, already analysed rank directories as aiprof writes them
      for a host job (docs/COMMUNICATION.md): DIR/node{rank // 8}/
      w{rank}_{ts}_ascend_pt with profiler_info_{rank}.json,
      profiler_metadata.json (parallel_group_info of every group the rank is
      in), and in ASCEND_PROFILER_OUTPUT/ step_trace_time.csv (every column,
      consistent: Computing + Communication(Not Overlapped) + Free = step),
      communication.json (Communication Time and Bandwidth Info with size
      distribution, Total Op Info) and communication_matrix.json (top1 /
      middle / bottom1..3 / total blocks, self links, peer links of p2p).
      Per step (S steps, default 3): two allReduce and one broadcast on
      `world` (every rank), two allGather on `tp<node>` (the 8 ranks of a
      node), one reduceScatter on `dp<rank % 8>` (one rank per node), and a
      send to rank + 8 and a receive from rank − 8 (mod N) on `world`.
      Times are pseudo-random but fixed by the rank; rank SLOW has
      EXTRA_FREE_US more Free per step and the shortest elapse at every
      collective it is in.  test_cluster_scale.sh and `make bench` use it.

  make_cluster_dirs.py DIR 0 0 --ranks N --raw [--template RESULT_DIR]
      N rank directories holding raw data only (FRAMEWORK/, a copy of the
      golden input of tests/golden, or of RESULT_DIR's FRAMEWORK/) with
      profiler_info_{rank}.json, so that `aiprof cluster` analyses each (the
      per-rank work of -j and --mpi).
"""
import json
import os
import shutil
import sys

HEAD = ("Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,"
        "Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n")
T0_US = 1.7e15  # the job's wall clock start, us
STEP_US = 100000.0
PER_NODE = 8
MB = float(1 << 20)


def four(top, slow, extra, offset=None):
    """Every collective ends at the same moment on every rank (its step's
    base + k * 10 ms); rank r starts it 5 + r ms before that, the slow rank
    1 ms before, so the split is known: wait (4 + r) ms for the others, 0
    for the slow rank, transit 1 ms, idle 0.  The ranks are on host "h0"
    (profiler_info's aiprof.hostname); with `offset` (us), ranks 2 and 3 are
    on host "h1" whose clock reads `offset` more, and rank 3 leaves the
    first collective 0.5 ms late (its idle), an outlier the clock
    estimate's median must ignore."""
    for rank in range(4):
        d = os.path.join(top, "n%d" % (rank // 2), "w%d_2026010100000000%d_ascend_pt" % (rank, rank))
        os.makedirs(os.path.join(d, "ASCEND_PROFILER_OUTPUT"))
        host = "h1" if offset is not None and rank >= 2 else "h0"
        shift = offset if host == "h1" else 0.0
        with open(os.path.join(d, "profiler_info_%d.json" % rank), "w") as f:
            json.dump({"aiprof": {"hostname": host}}, f)
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
        with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), "w") as f:
            f.write(HEAD + "".join(rows))
        with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication.json"), "w") as f:
            json.dump(comm, f)


def noise(*keys):
    """A fixed pseudo-random number in [0, 1) from integers."""
    h = 2166136261
    for k in keys:
        h = ((h ^ (k & 0xFFFFFFFF)) * 16777619) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 2246822519) & 0xFFFFFFFF
    h ^= h >> 13
    return h / 4294967296.0


def groups_of(rank, n):
    """(group name, global ranks) of every group `rank` is in."""
    node = rank // PER_NODE
    tp = list(range(node * PER_NODE, min(n, (node + 1) * PER_NODE)))
    dp = list(range(rank % PER_NODE, n, PER_NODE))
    return [("world", list(range(n))), ("tp%d" % node, tp), ("dp%d" % (rank % PER_NODE), dp)]


def time_info(start_us, elapse_ms):
    return {"Start Timestamp(us)": round(start_us, 3), "Elapse Time(ms)": round(elapse_ms, 6),
            "Transit Time(ms)": 0, "Wait Time(ms)": 0, "Synchronization Time(ms)": 0,
            "Idle Time(ms)": 0, "Wait Time Ratio": 0, "Synchronization Time Ratio": 0}


def bw_info(size_b, elapse_ms):
    mb = round(size_b / MB, 6)
    return {"SDMA": {"Transit Size(MB)": mb, "Transit Time(ms)": round(elapse_ms, 6),
                     "Bandwidth(GB/s)": round(mb / elapse_ms, 4) if elapse_ms > 0 else 0,
                     "Large Packet Ratio": 1.0 if size_b >= (1 << 20) else 0.0,
                     "Size Distribution": {"%g" % mb: [1, round(elapse_ms, 6)]}}}


def total_of(ops):
    t = {"Start Timestamp(us)": min(o["Communication Time Info"]["Start Timestamp(us)"]
                                    for o in ops.values()),
         "Elapse Time(ms)": round(sum(o["Communication Time Info"]["Elapse Time(ms)"]
                                      for o in ops.values()), 6)}
    info = time_info(t["Start Timestamp(us)"], t["Elapse Time(ms)"])
    mb = round(sum(o["Communication Bandwidth Info"]["SDMA"]["Transit Size(MB)"]
                   for o in ops.values()), 6)
    dist = {}
    for o in ops.values():
        for k, (cnt, ms) in o["Communication Bandwidth Info"]["SDMA"]["Size Distribution"].items():
            c0, m0 = dist.get(k, [0, 0.0])
            dist[k] = [c0 + cnt, round(m0 + ms, 6)]
    ms = info["Elapse Time(ms)"]
    big = sum(1 for o in ops.values()
              if o["Communication Bandwidth Info"]["SDMA"]["Large Packet Ratio"] > 0)
    return {"Communication Time Info": info,
            "Communication Bandwidth Info": {"SDMA": {
                "Transit Size(MB)": mb, "Transit Time(ms)": ms,
                "Bandwidth(GB/s)": round(mb / ms, 4) if ms > 0 else 0,
                "Large Packet Ratio": round(big / len(ops), 4), "Size Distribution": dist}}}


def link(transport, size_b, ms, op):
    mb = round(size_b / MB, 6)
    return {"Transport Type": transport, "Transit Size(MB)": mb, "Transit Time(ms)": round(ms, 6),
            "Bandwidth(GB/s)": round(mb / ms, 4) if ms > 0 else 0.0, "Op Name": op}


def matrix_blocks(out, records):
    """records: (type, group, [(name, {link: (transport, bytes, ms)})]) →
    top1 / middle / bottom1..3 / total per type@group, as aiprof writes."""
    for typ, group, ops in records:
        links = {}
        for name, ls in ops:
            for key, (tr, size_b, ms) in ls.items():
                links.setdefault(key, []).append((name, tr, size_b, ms))
        blocks = {}
        for key in sorted(links):
            recs = sorted(links[key], key=lambda r: -(r[2] / r[3] if r[3] > 0 else 0))
            picks = [("top1", 0), ("middle", len(recs) // 2), ("bottom1", len(recs) - 1)]
            if len(recs) >= 2:
                picks.append(("bottom2", len(recs) - 2))
            if len(recs) >= 3:
                picks.append(("bottom3", len(recs) - 3))
            for label, i in picks:
                name, tr, size_b, ms = recs[i]
                blocks.setdefault(label, {})[key] = link(tr, size_b, ms, name)
            size_t = sum(r[2] for r in recs)
            ms_t = sum(r[3] for r in recs)
            blocks.setdefault("total", {})[key] = link(recs[0][1], size_t, ms_t, recs[0][0])
        for label in ("top1", "middle", "bottom1", "bottom2", "bottom3", "total"):
            if label in blocks:
                out["%s-%s@%s" % (typ.lower(), label, group)] = blocks[label]


def one_rank(top, rank, n, steps, slow, extra):
    node = rank // PER_NODE
    d = os.path.join(top, "node%d" % node, "w%d_20260101000000%04d_ascend_pt" % (rank, rank % 10000))
    out = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out)
    groups = groups_of(rank, n)
    info = {"config": {"common_config": {"activities": ["ProfilerActivity.CPU"]},
                       "experimental_config": {"_profiler_level": "Level1",
                                               "_export_type": ["text"]}},
            "rank_id": rank,
            "aiprof": {"version": "0.1.0", "worker_name": "w%d" % rank, "pid": 1000 + rank,
                       "hostname": "node%d" % node, "program": "synthetic"}}
    with open(os.path.join(d, "profiler_info_%d.json" % rank), "w") as f:
        json.dump(info, f)
    meta = {"ENV_VARIABLES": {}, "parallel_group_info": {
        g: {"group_name": "default_group" if g == "world" else g[:2],
            "group_rank": ranks.index(rank), "global_ranks": ranks} for g, ranks in groups}}
    with open(os.path.join(d, "profiler_metadata.json"), "w") as f:
        json.dump(meta, f)
    is_slow = rank == slow
    rows, comm, matrix = [], {}, {}
    seq = {g: 0 for g, _ in groups}
    nsend = {}
    for step in range(steps):
        t = T0_US + step * STEP_US
        coll, p2p, mrec = {}, {}, []
        sched = [("allReduce", "world", 4 << 20), ("allReduce", "world", 1 << 20),
                 ("broadcast", "world", 4096), ("allGather", groups[1][0], 256 << 10),
                 ("allGather", groups[1][0], 256 << 10), ("reduceScatter", groups[2][0], 2 << 20)]
        at = t + 2000.0
        by_type = {}
        for k, (typ, g, size_b) in enumerate(sched):
            s = seq[g]
            seq[g] += 1
            # every member ends together; the slow rank arrives last
            elapse = 0.2 if is_slow else 1.0 + 3.0 * noise(rank, step, k)
            name = "hcom_%s__%d_0_1" % (typ, s)
            start = at + 3000.0 * noise(rank, step, k)
            coll[name + "@" + g] = {"Communication Time Info": time_info(start, elapse),
                                    "Communication Bandwidth Info": bw_info(size_b, elapse)}
            me = dict(groups)[g].index(rank)
            by_type.setdefault((typ, g), []).append(
                (name, {"%d-%d" % (me, me): ("LOCAL", size_b, elapse)}))
            at += 5000.0
        coll["Total Op Info"] = total_of({k: v for k, v in coll.items()})
        dst, src = (rank + PER_NODE) % n, (rank - PER_NODE) % n
        p2p_types = []
        for typ, peer, size_b in (("send", dst, 64 << 10), ("receive", src, 64 << 10)):
            if peer == rank:
                continue
            k = nsend.get((typ, peer), 0)
            nsend[(typ, peer)] = k + 1
            name = "hcom_%s__%d_%d_1" % (typ, k, peer)
            elapse = 0.05 + 0.1 * noise(rank, step, 99, peer)
            p2p[name + "@world"] = {"Communication Time Info": time_info(at, elapse),
                                    "Communication Bandwidth Info": bw_info(size_b, elapse)}
            pair = "%d-%d" % ((rank, peer) if typ == "send" else (peer, rank))
            p2p_types.append((typ, "world", [(name, {"%d-%d" % (rank, rank): ("LOCAL", 0, 0.0),
                                                     pair: ("SDMA", size_b, elapse)})]))
            at += 500.0
        if p2p:
            p2p["Total Op Info"] = total_of(p2p)
        comm["step%d" % step] = {"collective": coll, "p2p": p2p}
        mc, mp = {}, {}
        matrix_blocks(mc, [(typ, g, ops) for (typ, g), ops in sorted(by_type.items())])
        matrix_blocks(mp, sorted(p2p_types))
        matrix["step%d" % step] = {"collective": mc, "p2p": mp}
        # the step trace, consistent with itself
        comm_us = sum(v["Communication Time Info"]["Elapse Time(ms)"] * 1e3
                      for kk, v in list(coll.items()) + list(p2p.items()) if kk != "Total Op Info")
        comp = 60000.0 + 5000.0 * noise(rank, step, 7)
        over = comm_us * 0.25
        not_over = comm_us - over
        free = STEP_US - comp - not_over - 20000.0 * noise(rank, step, 8)
        free += extra if is_slow else 0
        total = comp + not_over + free
        bubble = sum(v["Communication Time Info"]["Elapse Time(ms)"] * 1e3
                     for kk, v in p2p.items() if kk.startswith("hcom_receive"))
        rows.append("host,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n" % (
            step, comp, not_over, over, comm_us, free, total - bubble, bubble,
            max(not_over - bubble, 0), 1000.0 * noise(rank, step, 9)))
    with open(os.path.join(out, "step_trace_time.csv"), "w") as f:
        f.write(HEAD + "".join(rows))
    with open(os.path.join(out, "communication.json"), "w") as f:
        json.dump(comm, f)
    with open(os.path.join(out, "communication_matrix.json"), "w") as f:
        json.dump(matrix, f)


def raw_ranks(top, n, template=None):
    """Rank directories of raw data: copies of the golden input, or of
    `template`'s FRAMEWORK/ (a larger profile, for the benchmark)."""
    golden_dir = None
    if not template:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "golden"))
        import make_golden_input as golden  # noqa: E402
        template = golden_dir = os.path.join(top, ".golden_template")
        golden.main(template)
    for rank in range(n):
        d = os.path.join(top, "node%d" % (rank // PER_NODE),
                         "w%d_20260101000000%04d_ascend_pt" % (rank, rank % 10000))
        if golden_dir:
            shutil.copytree(template, d)
            os.rename(os.path.join(d, "profiler_info.json"),
                      os.path.join(d, "profiler_info_%d.json" % rank))
        else:
            shutil.copytree(os.path.join(template, "FRAMEWORK"), os.path.join(d, "FRAMEWORK"))
            with open(os.path.join(d, "profiler_info_%d.json" % rank), "w") as f:
                json.dump({"rank_id": rank}, f)
    if golden_dir:
        shutil.rmtree(golden_dir)


def main(argv):
    top, slow, extra = argv[1], int(argv[2]), float(argv[3])
    opts = argv[4:]
    if "--ranks" not in opts:
        four(top, slow, extra, float(opts[0]) if opts else None)
        return
    n = int(opts[opts.index("--ranks") + 1])
    steps = int(opts[opts.index("--steps") + 1]) if "--steps" in opts else 3
    if "--raw" in opts:
        raw_ranks(top, n, opts[opts.index("--template") + 1] if "--template" in opts else None)
        return
    for rank in range(n):
        one_rank(top, rank, n, steps, slow, extra)


if __name__ == "__main__":
    main(sys.argv)
