"""Backward ops and their forward threads: "Fwd thread id" is the OS thread
that ran the forward op, and fwdbwd flows pair on (forward thread, sequence
number) — autograd numbers ops per thread, so the same number on another
thread is another op.

Each case runs in a fresh interpreter: what the adapter knows about threads
must not come from earlier tests."""
import json

from conftest import needs_torch, result_dirs, run_python, slices, trace_events, trace_of

_PRELUDE = """
import json, threading, warnings
import torch
import aiprof
from aiprof import profiler as P
warnings.simplefilter("ignore")
lin = torch.nn.Linear(4, 3)
x = torch.randn(2, 4)
box = {}
def forward():
    box["loss"] = lin(x).sum()      # sequence numbers 0..2 on this thread
"""


def _ops_and_flows(result_dir):
    """cpu_op slices, and each fwdbwd flow as (start op, finish op)."""
    trace = trace_of(result_dir)
    ops = slices(trace, "cpu_op")

    def op_at(ev):
        return min((o for o in ops if o["tid"] == ev["tid"]
                    and o["ts"] <= ev["ts"] <= o["ts"] + o["dur"]), key=lambda o: o["dur"])

    flows = {}
    for ev in trace_events(trace):
        if ev.get("cat") == "fwdbwd":
            flows.setdefault(ev["id"], {})[ev["ph"]] = op_at(ev)
    return ops, [(f["s"], f["f"]) for f in flows.values()]


_BACKWARD = {"SumBackward0", "AddmmBackward0", "TBackward0"}


@needs_torch
def test_forward_thread_gone_before_the_trace():
    """The forward ran in a thread that ended before any profile started
    (before the adapter was even loaded); its backward runs in the trace on
    the main thread, next to main-thread forward ops with the same sequence
    numbers."""
    out = run_python(_PRELUDE + """
t = threading.Thread(target=forward)
t.start(); t.join()
with P.profile(on_trace_ready=P.tensorboard_trace_handler("./r")):
    box["loss"].backward()
    torch.randn(3, requires_grad=True).mul(2)      # main thread, sequence number 0
print(json.dumps({"worker": t.native_id, "main": threading.get_native_id()}))
""")
    tids = json.loads(out.stdout.strip().splitlines()[-1])
    ops, flows = _ops_and_flows(result_dirs("./r")[0])
    backward = [o for o in ops if o["name"] in _BACKWARD]
    assert {o["name"] for o in backward} == _BACKWARD
    assert all(o["tid"] == tids["main"] for o in backward)
    assert [o["args"].get("Fwd thread id") for o in backward] == [tids["worker"]] * 3
    # The forward ops were not recorded: nothing to link them from, least of
    # all the main thread's aten::mul (sequence number 0, like TBackward0).
    assert flows == []


@needs_torch
def test_starting_thread_only_waits_while_its_backward_runs():
    """The main thread ran the forward before the trace and only waits in
    it while a worker runs the backward."""
    out = run_python(_PRELUDE + """
forward()
with P.profile(on_trace_ready=P.tensorboard_trace_handler("./r")):
    t = threading.Thread(target=lambda: box["loss"].backward())
    t.start(); t.join()
print(json.dumps({"worker": t.native_id, "main": threading.get_native_id()}))
""")
    tids = json.loads(out.stdout.strip().splitlines()[-1])
    ops, _ = _ops_and_flows(result_dirs("./r")[0])
    backward = [o for o in ops if o["name"] in _BACKWARD]
    assert len(backward) == 3 and all(o["tid"] == tids["worker"] for o in backward)
    assert [o["args"].get("Fwd thread id") for o in backward] == [tids["main"]] * 3


@needs_torch
def test_flows_pair_within_the_forward_thread():
    """A worker's forward ran before the trace; in the trace the main thread
    runs a forward op with sequence number 0, then the worker runs its
    backward (TBackward0 is number 0 too) and a forward and backward of its
    own.  Every flow starts on the thread its backward op names, at an op
    with the backward op's sequence number, no later than it."""
    out = run_python(_PRELUDE + """
go, done, started = threading.Event(), threading.Event(), threading.Event()
def worker():
    forward()
    started.set(); go.wait()
    box["loss"].backward()          # its forward ops were not recorded
    (lin(x) * 2).sum().backward()   # recorded on both sides
    done.set()
t = threading.Thread(target=worker)
t.start(); started.wait()
with P.profile(on_trace_ready=P.tensorboard_trace_handler("./r")):
    torch.randn(3, requires_grad=True).mul(2)
    go.set(); done.wait()
t.join()
print(json.dumps({"worker": t.native_id, "main": threading.get_native_id()}))
""")
    tids = json.loads(out.stdout.strip().splitlines()[-1])
    ops, flows = _ops_and_flows(result_dirs("./r")[0])
    assert len(flows) >= 3           # MulBackward0, SumBackward0, AddmmBackward0, ...
    for s, f in flows:
        assert f["args"]["Fwd thread id"] == s["tid"] == tids["worker"]
        assert s["args"]["Sequence number"] == f["args"]["Sequence number"]
        assert s["ts"] <= f["ts"]
    linked = {id(f) for _, f in flows}
    # The first backward's ops have no recorded forward op: no flow.
    first = sorted((o for o in ops if o["name"] in _BACKWARD and o["tid"] == tids["worker"]),
                   key=lambda o: o["ts"])[:3]
    assert [o["args"]["Sequence number"] for o in first] == [2, 1, 0]
    assert not any(id(o) in linked for o in first)
