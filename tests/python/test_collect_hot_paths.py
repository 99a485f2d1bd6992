"""The per-op caches of with_stack and record_shapes give the same answers
as a first lookup: the thread's cache of stack positions (pytracer.c,
node_of) and the adapter's input-description table (adapters/torch
inputs.cpp), each hit again within a trace and in the next trace; and
profile_memory's block table (adapters/torch/memory.cpp) finds every
block's size as it grows and shrinks, on several threads."""
import os

from aiprof import profiler as P
from conftest import events_of, needs_torch, result_dirs, slices, trace_of

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


def _add_dims(trace):
    return [a["args"]["Input Dims"] for a in slices(trace, "cpu_op", "aten::add")]



def _check_add_descriptions(steps, path):
    """One add of a ones(n) tensor per n of each step, recorded with
    record_shapes into `path`: every add gets its own Input Dims."""
    import torch
    tensors = {n: torch.ones(n) for s in steps for n in s}
    with _trace(path, record_shapes=True):
        for s in steps:
            for n in s:
                tensors[n].add(1.0)
    assert _add_dims(trace_of(result_dirs(path)[0])) == \
        [f"[[{n}], [], []]" for s in steps for n in s]

@needs_torch
def test_input_descriptions_when_the_op_sequence_changes():
    # record_shapes tries the entry that followed the previous op last time
    # before it hashes the key: a step that repeats the last one is found
    # that way, and every kind of change (shapes swapped, one shape new,
    # the order reversed, ops left out, the same op twice) must still get
    # its own description.
    base = list(range(1, 41))
    steps = [base, base, base[::-1], [n + 100 if n % 7 == 0 else n for n in base],
             base[::2], [n for n in base for _ in (0, 1)], base, base]
    _check_add_descriptions(steps, "./p")


@needs_torch
def test_input_descriptions_after_the_sequence_is_learnt_and_relearnt():
    # More ops than the sequence learns (8192): past them it is replayed,
    # and a loop that changes for long (misses past a quarter) is learnt
    # again; through all of it, each op gets its own description.
    a = list(range(1, 51))
    b = [n + 1000 for n in range(1, 31)] + list(range(25, 5, -1))
    plan = [a] * 200 + [b] * 100 + [a[::-1]] * 20 + [a] * 20
    _check_add_descriptions(plan, "./l")


@needs_torch
def test_input_descriptions_when_the_table_empties_mid_sequence():
    # Keys long enough that the thread's key arena (2^20 words) fills and
    # the table starts again while a sequence is being followed: each op
    # still gets its own description, before and after, and on the next
    # round.  (detach: cheap on tensors of thousands of dimensions.)
    import torch
    dims = [9000 + 13 * i for i in range(130)]  # ~1.2 M key words
    tensors = [torch.ones([1] * d) for d in dims]
    with _trace("./w", record_shapes=True):
        for _ in range(2):
            for t in tensors:
                t.detach()
    got = [a["args"]["Input Dims"]
           for a in slices(trace_of(result_dirs("./w")[0]), "cpu_op", "aten::detach")]
    assert got == [f"[[{', '.join(['1'] * d)}]]" for d in dims] * 2


@needs_torch
def test_input_descriptions_of_threads_running_other_sequences():
    # Each thread follows its own sequence in its own table: two threads
    # alternating the same op on different shapes never take each other's.
    import threading
    import torch
    xs = {k: [torch.ones(k, n) for n in range(1, 30)] for k in (2, 3)}
    barrier = threading.Barrier(2)

    def work(k):
        barrier.wait()
        for _ in range(20):
            for x in xs[k]:
                x.add(1.0)

    with _trace("./th", record_shapes=True):
        threads = [threading.Thread(target=work, args=(k,)) for k in (2, 3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    adds = slices(trace_of(result_dirs("./th")[0]), "cpu_op", "aten::add")
    by_tid = {}
    for a in adds:
        by_tid.setdefault(a["tid"], []).append(a["args"]["Input Dims"])
    assert sorted(by_tid.values()) == sorted(
        [[f"[[{k}, {n}], [], []]" for n in range(1, 30)] * 20 for k in (2, 3)])


def _check_phases(mem):
    """Memory events of phases that only allocate or only free, in time
    order: every free has its allocation's size, and each phase's totals
    are the running sum in the order the table's lock gave (two threads'
    events may be timed in the other order: the clock is read after the
    lock).  Returns the blocks still alive."""
    live, total, i = {}, mem[0]["Total Allocated"] - mem[0]["Bytes"], 0
    while i < len(mem):
        j = i
        while j < len(mem) and (mem[j]["Bytes"] > 0) == (mem[i]["Bytes"] > 0):
            j += 1
        phase = mem[i:j]
        for m in phase:
            if m["Bytes"] > 0:
                live[m["Addr"]] = m["Bytes"]
            else:
                assert live.pop(m["Addr"]) == -m["Bytes"]
        grows = phase[0]["Bytes"] > 0
        for m in sorted(phase, key=lambda m: m["Total Allocated"], reverse=not grows):
            assert m["Total Allocated"] - m["Bytes"] == total
            total = m["Total Allocated"]
        i = j
    return live


@needs_torch
def test_memory_table_shrinks_and_grows_again_on_threads():
    # Bursts of live blocks on two threads at once, each freed out of order
    # and by the other thread: the block table doubles during a burst,
    # halves as it empties, and grows again for the next one; every free
    # still finds its block's size, and the totals, kept under the table's
    # lock, add up in the order the events were recorded.
    import random
    import threading
    import torch
    barrier = threading.Barrier(2)
    made = {0: [], 1: []}

    def burst(k, n):
        barrier.wait()
        made[k] = [torch.empty(32 + 8 * (i % 13)) for i in range(n)]

    def free_other(k):
        barrier.wait()
        random.Random(k).shuffle(made[1 - k])
        del made[1 - k][:]

    with _trace("./m", profile_memory=True):
        for n in (3000, 200, 3000):
            for target in (burst, free_other):
                threads = [threading.Thread(target=target, args=(k,) if target is free_other
                                            else (k, n)) for k in (0, 1)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
    mem = [e for e in events_of(result_dirs("./m")[0]) if e.get("name") == "[memory]"]
    mem.sort(key=lambda e: float(e["ts"]))
    assert _check_phases([e["args"] for e in mem]) == {}
    assert sum(1 for e in mem if e["args"]["Bytes"] < 0) == 2 * (3000 + 200 + 3000)
