"""Memory timeline categories from the framework: with profile_memory, the
optimizers' parameters, gradients and state are labelled (PARAMETER,
GRADIENT, OPTIMIZER_STATE; python/aiprof/profiler/_memory_labels.py) and
export_memory_timeline() (libaiprof's aip_export_memory_timeline) puts
their bytes in those categories.

The measure is the one the labels use: the size of each tensor's storage,
once per storage.  For the MLP below (no views, no shared storage) that is
exactly sum(t.numel() * t.element_size()).
"""
import gzip
import json

import pytest

from conftest import needs_torch

PARAMETER, OPTIMIZER_STATE, INPUT, GRADIENT = 0, 1, 2, 5
PREEXISTING, CREATE, INCREMENT_VERSION, DESTROY = 1, 2, 3, 4


def _nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def _expected(model, optimizer):
    import torch
    params = list(model.parameters())
    state = [v for per_param in optimizer.state.values() for v in per_param.values()
             if isinstance(v, torch.Tensor)]
    return {PARAMETER: _nbytes(params),
            GRADIENT: _nbytes(p.grad for p in params if p.grad is not None),
            OPTIMIZER_STATE: _nbytes(state)}


def _live_at_end(raw):
    """Bytes per category still live after the last event of the raw
    timeline ([[t_ns, action, numbytes, category], ...])."""
    live = {}
    for _, action, numbytes, category in raw:
        if action in (PREEXISTING, CREATE):
            live[category] = live.get(category, 0) + numbytes
        elif action == DESTROY:  # written with the size negative (docs/MEMORY.md)
            live[category] = live.get(category, 0) - abs(numbytes)
    return live


def _profile(model, optimizer, step_fn, steps, schedule=None):
    import aiprof as torch_npu
    with torch_npu.profiler.profile(
            activities=[torch_npu.profiler.ProfilerActivity.CPU], profile_memory=True,
            schedule=schedule,
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./r")) as prof:
        for _ in range(steps):
            step_fn()
            if schedule is not None:
                prof.step()
    return prof


def _raw_timeline(prof, path="out/mem.raw.json.gz"):
    prof.export_memory_timeline(path, device="cpu")
    with gzip.open(path, "rt") as f:
        return json.load(f)


@needs_torch
@pytest.mark.parametrize("labels", ["native", "python"])
@pytest.mark.parametrize("kind", ["sgd_momentum", "adam"])
def test_parameter_gradient_state_bytes_after_steps(kind, labels, monkeypatch):
    """The same bytes whether the adapter reads the storages (labels.cpp)
    or Python does (an adapter built without pybind11's headers)."""
    import torch
    from aiprof.profiler import _torch_bridge
    from train_mlp import build, train_step
    if labels == "python":
        monkeypatch.setattr(_torch_bridge, "native_labels", lambda: None)
    elif _torch_bridge.adapter() is None or _torch_bridge.native_labels() is None:
        pytest.skip("the adapter was built without labels.cpp")
    torch.set_num_threads(1)
    model, optimizer, x, y = build()
    if kind == "adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    prof = _profile(model, optimizer, lambda: train_step(model, optimizer, x, y), steps=3)
    raw = _raw_timeline(prof)
    want = _expected(model, optimizer)
    assert want[PARAMETER] > 0 and want[GRADIENT] == want[PARAMETER]
    assert want[OPTIMIZER_STATE] >= want[PARAMETER]  # momentum / exp_avg(+sq)(+step)
    live = _live_at_end(raw)
    for category, nbytes in want.items():
        assert live.get(category, 0) == nbytes, (category, live)
    # The batch the model was called with is its INPUT.
    assert live.get(INPUT, 0) == x.numel() * x.element_size(), live
    # Parameters existed before the trace: PREEXISTING, never created or freed.
    assert {a for _, a, _, c in raw if c == PARAMETER} == {PREEXISTING}
    assert sum(n for _, a, n, c in raw if c == PARAMETER) == want[PARAMETER]

    # The coalesced form agrees: slot c+1 of the last point is category c.
    prof.export_memory_timeline("out/mem.json", device="cpu")
    with open("out/mem.json") as f:
        times, sizes = json.load(f)
    assert len(times) == len(sizes) and sizes
    for category, nbytes in want.items():
        assert sizes[-1][category + 1] == nbytes


@needs_torch
@pytest.mark.parametrize("set_to_none", [False, True])
def test_labels_with_schedule(set_to_none):
    """Recording starts after warmup steps: parameters and momentum buffers
    exist (labelled at the trace's start, PREEXISTING).  Gradients:
    set_to_none=False keeps the warmup's (labelled after the first step,
    PREEXISTING); set_to_none=True frees them in the first recorded
    zero_grad, a free torch's CPU allocator does not report (the block was
    allocated before memory profiling), so they are not seen; each recorded
    step's new gradients are created and labelled after the step."""
    import torch
    import aiprof as torch_npu
    from train_mlp import build
    torch.set_num_threads(1)
    model, optimizer, x, y = build()

    def step():
        optimizer.zero_grad(set_to_none=set_to_none)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    prof = _profile(model, optimizer, step, steps=5,
                    schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=2, repeat=1))
    raw = _raw_timeline(prof)
    want = _expected(model, optimizer)
    live = _live_at_end(raw)
    for category, nbytes in want.items():
        assert live.get(category, 0) == nbytes, (category, live)
    for category in (PARAMETER, OPTIMIZER_STATE):
        assert {a for _, a, _, c in raw if c == category} == {PREEXISTING}
    grads = [(a, n) for _, a, n, c in raw if c == GRADIENT]
    if set_to_none:
        assert {a for a, _ in grads} == {CREATE, DESTROY}
        assert sum(n for a, n in grads if a == CREATE) == 2 * want[GRADIENT]
    else:
        assert {a for a, _ in grads} == {PREEXISTING}
        assert sum(n for a, n in grads) == want[GRADIENT]


