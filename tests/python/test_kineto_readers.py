"""The torch-2.x ecosystem reads aiprof's Kineto-form trace_view.json as it
reads Kineto's own (issue 25): HTA (HolisticTraceAnalysis) and the
TensorBoard profiler plugin (torch-tb-profiler), on

- a 2-rank gloo DDP run on CPU (ddp_kineto_pair.py), each rank's process
  profiled by aiprof and then by torch.profiler on Kineto, same loop:
  HTA loads both sets of rank traces as ranks [0, 1], its frames hold the
  same (cat, name) counts, and its temporal breakdown, kernel breakdown
  and comm/comp overlap come out the same; the plugin's operator view and
  steps equal those it makes of Kineto's trace and operator_details.csv;
- device traces (tests/e2e/fake_device_profile.c, and the OpenCL example
  when an OpenCL device is there): HTA finds the kernels and its kernel
  breakdown equals kernel_details.csv, the plugin parses the trace.

Skips, with the reason, without HTA, torch-tb-profiler, torch 2.x with
Kineto, or the binaries.  Run under the torch 2.13 venv.
"""
import csv
import glob
import json
import logging
import math
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict

import aiprof
import pytest

pytestmark = pytest.mark.filterwarnings("ignore")  # HTA's and the plugin's pandas deprecations

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(aiprof.__file__)))
BIN = os.path.join(os.path.dirname(PYDIR), "bin")
CLI = os.path.join(BIN, "aiprof")


def _torch2_reason():
    try:
        import torch
        import torch.distributed as dist
    except Exception as e:  # noqa: BLE001 - any import failure is a skip
        return "torch is not importable: %s" % e
    if int(torch.__version__.split(".")[0]) < 2:
        return "torch %s: Kineto's 2.x trace is the anchor" % torch.__version__
    if not torch.profiler.kineto_available():
        return "torch %s was built without Kineto" % torch.__version__
    if not dist.is_available() or not dist.is_gloo_available():
        return "torch.distributed with gloo is not available"
    return None


def _hta():
    pytest.importorskip("hta", reason="HolisticTraceAnalysis is not installed")
    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis
    return TraceAnalysis


def _tb():
    pytest.importorskip("torch_tb_profiler", reason="torch-tb-profiler is not installed")
    from torch_tb_profiler.profiler.data import RunProfileData
    from torch_tb_profiler.profiler.run_generator import RunGenerator

    def load(path):
        with open(path) as f:
            data = RunProfileData.from_json("worker0", "1", json.load(f))
        return data, RunGenerator("worker0", "1", data).generate_run_profile()
    return load


def _output(result_dir, name):
    return os.path.join(result_dir, "ASCEND_PROFILER_OUTPUT", name)


# ---- the DDP pair ----------------------------------------------------------

