"""python_function events (torch's with_stack / with_modules layer).

Every Python call seen while recording is an X event of category
python_function named "file.py(first line): function", with args
"Python id" / "Python parent id"; with with_modules every nn.Module forward
is one too, named "nn.Module: Class_n" with a "Python module id".  They
change nothing else: the ATen ops of a run are the same without them.
"""
import collections
import inspect
import json

import pytest

from aiprof import profiler as P
from conftest import needs_torch, trace_events


def _model():
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    x = torch.randn(4, 8)
    return model, x


def _helper(t):
    return t * 2


def _gen(n):
    for i in range(n):
        yield i


def _raises():
    raise ValueError("unwound")


def _workload(model, x):
    y = model(x)
    y = _helper(y)
    total = sum(_gen(3))
    try:
        _raises()
    except ValueError:
        pass
    y.sum().backward()
    return total


def _profile(path, **kwargs):
    model, x = _model()
    with P.profile(activities=[P.ProfilerActivity.CPU], **kwargs) as prof:
        _workload(model, x)
    prof.export_chrome_trace(path)
    with open(path) as f:
        return trace_events(json.load(f))


def _check_tree(events):
    """The calls (a call split so that slices nest is one first slice and
    "continued" pieces with its ids, docs/ANALYSIS.md "Nesting"), each
    within its parent's extent.  Returns the first slices."""
    pieces = [e for e in events if e.get("cat") == "python_function"]
    py = [e for e in pieces if not e["args"].get("continued")]
    assert py
    ids = [e["args"]["Python id"] for e in py]
    assert len(ids) == len(set(ids)) and 0 not in ids
    by_id = {e["args"]["Python id"]: e for e in py}
    extent = {}
    for e in pieces:
        assert e["ph"] == "X"
        a, b = extent.get(e["args"]["Python id"], (e["ts"], e["ts"] + e["dur"]))
        extent[e["args"]["Python id"]] = (min(a, e["ts"]), max(b, e["ts"] + e["dur"]))
    for e in py:
        parent = e["args"]["Python parent id"]
        if parent == 0:
            continue
        assert parent in by_id, e
        p = by_id[parent]
        assert p["tid"] == e["tid"] and p["pid"] == e["pid"]
        (p0, p1), (e0, e1) = extent[parent], extent[e["args"]["Python id"]]
        assert p0 <= e0 and e1 <= p1 + 1e-3, (p, e)
    return py


def _op_counts(events):
    return collections.Counter(e["name"] for e in events if e.get("cat") == "cpu_op")


@needs_torch
def test_with_stack_python_functions():
    events = _profile("stack.json", with_stack=True)
    py = _check_tree(events)
    names = [e["name"] for e in py]
    assert any(n.endswith(": _helper") and "test_python_function.py(" in n for n in names)
    assert any(n.endswith(": _workload") for n in names)
    assert sum(n.endswith(": _gen") for n in names) >= 4  # every resume is a call
    assert any(n.endswith(": _raises") for n in names)
    assert any("torch/nn/modules/linear.py(" in n and n.endswith(": forward") for n in names)
    assert not any(n.startswith("nn.Module:") for n in names)
    assert all("Python module id" not in e["args"] for e in py)
    # _helper is called from _workload
    helper = next(e for e in py if e["name"].endswith(": _helper"))
    parents = {e["args"]["Python id"]: e for e in py}
    assert parents[helper["args"]["Python parent id"]]["name"].endswith(": _workload")
    plain = _profile("plain.json")
    assert not [e for e in plain if e.get("cat") == "python_function"]
    assert _op_counts(events) == _op_counts(plain)


@pytest.fixture(params=["frames", "hooks"])
def module_calls(request, monkeypatch):
    """Module calls followed through the frame evaluator (where this
    Python allows it) or through torch's global forward hooks."""
    from aiprof import _C
    if request.param == "hooks":
        monkeypatch.setattr(_C, "modules_by_frames", lambda code: False)
    elif _C.tracer_mode() != "eval_frame":
        pytest.skip("this Python has no eval-frame tracer")
    return request.param