@needs_torch
def test_no_labels_without_profile_memory():
    import aiprof as torch_npu
    from aiprof.profiler import _memory_labels
    from train_mlp import build, train_step
    model, optimizer, x, y = build()
    with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU],
                                    on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(
                                        "./r")) as prof:
        train_step(model, optimizer, x, y)
        assert prof._collectors._labels is None
        assert _memory_labels._active == 0
    with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU],
                                    profile_memory=True) as prof:
        assert _memory_labels._active == 1
        train_step(model, optimizer, x, y)
    assert _memory_labels._active == 0


def test_memory_label_call():
    from aiprof import _C
    _C.memory_label(0x1000, 64, _C.MEM_PARAMETER)  # not recording: nothing happens
    _C.memory_label(0x1000, 64, _C.MEM_GRADIENT, 0, 0)
    with pytest.raises(ValueError, match="category"):
        _C.memory_label(0x1000, 64, 8)
    with pytest.raises(TypeError):
        _C.memory_label("x", 64, 0)


@needs_torch
@pytest.mark.parametrize("labels", ["native", "python"])
def test_inputs_in_a_list_argument(labels, monkeypatch):
    """A model called with a list of tensors: each is INPUT, found in the
    list by the adapter or by Python alike."""
    import torch
    from aiprof.profiler import _torch_bridge
    if labels == "python":
        monkeypatch.setattr(_torch_bridge, "native_labels", lambda: None)
    elif _torch_bridge.adapter() is None or _torch_bridge.native_labels() is None:
        pytest.skip("the adapter was built without labels.cpp")

    class PairNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 1)

        def forward(self, pair, scale):
            return self.fc(torch.cat(pair, dim=1)) * scale

    torch.manual_seed(0)
    model = PairNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    pair = [torch.randn(5, 2), torch.randn(5, 4)]
    scale = torch.ones(1)

    def step():
        optimizer.zero_grad()
        model(pair, scale).sum().backward()
        optimizer.step()

    live = _live_at_end(_raw_timeline(_profile(model, optimizer, step, steps=3)))
    assert live.get(INPUT, 0) == _nbytes(pair + [scale]), live


def _live_after_a_recorded_forward(model, optimizer, x, wait_step):
    """Bytes per category live at the end of a profile whose first step
    (not recorded) runs wait_step() and whose second, recorded, is a
    forward only: what the trace's start labelled."""
    import torch
    calls = []

    def step():
        if not calls:
            wait_step()
        else:
            with torch.no_grad():
                model(x)
        calls.append(1)
    prof = _profile(model, optimizer, step, 2, schedule=__import__(
        "aiprof").profiler.schedule(wait=1, active=1, repeat=1))
    return _live_at_end(_raw_timeline(prof))


@needs_torch
def test_optimizer_stepping_before_the_trace_is_labelled_in_it():
    """An optimizer that stepped before the trace (wait step) is known to
    the trace: its parameters are PARAMETER in a trace where it does not
    step again, labelled at the trace's end (no heap scan finds it; the step
    hook, installed when the profile is made, did)."""
    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(32, 16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 32)

    def train():
        model(x).sum().backward()
        optimizer.step()
    live = _live_after_a_recorded_forward(model, optimizer, x, train)
    assert live.get(PARAMETER, 0) == _nbytes(model.parameters()), live


FORKS = 20
CHURN_MAX = 300_000  # allocations: some 25 MB of raw data at most


def _under_asan():
    with open("/proc/self/maps") as f:
        return "libasan" in f.read()


