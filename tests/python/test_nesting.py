"""Slices nest on every thread track, in every mode (docs/ANALYSIS.md
"Nesting"), counted by tests/e2e/check_nesting.py: with_stack around
torch.profiler.record_function, aiprof's record_function and the optimizer's
zero_grad/step ranges, nn.Module tracking, 8 threads that were running when
the trace started, back-to-back traces.  Also: Python calls replayed at a
thread's first call begin no later than the ranges it opened before it, and
ranges that began before a trace end in it without a "pops/ends had no
matching push/begin" warning.

Each profile runs in a fresh interpreter (threads, tracer state)."""
import collections
import os
import sys

import pytest

from conftest import ROOT, needs_torch, result_dirs, run_python

sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import check_nesting  # noqa: E402
import speedscope_port  # noqa: E402

_MLP = """
import os, sys, threading, time, warnings
import torch
import aiprof
from aiprof import profiler as P
warnings.simplefilter("ignore")
torch.set_num_threads(1)
x = torch.randn(16, 32)
y = torch.randn(16, 8)
def make():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    return m, torch.optim.SGD(m.parameters(), lr=0.01)
def train_step(i, model, opt):
    with torch.profiler.record_function("fwd#%d" % i):
        loss = torch.nn.functional.mse_loss(model(x), y)
    with P.record_function("bwd"):
        opt.zero_grad()
        loss.backward()
    opt.step()
"""


def _all_results(base):
    dirs = result_dirs(base)
    assert dirs
    return dirs


def _overlaps(result_dir):
    events = check_nesting.load_events(result_dir)
    pairs, found, unmatched = check_nesting.count_overlaps(events)
    return pairs, found, events


def _x(events):
    return [e for e in events if isinstance(e, dict) and e.get("ph") == "X"]


def _analyse_log(result_dir):
    with open(os.path.join(result_dir, "logs", "analyse.log")) as f:
        return f.read()


@needs_torch
@pytest.mark.parametrize("tracer", ["eval_frame", "profile"])
def test_with_stack_record_function_and_optimizer_nest(tracer):
    """The record_function pattern: the range opens inside `_ops.py
    __call__` under `__enter__` and closes inside `__exit__`'s; the
    optimizer's ranges likewise.  The ranges stay whole, the Python calls
    around their edges are split, nothing overlaps."""
    env = {"AIPROF_PY_TRACER": "profile"} if tracer == "profile" else None
    run_python(_MLP + """
model, opt = make()
with P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True, with_modules=True,
               schedule=P.schedule(wait=0, warmup=1, active=3, repeat=1),
               on_trace_ready=P.tensorboard_trace_handler("./r")) as prof:
    for i in range(5):
        train_step(i, model, opt)
        prof.step()
""", env=env)
    d = _all_results("./r")[0]
    pairs, found, events = _overlaps(d)
    assert pairs == 0, found
    xs = _x(events)
    names = collections.Counter(e["name"] for e in xs)
    # 3 recorded steps: every range once per step, whole (not split)
    assert names["fwd#1"] == names["fwd#2"] == names["fwd#3"] == 1
    assert names["bwd"] == 3
    assert names["Optimizer.step#SGD.step"] == 3
    assert names["Optimizer.zero_grad#SGD.zero_grad"] == 3
    assert any(n.startswith("nn.Module: ") for n in names)
    # The recorded Python calls did straddle the ranges: the analysis split them.
    assert "slices were split" in _analyse_log(d)
    cont = [e for e in xs if e.get("args", {}).get("continued")]
    assert cont and all(e["cat"] == "python_function" for e in cont)
    assert any(e["name"].endswith(": __enter__") for e in cont)