@needs_torch
def test_with_modules_python_functions(module_calls):
    events = _profile("modules.json", with_modules=True)
    py = _check_tree(events)
    mods = [e for e in py if e["name"].startswith("nn.Module: ")]
    assert sorted(e["name"] for e in mods) == [
        "nn.Module: Linear_0", "nn.Module: Linear_1", "nn.Module: ReLU_0",
        "nn.Module: Sequential_0"]
    assert all(isinstance(e["args"]["Python module id"], int) for e in mods)
    by_id = {e["args"]["Python id"]: e for e in py}
    for e in mods:
        if e["name"] != "nn.Module: Sequential_0":
            assert by_id[e["args"]["Python parent id"]]["name"] == "nn.Module: Sequential_0"
    both = _profile("both.json", with_stack=True, with_modules=True)
    py = _check_tree(both)
    by_id = {e["args"]["Python id"]: e for e in py}
    linear = [e for e in py if e["name"] == "nn.Module: Linear_0"]
    assert len(linear) == 1
    children = [e for e in py if e["args"]["Python parent id"] == linear[0]["args"]["Python id"]]
    assert any(e["name"].endswith(": forward") for e in children)
    plain = _profile("plain.json")
    assert _op_counts(both) == _op_counts(plain) == _op_counts(events)


@needs_torch
@pytest.mark.parametrize("tracer", ["eval_frame", "profile"])
def test_frames_running_at_start_are_events(tracer, monkeypatch):
    """A frame already running when the trace starts (here the function
    that calls start() and stop()) is a python_function event too, from the
    start on, and the calls it makes while recording are its children.
    Both ways of following calls (eval_frame on CPython 3.11, the profile
    hook elsewhere) give the same tree."""
    from aiprof import _C
    if tracer == "profile":
        monkeypatch.setenv("AIPROF_PY_TRACER", "profile")
    elif _C.tracer_mode() != "eval_frame":
        pytest.skip("this Python has no eval-frame tracer")
    model, x = _model()
    prof = P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True)

    def _outer_running():
        prof.start()
        y = _helper(model(x))
        prof.stop()
        return y

    _outer_running()
    prof.export_chrome_trace("running.json")
    with open("running.json") as f:
        py = _check_tree(trace_events(json.load(f)))
    by_id = {e["args"]["Python id"]: e for e in py}
    outer = [e for e in py if e["name"].endswith(": _outer_running")]
    assert len(outer) == 1
    helper = [e for e in py if e["name"].endswith(": _helper")]
    assert len(helper) == 1
    assert by_id[helper[0]["args"]["Python parent id"]] is outer[0]
    # and the test function itself, further out, was running too
    assert any(e["name"].endswith(": test_frames_running_at_start_are_events") for e in py)
    assert _C.tracer_mode() == tracer


