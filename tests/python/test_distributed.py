"""torch.distributed under aiprof.profiler: the 2-rank gloo DDP example
(examples/python/ddp_gloo.py) and explicit collectives / point-to-point
calls recorded as communication operations (groups with global ranks,
bytes, dtype, peers, sequences alike on both ranks), parallel_group_info in
profiler_metadata.json, one profiler_info_{rank}.json per rank.  The
communication is read back with build/bin/dump_comm (the analyser's
loader).  Skipped without torch.distributed or gloo.
"""
import json
import os
import socket
import subprocess
import sys

import pytest

from conftest import EXAMPLES, needs_torch, result_dirs

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__import__("aiprof").__file__)))
DUMP = os.path.join(os.path.dirname(PYDIR), "bin", "dump_comm")


def _gloo():
    try:
        import torch.distributed as dist
        return dist.is_available() and dist.is_gloo_available()
    except ImportError:
        return False


pytestmark = [needs_torch,
              pytest.mark.skipif(not _gloo(), reason="torch.distributed with gloo unavailable"),
              pytest.mark.skipif(not os.path.exists(DUMP), reason="dump_comm not built"),
              # The ranks are child processes that inherit the preloaded ASan
              # runtime; gloo throws C++ exceptions on its threads, and ASan's
              # __cxa_throw interceptor, unresolved when the runtime is
              # preloaded into a Python that loads libstdc++ later, aborts
              # (a CHECK in asan_interceptors.cpp).  The normal run covers it.
              pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                                 reason="gloo's exceptions abort under a preloaded ASan")]


def _cpp_collectives():
    """The adapter records collectives from c10d's ops (DDP's buckets
    included): each from its launch to its Work's completion, flagged
    non-blocking; else the Python wrappers do."""
    import torch  # noqa: F401  (the adapter loads after torch)
    from aiprof.profiler import _distributed
    return bool(_distributed._adapter())


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env():
    env = dict(os.environ, AIPROF_QUIET="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in [PYDIR, env.get("PYTHONPATH")] if p)
    return env


def _dump(d):
    out = subprocess.run([DUMP, d], capture_output=True, text=True, check=True).stdout
    groups, ops = {}, []
    for line in out.splitlines():
        kind, *fields = line.split("\t")
        f = dict(x.split("=", 1) for x in fields)
        if kind == "group":
            groups[int(f["id"])] = f
        elif kind == "op":
            ops.append(f)
    return groups, ops


def _by_rank(base):
    dirs = result_dirs(str(base))
    ranks = {}
    for d in dirs:
        infos = [f for f in os.listdir(d) if f.startswith("profiler_info_")]
        assert len(infos) == 1, (d, infos)
        ranks[int(infos[0][len("profiler_info_"):-len(".json")])] = d
    return ranks


def test_ddp_gloo_example(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, "ddp_gloo.py"), "--dir",
                           str(out), "--steps", "5", "--port", str(_port())], env=_env(),
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = _by_rank(out)
    assert sorted(ranks) == [0, 1]
    per_rank = {}
    for r, d in ranks.items():
        with open(os.path.join(d, "profiler_metadata.json")) as f:
            meta = json.load(f)
        assert meta["parallel_group_info"] == {
            "0": {"group_name": "default_group", "group_rank": r, "global_ranks": [0, 1]}}
        groups, ops = _dump(d)
        assert [(g["name"], g["ranks"], int(g["my_rank"])) for g in groups.values()] == \
            [("0", "0,1", r)]
        # 2 recorded steps (wait=1, warmup=1, active=2), each: DDP's gradient bucket
        # (all 9610 parameters of the model, float32; recorded from C++ only), the loss
        # all_reduce and the learning-rate broadcast, on the default group, in order.
        got = [(o["name"], int(o["kind"]), int(o["lib"]), int(o["bytes"]), int(o["count"]),
                o["dtype"], int(o["root"]), int(o["seq"]), int(o["nb"])) for o in ops]
        cpp = _cpp_collectives()
        step = ([("all_reduce", 1, 2, 9610 * 4, 9610, "float32", -1, 1)] if cpp else []) + \
            [("all_reduce", 1, 2, 4, 1, "float32", -1, int(cpp)),
             ("broadcast", 1, 2, 4, 1, "float32", 0, int(cpp))]
        want = [op[:7] + (seq, op[7]) for seq, op in enumerate(step + step)]
        assert got == want, got
        per_rank[r] = got
        _check_comm_outputs(d, want)
    assert per_rank[0] == per_rank[1]