@needs_torch
@pytest.mark.parametrize("tracer", ["eval_frame", "profile"])
def test_threads_running_at_trace_start_nest(tracer):
    """8 threads already training when the trace starts, each inside a
    range it opens without a Python call of its own (so the tracer first
    sees the thread after the range began): the replayed frames
    (threading.py _bootstrap ...) begin no later than that range and
    enclose it, whole, on every thread; nothing overlaps."""
    env = {"AIPROF_PY_TRACER": "profile"} if tracer == "profile" else None
    run_python(_MLP + """
from aiprof import _C
go = threading.Event()
def helper():
    return 1
def worker():
    mo = make()
    while not _C.is_recording():   # C calls only: the tracer sees no call yet
        time.sleep(0.001)
    gen = _C.annotation_push("opened_before_first_call")
    time.sleep(0.005)
    helper()                       # the thread's first Python call in the trace
    for i in range(2):
        train_step(i, *mo)
    _C.annotation_pop(gen)
threads = [threading.Thread(target=worker) for _ in range(8)]
for t in threads:
    t.start()
model, opt = make()
with P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True, with_modules=True,
               on_trace_ready=P.tensorboard_trace_handler("./r")):
    for t in threads:
        t.join()
""", env=env)
    d = _all_results("./r")[0]
    pairs, found, events = _overlaps(d)
    assert pairs == 0, found
    xs = _x(events)
    opened = [e for e in xs if e["name"] == "opened_before_first_call"]
    assert len(opened) == 8
    for r in opened:
        boot = [e for e in xs if e["tid"] == r["tid"] and e["name"].endswith(": _bootstrap")]
        assert len(boot) == 1, boot                 # one slice: never split
        b0, r0 = check_nesting._ns(boot[0]["ts"]), check_nesting._ns(r["ts"])
        b1 = b0 + check_nesting._ns(boot[0]["dur"])
        assert b0 <= r0 and r0 + check_nesting._ns(r["dur"]) <= b1


@needs_torch
def test_back_to_back_traces_with_threads_nest_without_unmatched_pops(monkeypatch):
    """Back-to-back traces (wait=0, warmup=0, repeat) while 8 threads train
    inside torch.profiler.record_function and aiprof record_function ranges
    that cross the trace boundaries: no trace has an overlap, and no range
    that began in the previous trace is a pop without a push."""
    monkeypatch.delenv("AIPROF_QUIET", raising=False)  # the warning goes to stderr
    proc = run_python(_MLP + """
done = threading.Event()
iters = [0]  # worker iterations finished
def worker():
    mo = make(); i = 0
    while not done.is_set():
        with torch.profiler.record_function("outer"):
            with P.record_function("outer_aiprof"):
                train_step(i, *mo); i += 1
                time.sleep(0.0005)
        iters[0] += 1
threads = [threading.Thread(target=worker) for _ in range(8)]
for t in threads:
    t.start()
time.sleep(0.05)
model, opt = make()
with P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True, with_modules=True,
               schedule=P.schedule(wait=0, warmup=0, active=2, repeat=3),
               on_trace_ready=P.tensorboard_trace_handler("./r")) as prof:
    for i in range(6):
        train_step(i, model, opt)
        time.sleep(0.003)
        # Each trace must see a worker's iteration: on a loaded machine
        # the workers may get no CPU in a few milliseconds' window.
        seen, deadline = iters[0], time.monotonic() + 10
        while iters[0] < seen + 2 and time.monotonic() < deadline:
            time.sleep(0.001)
        prof.step()
done.set()
for t in threads:
    t.join()
""")
    assert "no matching push/begin" not in proc.stderr, proc.stderr
    dirs = _all_results("./r")
    assert len(dirs) == 3
    for d in dirs:
        pairs, found, events = _overlaps(d)
        assert pairs == 0, (d, found)
        assert len({e["tid"] for e in _x(events)}) >= 2


