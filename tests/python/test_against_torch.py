"""aiprof against the anchor, torch.profiler, in the same run.

Both profilers watch the same deterministic CPU training loops
(examples/python/train_mlp.py and train_cnn.py) with the same schedule:
the traces must come at the same steps, and every trace must hold the
same number of calls of every aten:: op.  Both record the same ops (a
global RecordFunction callback and torch's thread-local one see the same
calls); aiprof's events() folds nested same-name ops as torch's EventList
does, so key_averages counts compare one to one — up to one artefact of
torch's clock, see _assert_same_counts.
"""
import re

import pytest

import aiprof
from conftest import needs_torch

pytestmark = needs_torch

SCHEDULES = [
    dict(wait=1, warmup=1, active=2, repeat=1),
    dict(wait=0, warmup=0, active=1, repeat=2, skip_first=1),
    dict(wait=1, warmup=0, active=2, repeat=0),
    dict(wait=2, warmup=1, active=1, repeat=2, skip_first=2),
]


def _aten_counts(prof):
    return {e.key: e.count for e in prof.key_averages() if e.key.startswith("aten::")}


def _close_calls(prof):
    """Per aten:: name, how many calls start less than 1 µs after the start
    of the previous call of that name on the same thread, once it ended."""
    last, close = {}, {}
    for e in sorted(prof.events(), key=lambda e: e.time_range.start):
        if not e.name.startswith("aten::"):
            continue
        prev = last.get((e.thread, e.name))
        if prev is not None and prev.time_range.end <= e.time_range.start \
                and e.time_range.start - prev.time_range.start < 1.0:
            close[e.name] = close.get(e.name, 0) + 1
        last[(e.thread, e.name)] = e
    return close


def _assert_same_counts(torch_counts, aiprof_counts, close):
    """Debian's torch 1.13 (no Kineto) keeps op times in whole microseconds.
    When a call and the start of the next same-name call fall in one
    microsecond, the first becomes the second's child and torch's EventList
    folds it away as a nested same-name op; aiprof keeps nanoseconds and
    counts both.  So torch may count fewer calls of a name, by at most the
    number of such close pairs aiprof saw; anything else is a real mismatch."""
    assert set(aiprof_counts) == set(torch_counts)
    for name, n in aiprof_counts.items():
        want = torch_counts[name]
        assert want <= n <= want + close.get(name, 0), (name, n, want, close.get(name, 0))


def _run_both(example, sched, steps, torch_options=None, **options):
    import torch
    model, optimizer, x, y = example.build()
    torch_traces, aiprof_traces = [], []
    tp = torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=None if sched is None else torch.profiler.schedule(**sched),
        on_trace_ready=lambda p: torch_traces.append((p.step_num, _aten_counts(p))),
        **(options if torch_options is None else torch_options))
    ap = aiprof.profiler.profile(
        activities=[aiprof.profiler.ProfilerActivity.CPU],
        schedule=None if sched is None else aiprof.profiler.schedule(**sched),
        on_trace_ready=lambda p: aiprof_traces.append(
            (p.step_num, (_aten_counts(p), _close_calls(p)))),
        **options)
    # torch 1.13's own ProfilerStep marker makes a tensor (aten::zeros) inside
    # torch's step(), after its trace switches: aiprof starts outside and
    # steps first, so both profilers see those ops in the same windows.
    with ap, tp:
        for _ in range(steps):
            example.train_step(model, optimizer, x, y)
            ap.step()
            tp.step()
    return torch_traces, aiprof_traces


@pytest.mark.parametrize("sched", SCHEDULES + [None],
                         ids=[str(s) for s in SCHEDULES] + ["no schedule"])
def test_mlp_matches_torch(sched):
    import train_mlp
    torch_traces, aiprof_traces = _run_both(train_mlp, sched, 9)
    assert [s for s, _ in aiprof_traces] == [s for s, _ in torch_traces]
    assert torch_traces, "the schedule saved no trace"
    # A trace whose active step is the loop's last may hold no op: torch 2.x
    # (Kineto) saves it empty at exit, as aiprof does; one trace must hold ops.
    assert any(t for _, t in torch_traces), "no trace holds an op"
    for (_, t), (_, (a, close)) in zip(torch_traces, aiprof_traces):
        _assert_same_counts(t, a, close)


@pytest.mark.parametrize("options", [{}, dict(record_shapes=True, profile_memory=True,
                                              with_stack=True, with_modules=True)],
                         ids=["default", "all options"])
