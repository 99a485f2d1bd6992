"""The per-op caches of with_stack and record_shapes give the same answers
as a first lookup: the thread's cache of stack positions (pytracer.c,
node_of) and the adapter's input-description table (adapters/torch
inputs.cpp), each hit again within a trace and in the next trace."""
import os

from aiprof import profiler as P
from conftest import needs_torch, result_dirs, slices, trace_of

HERE = os.path.basename(__file__)


def _trace(path, **kwargs):
    return P.profile(on_trace_ready=P.tensorboard_trace_handler(path), **kwargs)


def _lines_of(stack):
    """(function, line) of each frame of a Call stack text, innermost first,
    for the frames of this file."""
    out = []
    for frame in stack.split(";\n"):
        if os.path.basename(frame.split("(", 1)[0]) == HERE:
            line = int(frame.split("(", 1)[1].split(")", 1)[0])
            out.append((frame.rsplit(": ", 1)[1], line))
    return out


def _outermost(ops):
    """Ops not inside another of the same name (aten::abs runs an inner
    aten::abs, its out= variant, with the same stack)."""
    return [o for o in ops if not any(p is not o and p["ts"] <= o["ts"] and
                                      o["ts"] + o["dur"] <= p["ts"] + p["dur"] for p in ops)]


def _two_ops(torch, x):
    a = torch.neg(x)  # first op line
    b = torch.abs(x)  # second op line, same frame
    return a, b


def _caller_one(torch, x):
    return _two_ops(torch, x)


def _caller_two(torch, x):
    return _two_ops(torch, x)


@needs_torch
def test_stacks_of_ops_at_several_lines_and_callers_over_traces():
    import torch
    x = torch.ones(4)
    code = _two_ops.__code__
    first = code.co_firstlineno + 1
    line_of = {"aten::neg": first, "aten::abs": first + 1}
    callers = {"_caller_one": _caller_one.__code__.co_firstlineno + 1,
               "_caller_two": _caller_two.__code__.co_firstlineno + 1}
    for path in ("./t1", "./t2"):
        with _trace(path, with_stack=True):
            for _ in range(3):
                _caller_one(torch, x)
                _caller_two(torch, x)
        trace = trace_of(result_dirs(path)[0])
        seen = []
        for name in ("aten::neg", "aten::abs"):
            ops = _outermost(slices(trace, "cpu_op", name))
            assert len(ops) == 6
            for op in ops:
                frames = _lines_of(op["args"]["Call stack"])
                assert frames[0] == ("_two_ops", line_of[name])
                assert frames[1][0] in callers and frames[1][1] == callers[frames[1][0]]
                seen.append((name, frames[1][0]))
        # Calls alternate between the two callers, for both ops.
        assert sorted(set(seen)) == sorted((n, c) for n in line_of for c in callers)
        assert [c for n, c in seen[:6]] == ["_caller_one", "_caller_two"] * 3


@needs_torch
def test_input_kinds_of_list_inputs_over_traces():
    # Int lists are told apart before tensor lists: both must still be
    # named as torch names them, on a first description and on cache hits.
    import torch
    import torch.nn.functional as F
    x = torch.ones(1, 2, 5, 5)
    w = torch.ones(3, 2, 3, 3)
    a, b = torch.ones(2, 3), torch.ones(4, 3)
    for path in ("./s1", "./s2"):
        with _trace(path, record_shapes=True):
            for _ in range(3):
                torch.cat([a, b], 0)
                F.conv2d(x, w, None, (1, 1), (1, 1))
                torch.ones(3).add(torch.ones(3), alpha=2)
        trace = trace_of(result_dirs(path)[0])
        cats = slices(trace, "cpu_op", "aten::cat")
        assert len(cats) == 3
        assert {c["args"]["Input type"] for c in cats} == {"[TensorList, Scalar]"}
        assert {c["args"]["Input Dims"] for c in cats} == {"[[], []]"}
        convs = slices(trace, "cpu_op", "aten::conv2d")
        assert len(convs) == 3
        assert {c["args"]["Input type"] for c in convs} == \
            {"[float, float, , ScalarList, ScalarList, ScalarList, Scalar]"}
        assert {c["args"]["Input Dims"] for c in convs} == \
            {"[[1, 2, 5, 5], [3, 2, 3, 3], [], [], [], [], []]"}
        adds = slices(trace, "cpu_op", "aten::add")
        assert len(adds) == 3
        assert {c["args"]["Input type"] for c in adds} == {"[float, float, Scalar]"}