def _label(group):
    """A group's name in the communication outputs: msprof-analyze's
    double_hash of its parallel_group_info key (how CANN names groups and
    how msprof-analyze maps them back to group_id / pg_name)."""
    a = b = 0
    for c in group:
        a = (a * 29 + ord(c)) & 0xFFFFFFFF
        b = (b * 131 + ord(c)) & 0xFFFFFFFF
    return str(a << 32 | b)


def _us_ns(text):
    a, b = text.split(".")
    return int(a) * 1000 + int(b)


def _check_comm_outputs(d, want):
    """The rank's communication outputs (docs/COMMUNICATION.md): every op in
    communication.json under its name on the default group ("0") with its
    bytes, self links in the matrix, and step_trace_time's identities."""
    out = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
    with open(os.path.join(out, "communication.json")) as f:
        comm = json.load(f)
    names = {"all_reduce": "allReduce", "broadcast": "broadcast"}
    expect = {f"hcom_{names[o[0]]}__{o[7]}_0_1@{_label('0')}": o[3] for o in want}
    got = {}
    for step, classes in comm.items():
        assert step.startswith("step") and set(classes) == {"collective", "p2p"}
        assert classes["p2p"] == {}
        for key, o in classes["collective"].items():
            if key != "Total Op Info":
                got[key] = round(o["Communication Bandwidth Info"]["SDMA"]
                                 ["Transit Size(MB)"] * 1048576)
    assert got == expect
    with open(os.path.join(out, "communication_matrix.json")) as f:
        matrix = json.load(f)
    rank = int(json.load(open(os.path.join(d, "profiler_metadata.json")))
               ["parallel_group_info"]["0"]["group_rank"])
    for classes in matrix.values():
        for entry in classes["collective"].values():
            assert f"{rank}-{rank}" in entry
    with open(os.path.join(out, "step_trace_time.csv"), newline="") as f:
        lines = [x for x in f.read().split("\r\n") if x]
    head = lines[0].split(",")
    for line in lines[1:]:
        v = dict(zip(head, line.split(",")))
        n = {k: _us_ns(x) for k, x in v.items() if k not in ("Device_id", "Step")}
        assert n["Computing"] + n["Communication(Not Overlapped)"] + n["Free"] == \
            n["Stage"] + n["Bubble"], v
        assert n["Communication"] == n["Overlapped"] + n["Communication(Not Overlapped)"], v
        assert n["Communication"] > 0, v


_SCRIPT = r'''
import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
import aiprof.profiler as P

def run(rank, out, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    solo = dist.new_group([1])          # rank 0 is not a member
    pair = dist.new_group([0, 1])
    with P.profile(activities=[P.ProfilerActivity.CPU],
                   experimental_config=P._ExperimentalConfig(profiler_level=P.ProfilerLevel.Level1),
                   on_trace_ready=P.tensorboard_trace_handler(out)):
        t = torch.arange(6, dtype=torch.float64)
        dist.all_reduce(t, group=pair)
        w = dist.all_reduce(torch.ones(3, dtype=torch.int32), async_op=True)
        w.wait()
        dist.all_gather([torch.zeros(2), torch.zeros(2)], torch.ones(2))
        dist.reduce_scatter(torch.zeros(3), [torch.ones(3), torch.ones(3)]) \
            if dist.get_backend() != "gloo" else dist.barrier()
        if rank == 0:
            dist.send(torch.ones(5, dtype=torch.int64), dst=1, tag=7)
            r = dist.irecv(torch.zeros(4), src=1, tag=8)
            r.wait()
        else:
            dist.recv(torch.zeros(5, dtype=torch.int64), tag=7)   # any source
            dist.isend(torch.ones(4), dst=0, tag=8).wait()
            dist.all_reduce(torch.ones(1), group=solo)
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(run, args=(sys.argv[1], int(sys.argv[2])), nprocs=2)
'''