def test_cnn_matches_torch(options):
    import train_cnn
    sched = dict(wait=1, warmup=1, active=2, repeat=1)
    # torch's with_stack tracer asserts when any other profile hook (aiprof's,
    # cProfile's) was active before it starts, so torch runs without it;
    # stacks do not change which ops run.
    torch_options = {k: v for k, v in options.items() if k != "with_stack"}
    torch_traces, aiprof_traces = _run_both(train_cnn, sched, 6, torch_options, **options)
    assert [s for s, _ in aiprof_traces] == [s for s, _ in torch_traces] == [4]
    counts, close = aiprof_traces[0][1]
    _assert_same_counts(torch_traces[0][1], counts, close)
    assert "aten::convolution_backward" in counts


def test_trace_ready_steps_match_torch_without_ops():
    """Schedules alone (no torch ops): the same steps call on_trace_ready."""
    import torch
    for sched in SCHEDULES:
        t_steps, a_steps = [], []
        tp = torch.profiler.profile(schedule=torch.profiler.schedule(**sched),
                                    on_trace_ready=lambda p: t_steps.append(p.step_num))
        ap = aiprof.profiler.profile(schedule=aiprof.profiler.schedule(**sched),
                                     on_trace_ready=lambda p: a_steps.append(p.step_num))
        with ap, tp:
            for _ in range(11):
                ap.step()
                tp.step()
        assert a_steps == t_steps, sched
        for step in range(15):
            assert aiprof.profiler.schedule(**sched)(step).name == \
                torch.profiler.schedule(**sched)(step).name


def test_torch_schedule_object_is_accepted():
    """A torch.profiler script passes torch's schedule; it is followed."""
    import torch
    steps = []
    with aiprof.profiler.profile(
            schedule=torch.profiler.schedule(wait=1, warmup=0, active=1, repeat=2),
            on_trace_ready=lambda p: steps.append(p.step_num)) as prof:
        for _ in range(6):
            prof.step()
    assert steps == [2, 4]


def _profile_both(work, **options):
    """`work()` under torch.profiler, then under aiprof (its trace saved
    in ./r); both profiles."""
    import torch
    with torch.profiler.profile(**options) as tp:
        work()
    with aiprof.profiler.profile(
            on_trace_ready=aiprof.profiler.tensorboard_trace_handler("./r"), **options) as ap:
        work()
    return tp, ap


def test_callable_schedule_followed_like_torch():
    """torch.profiler takes any callable step -> ProfilerAction as its
    schedule: the session asks it at every step, and the traces come at
    the steps torch's come at, with the same ops."""
    import torch
    import train_mlp
    A = torch.profiler.ProfilerAction
    cycle = [A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE, A.RECORD_AND_SAVE]
    asked = []

    def life(step):
        asked.append(step)
        return cycle[step % len(cycle)]

    model, optimizer, x, y = train_mlp.build()
    t_traces, a_traces = [], []
    tp = torch.profiler.profile(schedule=life, on_trace_ready=lambda p: t_traces.append(
        (p.step_num, _aten_counts(p))))
    ap = aiprof.profiler.profile(schedule=life, on_trace_ready=lambda p: a_traces.append(
        (p.step_num, (_aten_counts(p), _close_calls(p)))))
    with ap, tp:
        for _ in range(13):
            train_mlp.train_step(model, optimizer, x, y)
            ap.step()
            tp.step()
    assert [s for s, _ in a_traces] == [s for s, _ in t_traces] == [4, 6, 10, 12]
    for (_, t), (_, (a, close)) in zip(t_traces, a_traces):
        _assert_same_counts(t, a, close)
    assert set(asked) == set(range(14))  # step 0 at start, then each step