# gcc 12's ASan runtime does not hold its allocator's locks across fork()
# (it has no fork interceptor; LLVM's gained one later): a child forked
# while another thread is inside malloc can hang in ASan itself.  (The hangs
# this test caught were torch's callback mutex, which the adapter now
# handles; 9 ASan runs passed since, but ASan's own hazard remains.)
@needs_torch
@pytest.mark.skipif(_under_asan(), reason="ASan's allocator is not fork-safe with threads")
def test_fork_while_another_thread_allocates():
    """DataLoader workers are forked while other threads may be inside the
    allocator wrapper: the adapter takes its table's locks around fork()
    and the child must get them released (a child that inherited a held
    lock would spin at its first tensor)."""
    import os
    import threading
    import time
    import torch
    import aiprof as torch_npu
    stop = threading.Event()

    def churn():  # bounded: every allocation is a recorded event
        for _ in range(CHURN_MAX):
            if stop.is_set():
                break
            torch.empty(256).add_(1)

    with torch_npu.profiler.profile(profile_memory=True,
                                    on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(
                                        "./r", analyse_flag=False)):
        worker = threading.Thread(target=churn)
        worker.start()
        try:
            for _ in range(FORKS):
                pid = os.fork()
                if pid == 0:  # the child allocates and frees, then leaves at once
                    torch.ones(100).sum()
                    os._exit(0)
                deadline = time.monotonic() + 20
                while True:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        break
                    if time.monotonic() > deadline:
                        os.kill(pid, 9)
                        os.waitpid(pid, 0)
                        raise AssertionError("a forked child hung in the allocator")
                    time.sleep(0.005)
                assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        finally:
            stop.set()
            worker.join()


@needs_torch
@pytest.mark.parametrize("labels", ["native", "python"])
def test_parameters_sharing_a_storage_count_once(labels, monkeypatch):
    """Two parameters that are views of one storage: the block is labelled
    once, by its storage's size, and keeps the first category met at every
    step (the adapter's set of storages labelled starts empty each pass)."""
    import torch
    from aiprof.profiler import _torch_bridge
    if labels == "python":
        monkeypatch.setattr(_torch_bridge, "native_labels", lambda: None)
    elif _torch_bridge.adapter() is None or _torch_bridge.native_labels() is None:
        pytest.skip("the adapter was built without labels.cpp")
    base = torch.zeros(4, 8)
    a = torch.nn.Parameter(base[:2])
    b = torch.nn.Parameter(base[2:])
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() \
        if hasattr(a, "untyped_storage") else a.storage().data_ptr() == b.storage().data_ptr()
    optimizer = torch.optim.SGD([a, b], lr=0.1)
    x = torch.ones(8)

    def step():
        optimizer.zero_grad()
        ((a @ x).sum() + (b @ x).sum()).backward()
        optimizer.step()

    # A state entry that is a view of a parameter's storage: the storage
    # keeps its first category, PARAMETER, not OPTIMIZER_STATE.
    optimizer.state[a]["alias"] = a.detach()[:1]
    live = _live_at_end(_raw_timeline(_profile(None, optimizer, step, steps=3)))
    assert live.get(PARAMETER, 0) == base.numel() * base.element_size(), live
    assert live.get(GRADIENT, 0) == 2 * 2 * 8 * 4, live  # two separate gradient blocks
    assert live.get(OPTIMIZER_STATE, 0) == 0, live


@needs_torch
def test_later_steps_skip_python_and_still_follow_changes(monkeypatch):
    """After an optimizer's first step in a trace, the step hook labels it
    through the adapter without Python (step_hook.c); a parameter group
    added mid-trace still gets labelled, from the next step on."""
    import torch
    from aiprof.profiler import _memory_labels, _torch_bridge
    from train_mlp import build, train_step
    if _torch_bridge.adapter() is None or _torch_bridge.native_labels() is None:
        pytest.skip("the adapter was built without labels.cpp")
    calls = []
    real = _memory_labels._label_after_step
    monkeypatch.setattr(_memory_labels, "_label_after_step",
                        lambda opt: (calls.append(opt), real(opt))[1])
    model, optimizer, x, y = build()
    extra = torch.nn.Parameter(torch.ones(5, 7))

    def step():
        if len(step_calls) == 4:
            optimizer.add_param_group({"params": [extra]})
        step_calls.append(1)
        train_step(model, optimizer, x, y)

    step_calls = []
    prof = _profile(model, optimizer, step, steps=8)
    assert len(calls) == 1  # the first step only; the other seven took the fast path
    live = _live_at_end(_raw_timeline(prof))
    assert live.get(PARAMETER, 0) == _nbytes(model.parameters()) + _nbytes([extra]), live