def test_speedscope_port_finds_what_speedscope_finds():
    """The port of speedscope's importer (tests/e2e/speedscope_port.py) can
    fail: a partial overlap, and a 1 ns nesting that only exact times keep
    (absolute epoch µs read as float64 lose it, as speedscope does)."""
    overlap = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 10.5, "dur": 10},
               {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 12, "dur": 10}]
    assert len(speedscope_port.tried_to_end(overlap)) == 1
    absolute = [{"ph": "X", "name": "outer", "pid": 1, "tid": 1,
                 "ts": "1700000000000000.000", "dur": 2.001},
                {"ph": "X", "name": "inner", "pid": 1, "tid": 1,
                 "ts": "1700000000000000.001", "dur": 2.0},
                {"ph": "X", "name": "next", "pid": 1, "tid": 1,
                 "ts": "1700000000000002.001", "dur": 1.0}]
    assert check_nesting.count_overlaps(absolute)[0] == 0
    assert speedscope_port.tried_to_end(absolute)
    relative = [dict(e, ts=float(e["ts"][-5:])) for e in absolute]
    assert speedscope_port.tried_to_end(relative) == []
    nested = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 10},
              {"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 2},
              {"ph": "E", "pid": 1, "tid": 1, "ts": 4, "name": "b"},
              {"ph": "X", "name": "c", "pid": 1, "tid": 2, "ts": 5, "dur": 1}]
    assert speedscope_port.tried_to_end(nested) == []


@needs_torch
def test_kineto_form_imports_into_speedscope_without_tried_to_end():
    """Issue 13 §2: the Kineto form of a with_stack profile (record_function,
    the optimizer's ranges, nn.Module tracking, 8 threads training while the
    trace starts and stops) imports into speedscope's importer (its float64
    times, its queue order) with no "Tried to end" warning; the same events
    nest exactly in the default form."""
    run_python(_MLP + """
done = threading.Event()
def worker():
    mo = make(); i = 0
    while not done.is_set():
        with torch.profiler.record_function("outer"):
            train_step(i, *mo); i += 1
threads = [threading.Thread(target=worker) for _ in range(8)]
for t in threads:
    t.start()
model, opt = make()
with P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True, with_modules=True,
               schedule=P.schedule(wait=0, warmup=0, active=3, repeat=1),
               on_trace_ready=P.tensorboard_trace_handler("./r", trace_format="kineto")) as prof:
    for i in range(3):
        train_step(i, model, opt)
        time.sleep(0.005)
        prof.step()
done.set()
for t in threads:
    t.join()
""")
    d = _all_results("./r")[0]
    events = speedscope_port.load_events(d)
    assert len({e["tid"] for e in _x(events)}) >= 2
    names = collections.Counter(e["name"] for e in _x(events))
    assert names["Optimizer.zero_grad#SGD.zero_grad"] >= 3 and names["outer"] >= 1
    assert any(n.endswith(": _bootstrap") for n in names)
    warnings = speedscope_port.tried_to_end(events)
    assert warnings == [], warnings[:5]
    assert check_nesting.count_overlaps(events)[0] == 0


def test_out_of_order_ranges_without_torch_nest():
    """aiprof's record_function and itt ranges closed out of order (separate
    stacks) on one thread: the later-starting slice is split, not drawn
    across the other's end."""
    from aiprof import profiler as P
    from aiprof.profiler import itt
    with P.profile(activities=[P.ProfilerActivity.CPU],
                   experimental_config=P._ExperimentalConfig(mstx=True),
                   on_trace_ready=P.tensorboard_trace_handler("./r")):
        rf = P.record_function("outer_rf")
        rf.__enter__()
        itt.range_push("crossing")
        rf.__exit__(None, None, None)
        itt.range_pop()
    d = _all_results("./r")[0]
    pairs, found, events = _overlaps(d)
    assert pairs == 0, found
    crossing = [e for e in _x(events) if e["name"] == "crossing"]
    assert len(crossing) == 2                        # ended at outer_rf's end, continued


def test_range_opened_before_the_trace_is_no_unmatched_pop(monkeypatch):
    """A record_function opened before the trace and closed in it, after
    the thread pushed and popped another: not a pop without a push."""
    monkeypatch.delenv("AIPROF_QUIET", raising=False)  # the warning goes to stderr
    proc = run_python("""
from aiprof import profiler as P
rf = P.record_function("before")
rf.__enter__()                      # nothing records yet
prof = P.profile(activities=[P.ProfilerActivity.CPU])
prof.start()
with P.record_function("inside"):
    pass
rf.__exit__(None, None, None)       # its end falls in the trace
prof.stop()
""")
    assert "no matching push/begin" not in proc.stderr, proc.stderr