def test_long_input_descriptions_match_torch():
    """Ops with many input dimensions (three 16-D or 64-D tensors, three
    7-D ones) get the input shapes torch.profiler gives them, not []."""
    import torch
    a16, a64, a7 = torch.ones([1] * 16), torch.ones([1] * 64), torch.ones(2, 3, 4, 5, 6, 7, 8)
    c16, c64 = a16 > 0, a64 > 0

    def work():
        torch.where(c16, a16, a16)
        torch.where(c64, a64, a64)
        torch.addcmul(a7, a7, a7)

    def shapes(prof):
        return sorted((e.key, str(e.input_shapes), e.count)
                      for e in prof.key_averages(group_by_input_shape=True)
                      if e.key in ("aten::where", "aten::addcmul"))

    tp, ap = _profile_both(work, record_shapes=True)
    want = shapes(tp)
    assert {w[1] for w in want} >= {str([[1] * 16] * 3), str([[1] * 64] * 3)}
    assert shapes(ap) == want
    from conftest import result_dirs, slices, trace_of
    wheres = slices(trace_of(result_dirs("./r")[0]), "cpu_op", "aten::where")
    assert [w["args"]["Input type"] for w in wheres] == ["[bool, float, float]"] * 2


def _flops_by_key(prof):
    return {e.key: e.flops for e in prof.key_averages() if e.flops}


def test_flops_match_torch():
    """with_flops: the same estimates as torch.profiler for every op it
    estimates (matrix products, conv2d, mul, add), in the same run."""
    import torch
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1, dilation=1, groups=1)
    grouped = torch.nn.Conv2d(4, 8, (3, 2), stride=(1, 2), padding=(2, 0), dilation=2, groups=2)
    lin = torch.nn.Linear(16, 4)
    x, xg = torch.randn(2, 3, 9, 9), torch.randn(1, 4, 10, 7)
    a = torch.randn(5, 16)
    b1, b2, b0 = torch.randn(3, 4, 5), torch.randn(3, 5, 6), torch.randn(3, 4, 6)

    def work():
        conv(x)
        grouped(xg)
        lin(a)
        torch.bmm(b1, b2)
        torch.baddbmm(b0, b1, b2)
        torch.mm(a, a.t())
        a * 2
        a + a
        conv(x).sum().backward()

    tp, ap = _profile_both(work, with_flops=True)
    want = _flops_by_key(tp)
    assert {"aten::conv2d", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::mm",
            "aten::mul", "aten::add"} <= set(want)
    assert _flops_by_key(ap) == want
    # The trace carries each estimate as the op's "flops" argument, and
    # shapes come with it (with_flops implies them, as in torch).
    from conftest import result_dirs, slices, trace_of
    trace = trace_of(result_dirs("./r")[0])
    convs = slices(trace, "cpu_op", "aten::conv2d")
    plain, grouped_flops = 2 * 2 * 5 * 5 * 3 * 3 * 3 * 8, 2 * 1 * 10 * 3 * 3 * 2 * 4 * 8 // 2
    assert [c["args"]["flops"] for c in convs] == [plain, grouped_flops, plain]
    assert all("Input Dims" in c["args"] for c in convs)
    assert all("flops" not in e.get("args", {}) for e in slices(trace, "cpu_op", "aten::t"))
    # The table gets torch's column, scaled by the smallest estimate (mul's
    # 80 here: plain FLOPs), "--" where an op has none.
    table = ap.key_averages().table(sort_by="cpu_time_total", row_limit=-1)
    assert "Total FLOPs" in table.splitlines()[1]
    assert re.search(r"aten::conv2d .* 48960\.000  $", table, re.M)
    assert re.search(r"aten::t .*  --  $", table, re.M)
    conv_only = [e for e in ap.key_averages() if e.key == "aten::conv2d"]
    assert conv_only[0].flops == 2 * plain + grouped_flops


def test_no_flops_without_with_flops():
    import torch
    with aiprof.profiler.profile(
            on_trace_ready=aiprof.profiler.tensorboard_trace_handler("./r")) as ap:
        torch.mm(torch.ones(2, 3), torch.ones(3, 4))
    assert not _flops_by_key(ap)
    assert "FLOPs" not in ap.key_averages().table()


def test_summary_knows_flops_bring_shapes():
    """`aiprof summary` of a with_flops profile: shapes were recorded (with_flops
    implies them), and the FLOPs note says which ops have estimates."""
    import os
    import subprocess
    import torch
    from conftest import result_dirs
    with aiprof.profiler.profile(
            with_flops=True, on_trace_ready=aiprof.profiler.tensorboard_trace_handler("./r")):
        torch.mm(torch.ones(2, 3), torch.ones(3, 4))
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(aiprof.__file__)))
    cli = os.path.join(os.path.dirname(pkg), "bin", "aiprof")
    out = subprocess.run([cli, "summary", result_dirs("./r")[0]], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "input shapes not recorded" not in out.stdout
    assert "with_flops: FLOPs are estimated" in out.stdout
