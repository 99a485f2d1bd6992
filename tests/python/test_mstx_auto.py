"""mstx's automatic ranges (docs/PYTHON.md "mstx's automatic ranges"): with
mstx on, each DataLoader fetch is a range "dataloader" and each torch.save a
range "save_checkpoint" in the domain "default", and each torch.distributed
call a range in "communication" whose message is torch_npu's JSON text; in
trace_view.json and in the db's PYTORCH_API (type mstx), counted exactly,
subject to mstx_domain_include/_exclude; with mstx off nothing is added and
nothing is wrapped.  The 2-rank gloo runs go through both places that add
communication ranges: the PyTorch adapter (collectives, CPU activity on)
and the Python wrappers (point-to-point always, collectives without CPU
activity).
"""
import glob
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from conftest import needs_torch, result_dirs, trace_events, trace_of

pytestmark = needs_torch


def _mstx_ranges(d):
    """[(message, domain)] of the mstx ranges in trace_view.json, in start
    order: slices on the thread's track where a range began and ended on one
    thread, async b/e pairs where it ended on another (every one must have
    its end)."""
    ev = trace_events(trace_of(d))
    begins = {e["id"]: e for e in ev if e.get("cat") == "mstx" and e.get("ph") == "b"}
    ends = {e["id"]: e for e in ev if e.get("cat") == "mstx" and e.get("ph") == "e"}
    assert set(begins) == set(ends), "a range without its end"
    for i, b in begins.items():
        assert ends[i]["name"] == b["name"] and ends[i]["ts"] >= b["ts"]
        assert ends[i]["tid"] != b["tid"], "a one-thread range as an async pair"
    slices = [e for e in ev if e.get("cat") == "mstx" and e.get("ph") == "X"]
    return [(b["name"], b["args"]["domain"])
            for b in sorted(list(begins.values()) + slices, key=lambda e: float(e["ts"]))]