@pytest.fixture(scope="module")
def ddp(tmp_path_factory):
    reason = _torch2_reason()
    if reason:
        pytest.skip(reason)
    out = str(tmp_path_factory.mktemp("ddp"))
    env = dict(os.environ, PYTHONPATH=PYDIR + os.pathsep + os.environ.get("PYTHONPATH", ""),
               AIPROF_QUIET="1")
    run = subprocess.run([sys.executable, os.path.join(HERE, "ddp_kineto_pair.py"), out],
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    ours, kineto = os.path.join(out, "hta_aiprof"), os.path.join(out, "kineto")
    os.makedirs(ours)
    dirs = {}
    for rank in (0, 1):
        (d,) = glob.glob(os.path.join(out, "aiprof", "rank%d" % rank, "*_ascend_pt"))
        dirs[rank] = d
        shutil.copy(_output(d, "trace_view.json"), os.path.join(ours, "rank%d.pt.trace.json" % rank))
    assert len(glob.glob(os.path.join(kineto, "*.pt.trace.json"))) == 2
    return {"ours": ours, "kineto": kineto, "dirs": dirs}


def _outcome(fn):
    """What an HTA analysis gives: its frames as records, or the error's type
    (on a CPU-only run HTA's GPU analyses fail or come out empty, on
    Kineto's traces as on ours)."""
    try:
        res = fn()
    except Exception as e:  # noqa: BLE001 - compared, not hidden
        return ("error", type(e).__name__)
    frames = res if isinstance(res, tuple) else (res,)
    return tuple(f.to_dict("records") for f in frames)


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def test_hta_loads_ddp_ranks_like_kineto(ddp):
    TraceAnalysis = _hta()
    ours, theirs = TraceAnalysis(trace_dir=ddp["ours"]), TraceAnalysis(trace_dir=ddp["kineto"])
    assert ours.t.get_ranks() == theirs.t.get_ranks() == [0, 1]
    # distributedInfo: torch's own, as its profiler writes it in the same process
    for rank in (0, 1):
        with open(os.path.join(ddp["ours"], "rank%d.pt.trace.json" % rank)) as f:
            info = json.load(f)["distributedInfo"]
        (kin,) = glob.glob(os.path.join(ddp["kineto"], "rank%d.*.pt.trace.json" % rank))
        with open(kin) as f:
            assert info == json.load(f)["distributedInfo"]
        assert info["rank"] == rank and info["world_size"] == 2 and info["backend"] == "gloo"

    def counts(ta, rank):
        sym = ta.t.symbol_table.get_sym_table()
        df = ta.t.get_trace(rank)
        return Counter((sym[c], sym[n]) for c, n in zip(df["cat"], df["name"])
                       if sym[c] != "communication")  # our Communication layer: not Kineto's
    for rank in (0, 1):
        assert counts(ours, rank) == counts(theirs, rank)
    for analysis in ("get_temporal_breakdown", "get_gpu_kernel_breakdown",
                     "get_comm_comp_overlap"):
        a = _outcome(lambda: getattr(ours, analysis)(visualize=False))
        b = _outcome(lambda: getattr(theirs, analysis)(visualize=False))
        assert _same(a, b), (analysis, a, b)


def _folded(events):
    """Per name, the cpu_ops the plugin folds into a parent of the same name
    whose only child they are (its op tree's rule, also key_averages')."""
    ops = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"),
                 key=lambda e: (e["pid"], e["tid"], e["ts"], -e["dur"]))
    children = defaultdict(list)
    stack = []
    for e in ops:
        while stack and (stack[-1]["tid"] != e["tid"] or stack[-1]["pid"] != e["pid"] or
                         e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]):
            stack.pop()
        if stack:
            children[id(stack[-1])].append(e)
        stack.append(e)
    n = Counter()
    for e in ops:
        kids = children.get(id(e), [])
        if len(kids) == 1 and kids[0]["name"] == e["name"]:
            n[e["name"]] += 1
    return n


def _operator_rows(result_dir):
    with open(_output(result_dir, "operator_details.csv"), newline="") as f:
        return Counter(r["Name"] for r in csv.DictReader(f))


def test_tb_plugin_reads_ddp_trace_like_kineto(ddp):
    load = _tb()
    (kin,) = glob.glob(os.path.join(ddp["kineto"], "rank0*.pt.trace.json"))
    ours_path = os.path.join(ddp["ours"], "rank0.pt.trace.json")
    ours, ours_run = load(ours_path)
    theirs, _ = load(kin)
    calls = {o.name: o.calls for o in ours.op_list_groupby_name}
    assert calls == {o.name: o.calls for o in theirs.op_list_groupby_name}
    assert ours.steps_names == theirs.steps_names == ["2", "3", "4"]
    assert ours_run.overview["steps"]["rows"]
    # the operator view is operator_details.csv's ops (its record_function
    # scopes, user_annotation in the trace, are rows there as in torch_npu's
    # op tree, not in the plugin's view), less what the plugin folds
    with open(ours_path) as f:
        events = json.load(f)["traceEvents"]
    folded = _folded(events)
    ops = {e["name"] for e in events if e.get("cat") == "cpu_op"}
    rows = _operator_rows(ddp["dirs"][0])
    assert calls == {n: c - folded[n] for n, c in rows.items() if n in ops and c - folded[n]}


# ---- device traces ---------------------------------------------------------

def _kernel_durations(result_dir):
    with open(_output(result_dir, "kernel_details.csv"), newline="") as f:
        out = defaultdict(list)
        for r in csv.DictReader(f):
            out[r["Name"]].append(float(r["Duration(us)"]))
    return out