def test_collectives_and_point_to_point(tmp_path):
    script = tmp_path / "calls.py"
    script.write_text(_SCRIPT)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(script), str(out), str(_port())], env=_env(),
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = _by_rank(out)
    assert sorted(ranks) == [0, 1]
    for r, d in ranks.items():
        with open(os.path.join(d, "profiler_metadata.json")) as f:
            pgi = json.load(f)["parallel_group_info"]
        # every group this rank is in, with its place there
        want = {"0": {"group_name": "default_group", "group_rank": r, "global_ranks": [0, 1]}}
        if r == 1:
            want["1"] = {"group_name": "1", "group_rank": 0, "global_ranks": [1]}
        want["2"] = {"group_name": "2", "group_rank": r, "global_ranks": [0, 1]}
        assert pgi == want, pgi
        groups, ops = _dump(d)
        names = {gid: g["name"] for gid, g in groups.items()}
        got = [(o["name"], names[int(o["group"])], int(o["kind"]), int(o["bytes"]),
                int(o["count"]), o["dtype"], int(o["peer"]), int(o["tag"]), int(o["nb"]),
                int(o["seq"])) for o in ops]
        cpp = int(_cpp_collectives())
        want_ops = [("all_reduce", "2", 1, 48, 6, "float64", -1, -1, cpp, 0),
                    ("all_reduce", "0", 1, 12, 3, "int32", -1, -1, 1, 0),
                    ("all_gather", "0", 1, 8, 2, "float32", -1, -1, cpp, 1),
                    ("barrier", "0", 1, 0, 0, "", -1, -1, cpp, 2)]
        if r == 0:
            want_ops += [("send", "0", 2, 40, 5, "int64", 1, 7, 0, 0),
                         ("irecv", "0", 3, 16, 4, "float32", 1, 8, 1, 0)]
        else:
            want_ops += [("recv", "0", 3, 40, 5, "int64", 0, 7, 0, 0),
                         ("isend", "0", 2, 16, 4, "float32", 0, 8, 1, 0),
                         ("all_reduce", "1", 1, 4, 1, "float32", -1, -1, cpp, 0)]
        assert got == want_ops, got
        for o in ops:
            assert int(o["end"]) >= int(o["start"])
        # communication.json: one key per op, named as docs/COMMUNICATION.md says
        # (a collective by its group's sequence, a p2p op by its peer's group rank)
        with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication.json")) as f:
            comm = json.load(f)
        keys = {cls: {k: round(v["Communication Bandwidth Info"]["SDMA"]["Transit Size(MB)"]
                               * 1048576)
                      for k, v in ops_.items() if k != "Total Op Info"}
                for step in comm.values() for cls, ops_ in step.items()}
        g0, g1, g2 = _label("0"), _label("1"), _label("2")
        coll = {f"hcom_allReduce__0_0_1@{g2}": 48, f"hcom_allReduce__0_0_1@{g0}": 12,
                f"hcom_allGather__1_0_1@{g0}": 8, f"hcom_barrier__2_0_1@{g0}": 0}
        if r == 1:
            coll[f"hcom_allReduce__0_0_1@{g1}"] = 4
        p2p = {f"hcom_send__0_1_1@{g0}": 40, f"hcom_receive__0_1_1@{g0}": 16} if r == 0 else \
            {f"hcom_receive__0_0_1@{g0}": 40, f"hcom_send__0_0_1@{g0}": 16}
        assert keys == {"collective": coll, "p2p": p2p}, keys