def _db_ranges(d):
    """The mstx rows of the db's PYTORCH_API: [message] in start order."""
    db = glob.glob(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler*.db"))
    assert len(db) == 1, db
    with sqlite3.connect(db[0]) as c:
        rows = c.execute("SELECT s.value, p.startNs, p.endNs FROM PYTORCH_API p JOIN STRING_IDS s "
                         "ON p.name = s.id JOIN ENUM_API_TYPE t ON p.type = t.id "
                         "WHERE t.name = 'mstx' ORDER BY p.startNs").fetchall()
    assert all(end >= start for _, start, end in rows)
    return [r[0] for r in rows]


class _Data:
    """6 items, batches of 2: 3 batches an epoch."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        import torch
        return torch.full((2,), float(i))


def _profile(mstx=True, **exp):
    import aiprof.profiler as P
    return P.profile(activities=[P.ProfilerActivity.CPU],
                     experimental_config=P._ExperimentalConfig(mstx=mstx, **exp),
                     on_trace_ready=P.tensorboard_trace_handler("./out"))


def _originals():
    import torch
    return (torch.utils.data.dataloader._BaseDataLoaderIter.__dict__["__next__"], torch.save,
            torch.serialization.save)


# torch.save's failure is a C++ exception (c10::Error) thrown in libtorch;
# under a preloaded ASan runtime, whose __cxa_throw interceptor was never
# resolved (libstdc++ comes after it), any C++ throw aborts the process
# (test_distributed.py says the same of gloo).  The normal run covers it.
_CXX_THROW_OK = "libasan" not in os.environ.get("LD_PRELOAD", "")


def _work(tmp_path, workers):
    """3 batches, one torch.save of a model, one torch.save that fails
    (not under a preloaded ASan: _CXX_THROW_OK)."""
    import torch
    from torch.utils.data import DataLoader
    got = [b.tolist() for b in DataLoader(_Data(), batch_size=2, num_workers=workers)]
    assert got == [[[0.0, 0.0], [1.0, 1.0]], [[2.0, 2.0], [3.0, 3.0]], [[4.0, 4.0], [5.0, 5.0]]]
    model = torch.nn.Linear(3, 2)
    assert torch.save(model, str(tmp_path / "model.pt")) is None
    assert isinstance(torch.load(str(tmp_path / "model.pt"), weights_only=False), torch.nn.Linear)
    if _CXX_THROW_OK:
        with pytest.raises((FileNotFoundError, RuntimeError)):   # the program's error, unchanged
            torch.save(model.state_dict(), str(tmp_path / "no" / "such" / "dir.pt"))


@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_and_save_ranges(tmp_path, workers):
    before = _originals()
    with _profile():
        assert _originals() != before      # wrapped while the trace records
        _work(tmp_path, workers)
    assert _originals() == before          # and given back at stop
    (d,) = result_dirs("./out")
    # 3 batches and the call that finds the epoch over; 2 saves (one failed)
    want = [("dataloader", "default")] * 4 + [("save_checkpoint", "default")] * (
        2 if _CXX_THROW_OK else 1)
    assert _mstx_ranges(d) == want
    assert _db_ranges(d) == [m for m, _ in want]


def test_mstx_off_adds_and_wraps_nothing(tmp_path):
    before = _originals()
    with _profile(mstx=False):
        assert _originals() == before
        _work(tmp_path, 0)
    assert _originals() == before
    (d,) = result_dirs("./out")
    assert _mstx_ranges(d) == []
    assert _db_ranges(d) == []


@pytest.mark.parametrize("exp", [{"mstx_domain_exclude": ["default"]},
                                 {"mstx_domain_include": ["mine"]}])
def test_domain_filter(tmp_path, exp):
    import aiprof
    with _profile(**exp):
        _work(tmp_path, 0)
        rid = aiprof.mstx.range_start("own", domain="mine")
        aiprof.mstx.range_end(rid, domain="mine")
    (d,) = result_dirs("./out")
    assert _mstx_ranges(d) == [("own", "mine")]


def test_only_while_recording(tmp_path):
    """Wait and warmup steps wrap nothing; the active one does."""
    import torch

    import aiprof.profiler as P
    before = _originals()
    seen = []
    with P.profile(activities=[P.ProfilerActivity.CPU],
                   schedule=P.schedule(wait=1, warmup=1, active=1, repeat=1),
                   experimental_config=P._ExperimentalConfig(mstx=True),
                   on_trace_ready=P.tensorboard_trace_handler("./out")) as prof:
        for step in range(4):
            seen.append(_originals() != before)
            torch.save(step, str(tmp_path / f"{step}.pt"))
            prof.step()
    assert seen == [False, False, True, False]
    assert _originals() == before
    (d,) = result_dirs("./out")
    assert _mstx_ranges(d) == [("save_checkpoint", "default")]


# ---- torch.distributed: 2 gloo ranks ----------------------------------------

def _gloo():
    try:
        import torch.distributed as dist
        return dist.is_available() and dist.is_gloo_available()
    except ImportError:
        return False


_SCRIPT = r'''
import json, os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
import aiprof.profiler as P

def run(rank, out, port, cpu, exclude):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    pair = dist.new_group([0, 1])
    acts = [P.ProfilerActivity.CPU] if cpu else [P.ProfilerActivity.NPU]
    exp = P._ExperimentalConfig(mstx=True, mstx_domain_exclude=exclude or None)
    with P.profile(activities=acts, experimental_config=exp,
                   on_trace_ready=P.tensorboard_trace_handler(out)):
        t = torch.arange(6, dtype=torch.float64)
        dist.all_reduce(t, group=pair)
        assert t.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        w = dist.all_reduce(torch.ones(3, dtype=torch.int32), async_op=True)
        w.wait()
        b = torch.full((4,), float(rank), dtype=torch.float16)
        dist.broadcast(b, src=1)
        assert b.tolist() == [1.0] * 4
        if rank == 0:
            dist.send(torch.ones(5, dtype=torch.int64), dst=1)
            r = dist.irecv(torch.zeros(2, dtype=torch.bfloat16), src=1)
            r.wait()
        else:
            assert dist.recv(torch.zeros(5, dtype=torch.int64)) == 0   # any source
            dist.isend(torch.ones(2, dtype=torch.bfloat16), dst=0).wait()
        dist.barrier()
        try:
            dist.broadcast(torch.ones(1), src=5)    # no rank 5: torch's error, unchanged
        except (RuntimeError, ValueError) as e:
            print("error passed through:", type(e).__name__, file=sys.stderr)
        else:
            raise SystemExit("no error for src=5")
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(run, args=(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "cpu",
                        sys.argv[4:]), nprocs=2)
'''


def _port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_ranks(tmp_path, cpu, exclude=()):
    script = tmp_path / "calls.py"
    script.write_text(_SCRIPT)
    out = tmp_path / "out"
    env = dict(os.environ, AIPROF_QUIET="1")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.path.dirname(os.path.dirname(__import__("aiprof").__file__)),
                    env.get("PYTHONPATH")] if p)
    proc = subprocess.run([sys.executable, str(script), str(out), str(_port()),
                           "cpu" if cpu else "npu", *exclude], env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("error passed through") == 2, proc.stderr[-3000:]
    ranks = {}
    for d in result_dirs(str(out)):
        (info,) = [f for f in os.listdir(d) if f.startswith("profiler_info_")]
        ranks[int(info[len("profiler_info_"):-len(".json")])] = d
    assert sorted(ranks) == [0, 1]
    return ranks


def _msg(count, dtype, group, op, src=None, dst=None):
    m = {"streamId": "N/A", "count": str(count), "dataType": dtype}
    if src is not None:
        m["srcRank"] = src
    if dst is not None:
        m["destRank"] = dst
    m.update(groupName=group, opName=op)
    return m


def _want(rank):
    # the groups as torch names them: "0" the default one, "1" the pair
    want = [_msg(6, "fp64", "1", "HcclAllreduce"), _msg(3, "int32", "0", "HcclAllreduce"),
            _msg(4, "fp16", "0", "HcclBroadcast")]
    if rank == 0:
        want += [_msg(5, "int64", "0", "HcclSend", dst="1"),
                 _msg(2, "bfp16", "0", "HcclRecv", src="1")]
    else:   # recv from any source: the sender is known only after the call
        want += [_msg(5, "int64", "0", "HcclRecv", src="N/A"),
                 _msg(2, "bfp16", "0", "HcclSend", dst="0")]
    return want + [_msg(0, "na", "0", "HcclBarrier"), _msg(1, "fp32", "0", "HcclBroadcast")]


needs_gloo = pytest.mark.skipif(
    not _gloo() or "libasan" in os.environ.get("LD_PRELOAD", ""),
    # as in test_distributed.py: gloo's exceptions abort under a preloaded ASan
    reason="torch.distributed with gloo unavailable, or ASan preloaded")


@needs_gloo
@pytest.mark.parametrize("cpu", [True, False], ids=["adapter", "python_wrappers"])
def test_communication_ranges(tmp_path, cpu):
    for rank, d in _run_ranks(tmp_path, cpu).items():
        ranges = _mstx_ranges(d)
        assert all(dom == "communication" for _, dom in ranges), ranges
        # the seed's text, keys in its order: streamId, count, dataType,
        # [srcRank], [destRank], groupName, opName
        got = [json.loads(m) for m, _ in ranges]
        assert [list(g) for g in got] == [list(w) for w in _want(rank)]
        assert got == _want(rank)
        assert ranges[0][0] == ('{"streamId": "N/A","count": "6","dataType": "fp64",'
                                '"groupName": "1","opName": "HcclAllreduce"}')
        assert _db_ranges(d) == [m for m, _ in ranges]


@needs_gloo
def test_communication_domain_excluded(tmp_path):
    for d in _run_ranks(tmp_path, True, ["communication"]).values():
        assert _mstx_ranges(d) == []
        assert _db_ranges(d) == []


# ---- the summary, aiprof run, dynamic profiling ----------------------------

CLI = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__import__("aiprof").__file__)))), "bin", "aiprof")


def _summary_rows(d):
    """{(domain, message): count} from `aiprof summary`'s mstx ranges table."""
    out = subprocess.run([CLI, "summary", d], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    lines = out.split("\n")
    head = next(i for i, x in enumerate(lines) if x.startswith("mstx ranges:"))
    rows = {}
    for line in lines[head + 2:]:
        if not line.strip():
            break
        total, count, avg, mx, domain, message = line.split(None, 5)
        assert float(mx) <= float(total) and float(avg) <= float(mx)
        rows[(domain, message)] = int(count)
    return lines[head], rows


@pytest.mark.skipif(not os.path.exists(CLI), reason="the aiprof CLI is not built")
def test_summary_counts_the_ranges(tmp_path):
    import aiprof
    with _profile():
        _work(tmp_path, 0)
        with aiprof.profiler.record_function("step"):   # an op, not an mstx range
            aiprof.mstx.mark("here")
    (d,) = result_dirs("./out")
    head, rows = _summary_rows(d)
    saves = 2 if _CXX_THROW_OK else 1
    assert head.startswith("mstx ranges: %d in 2 (domain, message) groups, 1 mark(s), 0 start"
                           % (4 + saves))
    assert rows == {("default", "dataloader"): 4, ("default", "save_checkpoint"): saves}
    subprocess.run([CLI, "summary", d, "--html", "s.html", "--no-text"], check=True,
                   capture_output=True, timeout=60)
    page = open("s.html", encoding="utf-8").read()
    table = page[page.index('<table id="mstx-ranges">'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 3 and "save_checkpoint" in table and "dataloader" in table


_RUN_SCRIPT = r'''
import torch
from torch.utils.data import DataLoader, TensorDataset
for (b,) in DataLoader(TensorDataset(torch.arange(6.0)), batch_size=3):
    pass
torch.save({"w": torch.ones(2)}, "ckpt.pt")
print("done")
'''


@needs_torch
@pytest.mark.skipif(not os.path.exists(CLI), reason="the aiprof CLI is not built")
@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="aiprof run puts its library first in LD_PRELOAD, which a "
                           "preloaded ASan refuses (the normal run covers it)")
@pytest.mark.parametrize("no_mstx", [False, True])
def test_aiprof_run(tmp_path, no_mstx):
    """`aiprof run` records mstx unless --no-mstx: the automatic ranges too."""
    script = tmp_path / "prog.py"
    script.write_text(_RUN_SCRIPT)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.path.dirname(os.path.dirname(__import__("aiprof").__file__)),
                    env.get("PYTHONPATH")] if p)
    env.pop("AIPROF_QUIET", None)
    proc = subprocess.run([CLI, "run", "--dir", str(tmp_path / "run"),
                           *(["--no-mstx"] if no_mstx else []), "--", sys.executable,
                           str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stderr[-3000:]
    (d,) = result_dirs(str(tmp_path / "run"))
    want = [] if no_mstx else [("dataloader", "default")] * 3 + [("save_checkpoint", "default")]
    assert _mstx_ranges(d) == want


def test_dynamic_profile_config(tmp_path):
    """profiler_config.json's experimental_config.mstx reaches the collectors."""
    from conftest import run_python
    for mstx in (True, False):
        with open(f"cfg_{mstx}.json", "w") as f:
            json.dump({"activities": ["CPU"], "prof_dir": f"./dp_{mstx}", "analyse": True,
                       "active": 1, "warmup": 0, "start_step": 0,
                       "experimental_config": {"mstx": mstx}}, f)
        run_python(f"""if True:
            import torch
            from aiprof.profiler import dynamic_profile as dp
            dp.init("profiler_config_path")
            for step in range(4):
                if step == 1:
                    dp.start("cfg_{mstx}.json")
                torch.save(step, "s.pt")
                dp.step()
        """, env={"AIPROF_DP_POLL_MS": "50"})
        (d,) = result_dirs(f"./dp_{mstx}")
        assert _mstx_ranges(d) == ([("save_checkpoint", "default")] if mstx else [])


def _spans(d):
    """[(ph, name, domain)] of the mstx events in trace_view.json, in order."""
    ev = trace_events(trace_of(d))
    return sorted((e["ph"], e["name"], e.get("args", {}).get("domain"))
                  for e in ev if e.get("cat") == "mstx")


def test_torch_itt_recorded_as_mstx():
    # torch.profiler.itt's calls go to ITT (VTune) as before and, while a
    # trace records with mstx on, become mstx ranges/marks in domain "itt";
    # they return what torch returns (None in torch 2.13); with mstx off
    # they are not wrapped.
    import torch
    itt = torch.profiler.itt
    if not itt.is_available():
        pytest.skip(f"torch {torch.__version__} was built without ITT")
    originals = (itt.range_push, itt.range_pop, itt.mark)
    with _profile():
        want = [originals[0]("probe"), originals[1]()]
        assert [itt.range_push("outer")] == want[:1]
        with itt.range("inner {}", 1):
            itt.mark("tick")
        assert [itt.range_pop()] == want[1:]
    assert (itt.range_push, itt.range_pop, itt.mark) == originals
    [d] = result_dirs("./out")
    assert _spans(d) == [("X", "inner 1", "itt"), ("X", "outer", "itt"), ("i", "tick", "itt")]
    with _profile(mstx=False):
        assert itt.range_push is originals[0]
        itt.range_push("off")
        itt.range_pop()
    d = [r for r in result_dirs("./out") if r not in (d,)][0]
    assert _spans(d) == []