@needs_torch
def test_frames_running_at_trace_start_enclose_its_steps():
    """The collectors are switched on after the session opened the first
    recorded step (the adapter's first load, profile_memory's optimizer
    scan, the replay of the running frames); the step begins once they are
    on.  So the frames running at the trace start (this test, the loop's
    caller) begin before ProfilerStep#N and enclose it: no python_function
    half inside a step, which Perfetto would draw wrongly.  aiprof's own
    calls (prof.step() straddles the step it ends) are not events at all."""
    import torch
    model, x = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True, profile_memory=True,
                   schedule=P.schedule(wait=1, warmup=0, active=2, repeat=1),
                   on_trace_ready=P.tensorboard_trace_handler("./r", analyse_flag=False)) as prof:
        for _ in range(3):
            model(x).sum().backward()
            opt.step()
            prof.step()
    prof.export_chrome_trace("steps.json")
    with open("steps.json") as f:
        events = trace_events(json.load(f))
    steps = [e for e in events if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")]
    assert [s["name"] for s in steps] == ["ProfilerStep#1", "ProfilerStep#2"]
    py = _check_tree(events)
    outer = [e for e in py if e["name"].endswith(": test_frames_running_at_trace_start_"
                                                 "enclose_its_steps")]
    assert len(outer) == 1
    for step in steps:
        s0, s1 = step["ts"], step["ts"] + step["dur"]
        for e in py:
            if e["tid"] != step["tid"]:
                continue
            e0, e1 = e["ts"], e["ts"] + e["dur"]
            inside, encloses, apart = s0 <= e0 and e1 <= s1, e0 <= s0 and s1 <= e1, \
                e1 <= s0 or s1 <= e0
            assert inside or encloses or apart, (step["name"], e["name"], e0, e1, s0, s1)
    assert outer[0]["ts"] <= steps[0]["ts"]
    # The profiler's own calls (prof.step() and what it runs) are no events.
    import os
    import aiprof
    own = os.path.dirname(aiprof.__file__) + os.sep
    assert not [e["name"] for e in py if e["name"].startswith(own)]


@needs_torch
@pytest.mark.parametrize("tracer", ["eval_frame", "profile"])
def test_calls_open_on_other_threads_end_at_stop(tracer, monkeypatch):
    """A thread still inside a call when the trace stops: that call is an
    event ending at the stop, so its children's parent ids name it."""
    import threading
    import time
    from aiprof import _C
    if tracer == "profile":
        monkeypatch.setenv("AIPROF_PY_TRACER", "profile")
    elif _C.tracer_mode() != "eval_frame":
        pytest.skip("this Python has no eval-frame tracer")
    done, looping = threading.Event(), threading.Event()

    def _worker_loop():
        while not done.is_set():
            _helper(1)
            looping.set()
            time.sleep(0.001)

    prof = P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True)
    prof.start()
    worker = threading.Thread(target=_worker_loop)
    worker.start()
    try:
        assert looping.wait(10)
        prof.stop()
    finally:
        done.set()
        worker.join()
    prof.export_chrome_trace("threads.json")
    with open("threads.json") as f:
        py = _check_tree(trace_events(json.load(f)))
    loops = [e for e in py if e["name"].endswith(": _worker_loop")]
    assert len(loops) == 1
    helpers = [e for e in py if e["name"].endswith(": _helper") and e["tid"] == loops[0]["tid"]]
    assert helpers and all(h["args"]["Python parent id"] == loops[0]["args"]["Python id"]
                           for h in helpers)


@needs_torch
def test_module_that_raises_leaves_a_sound_path(module_calls):
    """A module whose forward raises (caught by its caller's forward): its
    event ends, and the ops after it carry the caller's path again."""
    import torch

    class Fails(torch.nn.Module):
        def forward(self, x):
            x = x + 1
            raise RuntimeError("no")

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fails = Fails()
            self.lin = torch.nn.Linear(4, 2)

        def forward(self, x):
            try:
                self.fails(x)
            except RuntimeError:
                pass
            return torch.relu(self.lin(x))

    model, x = Outer(), torch.ones(3, 4)
    with P.profile(activities=[P.ProfilerActivity.CPU], with_modules=True) as prof:
        model(x)
        model(x)
    prof.export_chrome_trace("raises.json")
    with open("raises.json") as f:
        events = trace_events(json.load(f))
    py = _check_tree(events)
    assert sorted(e["name"] for e in py) == ["nn.Module: Fails_0"] * 2 + \
        ["nn.Module: Linear_0"] * 2 + ["nn.Module: Outer_0"] * 2
    ops = {e["name"]: e["args"].get("Module Hierarchy") for e in events
           if e.get("cat") == "cpu_op"}
    assert ops["aten::add"] == "nn.Module: Outer_0;nn.Module: Fails_0"
    if module_calls == "hooks" and "always_call" not in \
            inspect.signature(torch.nn.modules.module.register_module_forward_hook).parameters:
        # torch < 2.1 runs no forward hook for a forward that raised: the
        # path keeps the failed module until its caller returns
        # (docs/PYTHON.md); the frame evaluator has no such gap.
        assert ops["aten::addmm"] == "nn.Module: Outer_0;nn.Module: Fails_0;nn.Module: Linear_0"
        assert ops["aten::relu"] == "nn.Module: Outer_0;nn.Module: Fails_0"
        return
    assert ops["aten::addmm"] == "nn.Module: Outer_0;nn.Module: Linear_0"
    assert ops["aten::relu"] == "nn.Module: Outer_0"