@needs_torch
def test_inputs_labelled_without_module_hooks():
    """With the frame evaluator and the adapter's labels, top-level module
    inputs are labelled from the frames of Module._call_impl: no module hook
    is installed (a hook sends every module call down torch's slow path),
    and the model's inputs are still INPUT."""
    import torch
    from aiprof import _C
    from aiprof.profiler import _torch_bridge
    from train_mlp import build, train_step
    if _C.tracer_mode() != "eval_frame":
        pytest.skip("this Python has no eval-frame tracer")
    if _torch_bridge.adapter() is None or _torch_bridge.native_labels() is None:
        pytest.skip("the adapter was built without labels.cpp")
    module = torch.nn.modules.module
    model, optimizer, x, y = build()
    hooks = []

    def step():
        hooks.append((len(module._global_forward_pre_hooks), len(module._global_forward_hooks),
                      len(model._forward_pre_hooks)))
        train_step(model, optimizer, x, y)

    live = _live_at_end(_raw_timeline(_profile(model, optimizer, step, steps=3)))
    assert hooks == [(0, 0, 0)] * 3
    assert live.get(INPUT, 0) == x.numel() * x.element_size(), live


@needs_torch
def test_trace_end_labels_every_unstepped_optimizer_in_one_pass():
    """At a profile's first step() or stop() in a trace, the optimizers seen
    stepping that have not stepped in it are labelled in one C call
    (_C.labels_optimizers), oldest first, in one pass: one the adapter
    cannot read (param_groups a tuple) is labelled in Python in the same
    pass, so a storage met first as the older optimizer's state stays
    OPTIMIZER_STATE; an optimizer freed before the trace is forgotten."""
    import gc
    import torch
    from aiprof.profiler import _memory_labels, _torch_bridge
    if _torch_bridge.adapter() is None or _torch_bridge.native_labels() is None:
        pytest.skip("the adapter was built without labels.cpp")
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 8)
    opt_a = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    gone = torch.optim.SGD([torch.nn.Parameter(torch.ones(3))], lr=0.1)
    extra = torch.nn.Parameter(torch.ones(6, 5))
    x = torch.randn(4, 16)
    opt_b = None

    def train():  # every optimizer steps once
        nonlocal opt_b, gone
        model(x).sum().backward()
        opt_a.step()
        gone.step()
        buf = opt_a.state[model.weight]["momentum_buffer"]
        opt_b = torch.optim.SGD([extra, buf], lr=0.1)
        opt_b.step()
        opt_b.param_groups = tuple(opt_b.param_groups)  # a shape only Python reads
        gone_id = id(gone)
        gone = None
        gc.collect()
        assert gone_id not in _memory_labels._optimizers
    live = _live_after_a_recorded_forward(model, opt_a, x, train)
    state = [v for per in opt_a.state.values() for v in per.values()]
    assert live.get(PARAMETER, 0) == _nbytes(model.parameters()) + _nbytes([extra]), live
    assert live.get(OPTIMIZER_STATE, 0) == _nbytes(state), live


@needs_torch
def test_profile_start_labels_no_optimizer(monkeypatch):
    """A profile's start() labels no optimizer (a short profile's start()
    must not chase every parameter's storage): those that step in the trace
    are labelled by their step, the others at the first profile.step() or
    stop(); a trace where every optimizer steps makes no such call."""
    import torch
    from aiprof import _C
    from aiprof.profiler import _torch_bridge
    if _torch_bridge.adapter() is None or _torch_bridge.native_labels() is None:
        pytest.skip("the adapter was built without labels.cpp")
    starts, later = [], []
    real_start, real_later = _C.labels_start, _C.labels_optimizers

    def spy_start(generation, code, optimizers):
        starts.append(optimizers)
        return real_start(generation, code, optimizers)

    def spy_later(optimizers):
        later.append(len(optimizers))
        return real_later(optimizers)
    monkeypatch.setattr(_C, "labels_start", spy_start)
    monkeypatch.setattr(_C, "labels_optimizers", spy_later)
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(4, 16)

    def train():
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
    train()  # known to the step hook before the profile
    prof = _profile(model, optimizer, train, 3,
                    schedule=__import__("aiprof").profiler.schedule(wait=0, active=3, repeat=1))
    assert starts == [None] and later == [], (starts, later)
    live = _live_at_end(_raw_timeline(prof))
    state = [v for per in optimizer.state.values() for v in per.values()]
    assert live.get(PARAMETER, 0) == _nbytes(model.parameters()), live
    assert live.get(OPTIMIZER_STATE, 0) == _nbytes(state), live
    # Without a profile.step() in the trace (stop() ends it) and no
    # optimizer step: labelled once, at stop().
    import aiprof as torch_npu
    with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU],
                                    profile_memory=True) as prof:
        with torch.no_grad():
            model(x)
    assert starts[-1] is None and later == [1], (starts, later)
    assert _live_at_end(_raw_timeline(prof)).get(PARAMETER, 0) == _nbytes(model.parameters())