def _check_device_trace(result_dir, tmp_path):
    TraceAnalysis, load = _hta(), _tb()
    hdir = tmp_path / "hta"
    hdir.mkdir()
    shutil.copy(_output(result_dir, "trace_view.json"), hdir / "rank0.pt.trace.json")
    ta = TraceAnalysis(trace_dir=str(hdir), include_last_profiler_step=True)
    assert ta.t.get_ranks() == [0]
    _, by_name = ta.get_gpu_kernel_breakdown(visualize=False)
    want = _kernel_durations(result_dir)
    got = {r["name"]: r for r in by_name.to_dict("records")}
    assert set(got) == set(want)
    for name, durs in want.items():
        # HTA rounds each event's ts and end to whole µs
        assert abs(got[name]["sum (us)"] - sum(durs)) <= 2 * len(durs), (name, got[name], durs)
    data, run = load(str(hdir / "rank0.pt.trace.json"))
    assert data.has_kernel
    calls = {o.name: o.calls for o in data.op_list_groupby_name}
    with open(hdir / "rank0.pt.trace.json") as f:
        folded = _folded(json.load(f)["traceEvents"])
    rows = _operator_rows(result_dir)
    assert calls == {n: c - folded[n] for n, c in rows.items() if c - folded[n]}
    assert run.overview["steps"]["rows"]


def test_readers_on_fake_device_trace(tmp_path):
    fake = os.path.join(BIN, "fake_device_profile")
    if not os.path.exists(fake):
        pytest.skip("fake_device_profile was not built")
    out = subprocess.run([fake, str(tmp_path), "3"], capture_output=True, text=True, check=True)
    d = out.stdout.strip()
    subprocess.run([CLI, "analyse", "--trace-format", "kineto", d], check=True,
                   capture_output=True)
    _check_device_trace(d, tmp_path)


def test_readers_on_opencl_example(tmp_path):
    example = os.path.join(BIN, "opencl_inference")
    if not os.path.exists(example):
        pytest.skip("opencl_inference was not built (no OpenCL headers or library)")
    run = subprocess.run([example, "--steps", "8", "--dir", str(tmp_path / "r")],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, AIPROF_QUIET="1"))
    if run.returncode != 0 and "platform" in (run.stderr + run.stdout).lower():
        pytest.skip("no OpenCL platform: " + run.stderr.strip()[-200:])
    assert run.returncode == 0, run.stderr[-2000:]
    (d,) = glob.glob(str(tmp_path / "r" / "*_ascend_pt"))
    subprocess.run([CLI, "analyse", "--trace-format", "kineto", d], check=True,
                   capture_output=True)
    _check_device_trace(d, tmp_path)


def test_hta_loads_mpi_ranks(tmp_path):
    """`mpirun -np 4 aiprof run --trace-format kineto -- mpi_train_plain`:
    each rank's Kineto-form
    trace carries distributedInfo derived from the recorded MPI groups (no
    torch here), so HTA loads the four as ranks [0..3]."""
    TraceAnalysis = _hta()
    prog = os.path.join(BIN, "mpi_train_plain")
    mpirun = shutil.which("mpirun")
    if not (os.path.exists(prog) and mpirun):
        pytest.skip("mpi_train_plain was not built or mpirun is missing")
    env = dict(os.environ, AIPROF_QUIET="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    run = subprocess.run([mpirun, "-np", "4", "--oversubscribe", CLI, "run", "--trace-format",
                          "kineto", "--dir", str(tmp_path / "r"), "--", prog, "--steps", "3",
                          "--params", "1000",
                          "--ring", "2", "--compute-ms", "1"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    dirs = sorted(glob.glob(str(tmp_path / "r" / "*_ascend_pt")))
    assert len(dirs) == 4
    hdir = tmp_path / "hta"
    hdir.mkdir()
    ranks = []
    for i, d in enumerate(dirs):
        shutil.copy(_output(d, "trace_view.json"), hdir / ("t%d.json" % i))
        with open(hdir / ("t%d.json" % i)) as f:
            info = json.load(f)["distributedInfo"]
        assert info["backend"] == "mpi" and info["world_size"] == 4
        assert info["pg_config"][0] == {"pg_name": "MPI_COMM_WORLD", "pg_size": 4,
                                        "ranks": [0, 1, 2, 3]}
        ranks.append(info["rank"])
    assert sorted(ranks) == [0, 1, 2, 3]
    assert TraceAnalysis(trace_dir=str(hdir)).t.get_ranks() == [0, 1, 2, 3]