@needs_torch
def test_module_path_not_stale_when_another_evaluator_takes_over():
    """torch.compile installs its own frame evaluator: from then on module
    frames are not seen, and ops must get no module path rather than the
    one that was current when ours was replaced."""
    import ctypes
    import torch
    from aiprof import _C
    if _C.tracer_mode() != "eval_frame":
        pytest.skip("this Python has no eval-frame tracer")
    api = ctypes.pythonapi
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    api._PyInterpreterState_GetEvalFrameFunc.restype = ctypes.c_void_p
    api._PyInterpreterState_GetEvalFrameFunc.argtypes = [ctypes.c_void_p]
    api._PyInterpreterState_SetEvalFrameFunc.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    interp = api.PyInterpreterState_Get()
    default = ctypes.cast(api._PyEval_EvalFrameDefault, ctypes.c_void_p).value
    saved = []

    class TakenOver(torch.nn.Module):
        def forward(self, x):
            x = torch.sin(x)                     # still followed
            saved.append(api._PyInterpreterState_GetEvalFrameFunc(interp))
            api._PyInterpreterState_SetEvalFrameFunc(interp, default)
            return torch.cos(x)                  # no longer followed

    with P.profile(activities=[P.ProfilerActivity.CPU], with_modules=True) as prof:
        try:
            TakenOver()(torch.ones(3))
        finally:
            api._PyInterpreterState_SetEvalFrameFunc(interp, saved[0])
    assert saved[0] != default  # ours was installed
    prof.export_chrome_trace("takeover.json")
    with open("takeover.json") as f:
        ops = {e["name"]: e.get("args", {}).get("Module Hierarchy")
               for e in trace_events(json.load(f)) if e.get("cat") == "cpu_op"}
    assert ops["aten::sin"] == "nn.Module: TakenOver_0"
    assert ops["aten::cos"] is None


def _recurse(n):
    return 0 if n == 0 else 1 + _recurse(n - 1)


def test_python_ids_unique_over_threads_and_blocks():
    # Each thread takes its calls' ids from the process's counter a block
    # at a time (record.c): with several threads making more calls than a
    # block holds, every call still has its own id, each parent id is a
    # call of the same thread, and on one thread ids grow with the calls.
    import threading
    barrier = threading.Barrier(4)

    def work():
        barrier.wait()
        for _ in range(300):
            _recurse(3)

    with P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True) as prof:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    prof.export_chrome_trace("threads.json")
    with open("threads.json") as f:
        py = _check_tree(trace_events(json.load(f)))
    by_id = {e["args"]["Python id"]: e for e in py}
    recursions = collections.Counter(e["tid"] for e in py if e["name"].endswith(": _recurse"))
    assert len(recursions) == 4 and set(recursions.values()) == {300 * 4}
    for e in py:
        parent = e["args"]["Python parent id"]
        if parent:
            assert by_id[parent]["tid"] == e["tid"]
    for tid in recursions:
        mine = sorted((float(e["ts"]), e["args"]["Python id"]) for e in py
                      if e["tid"] == tid and e["name"].endswith(": _recurse"))
        ids = [i for _, i in mine]
        assert ids == sorted(ids)
