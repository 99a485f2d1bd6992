"""What each switch records, and the result API (events, key_averages,
table, exports, itt, mstx, record_function, threads)."""
import gc
import gzip
import json
import os
import re
import threading

import pytest

import aiprof
from aiprof import profiler as P
from aiprof.profiler import profiler as profiler_module
from conftest import (events_of, needs_torch, result_dirs, run_python, slices, trace_events,
                      trace_of)


def _one_trace(**kwargs):
    return P.profile(on_trace_ready=P.tensorboard_trace_handler("./r"), **kwargs)


def test_names_resolve_as_torch_npu():
    import aiprof as torch_npu
    for name in ["profile", "_KinetoProfile", "ProfilerActivity", "ProfilerAction", "schedule",
                 "tensorboard_trace_handler", "_ExperimentalConfig", "ExportType",
                 "ProfilerLevel", "AiCMetrics", "HostSystem", "supported_activities",
                 "supported_profiler_level", "supported_ai_core_metrics",
                 "supported_export_type", "record_function", "itt"]:
        assert hasattr(torch_npu.profiler, name), name
    for name in ["mark", "range_start", "range_end", "mstx_range"]:
        assert callable(getattr(torch_npu.npu.mstx, name))
        assert getattr(aiprof.mstx, name) is getattr(torch_npu.npu.mstx, name)
    from aiprof.profiler.profiler import analyse  # noqa: F401
    from aiprof.profiler._profiler_path_creator import ProfPathCreator  # noqa: F401
    from aiprof import _C
    found = _C.supported_activities() & 2  # a device back end finds a device here
    assert P.supported_activities() == ({P.ProfilerActivity.CPU, P.ProfilerActivity.NPU}
                                        if found else {P.ProfilerActivity.CPU})
    assert P.supported_ai_core_metrics() == set()
    assert P.supported_export_type() == {P.ExportType.Text, P.ExportType.Db}
    assert P.ProfilerLevel.Level0 in P.supported_profiler_level()
    assert [a.value for a in P.ProfilerAction] == [0, 1, 2, 3, 4]  # torch 2.x: DEVICE_STOPPED
    assert {a.name for a in P.ProfilerActivity} == {"CPU", "NPU", "CUDA", "XPU", "MTIA"}


def test_record_function_and_threads():
    @P.record_function("decorated")
    def work(n):
        with P.record_function(f"inner{n}"):
            pass

    with _one_trace() as prof:
        work(0)
        threads = [threading.Thread(target=work, args=(i,)) for i in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    trace = trace_of(result_dirs("./r")[0])
    deco = slices(trace, "user_annotation", "decorated")
    assert len(deco) == 3 and len({e["tid"] for e in deco}) == 3
    events = prof.events()
    inner = [e for e in events if e.name.startswith("inner")]
    assert all(e.cpu_parent.name == "decorated" for e in inner)


def test_mtia_activity_accepted_as_unsupported(monkeypatch):
    # torch.profiler.ProfilerActivity has MTIA: accepted, warned about, and
    # the rest recorded (XPU selects device collection: test_device_activity).
    monkeypatch.setattr(profiler_module, "_warned", set())

    class TorchMember:  # torch's members are matched by name
        name = "MTIA"
    with pytest.warns(RuntimeWarning, match="no MTIA back end"):
        with _one_trace(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.XPU,
                                    TorchMember()]):
            with P.record_function("on_cpu"):
                pass
    assert slices(trace_of(result_dirs("./r")[0]), "user_annotation", "on_cpu")
    monkeypatch.setattr(profiler_module, "_warned", set())
    with pytest.warns(RuntimeWarning, match="no MTIA back end"):
        with P.profile(activities=[P.ProfilerActivity.MTIA]):
            pass


@pytest.mark.parametrize("async_mode", [False, True])
def test_trace_handler_use_gzip(async_mode):
    # torch.profiler's use_gzip: trace_view.json.gz beside trace_view.json.
    from aiprof.profiler import _analyse
    for use_gzip in (False, True):
        handler = P.tensorboard_trace_handler(f"./r{use_gzip}", async_mode=async_mode,
                                              use_gzip=use_gzip)
        with P.profile(on_trace_ready=handler):
            with P.record_function("x"):
                pass
        d = result_dirs(f"./r{use_gzip}")[0]
        _analyse.wait_for(d)
        out = os.path.join(d, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
        assert os.path.exists(out + ".gz") is use_gzip
        if use_gzip:
            with gzip.open(out + ".gz") as fz, open(out, "rb") as f:
                assert fz.read() == f.read()
    with pytest.raises(TypeError, match="use_gzip"):
        P.tensorboard_trace_handler(use_gzip="yes")
    with pytest.warns(UserWarning, match="use_gzip has no effect"):
        P.tensorboard_trace_handler(analyse_flag=False, use_gzip=True)


def test_mstx_and_itt_recorded_with_mstx_on():
    cfg = P._ExperimentalConfig(mstx=True)
    with _one_trace(experimental_config=cfg):
        aiprof.mstx.mark("m1")
        rid = aiprof.mstx.range_start("cross_thread", domain="d1")
        t = threading.Thread(target=aiprof.mstx.range_end, args=(rid, "d1"))
        t.start()
        t.join()
        assert P.itt.range_push("outer") == 0
        assert P.itt.range_push("inner") == 1
        assert P.itt.range_pop() == 1
        assert P.itt.range_pop() == 0
        assert P.itt.range_pop() == -1
        P.itt.mark("itt_mark")

        @aiprof.mstx.mstx_range("decorated_range")
        def f():
            return 7
        assert f() == 7
    assert rid != 0 and P.itt.is_available()
    trace = trace_of(result_dirs("./r")[0])
    names = {e["name"] for e in trace_events(trace) if e.get("cat") == "mstx"}
    assert {"m1", "cross_thread", "outer", "inner", "itt_mark", "decorated_range"} <= names


def test_mstx_off_records_nothing():
    with _one_trace():
        assert aiprof.mstx.range_start("r") == 0
        aiprof.mstx.mark("m")
    trace = trace_of(result_dirs("./r")[0])
    assert not [e for e in trace_events(trace) if e.get("cat") == "mstx"]


def test_gc_events():
    cfg = P._ExperimentalConfig(gc_detect_threshold=0)
    with _one_trace(experimental_config=cfg):
        gc.collect()
        gc.collect()
    assert gc.callbacks.count(aiprof._C.gc_callback) == 0  # removed at stop
    trace = trace_of(result_dirs("./r")[0])
    assert len(slices(trace, "GC")) >= 2


def test_metadata_and_profiler_info():
    with _one_trace(record_shapes=True) as prof:
        prof.add_metadata("run", "seed 0")
        prof.add_metadata_json("dims", json.dumps({"tp": 2, "pp": 4}))
    d = result_dirs("./r")[0]
    with open(os.path.join(d, "profiler_metadata.json")) as f:
        meta = json.load(f)
    assert meta["run"] == "seed 0" and meta["dims"] == {"tp": 2, "pp": 4}
    with open(os.path.join(d, "profiler_info.json")) as f:
        info = json.load(f)
    assert info["config"]["common_config"]["record_shapes"] is True
    assert events_of(d)[0]  # analysed
    names = {e.get("args", {}).get("name") for e in events_of(d)
             if e.get("name") == "process_name"}
    assert "Python" in names


def test_metadata_before_start_is_kept():
    prof = _one_trace()
    prof.add_metadata("early", "yes")
    with prof:
        pass
    with open(os.path.join(result_dirs("./r")[0], "profiler_metadata.json")) as f:
        assert json.load(f)["early"] == "yes"


def test_async_analysis_and_analyse_flag():
    with P.profile(on_trace_ready=P.tensorboard_trace_handler("./a", async_mode=True)) as prof:
        with P.record_function("x"):
            pass
    assert [e.name for e in prof.events()] == ["x"]  # waits for the background analysis
    with P.profile(on_trace_ready=P.tensorboard_trace_handler("./n", analyse_flag=False,
                                                            worker_name="w1")):
        pass
    d = result_dirs("./n")
    assert len(d) == 1 and os.path.basename(d[0]).startswith("w1_")
    assert not os.path.exists(os.path.join(d[0], "ASCEND_PROFILER_OUTPUT"))


@needs_torch
def test_record_shapes_stack_modules_memory():
    import torch
    import train_mlp
    model, opt, x, y = train_mlp.build(batch=4, features=8, hidden=16)
    with _one_trace(record_shapes=True, with_stack=True, with_modules=True,
                    profile_memory=True) as prof:
        train_mlp.train_step(model, opt, x, y)
    trace = trace_of(result_dirs("./r")[0])
    addmm = slices(trace, "cpu_op", "aten::addmm")
    assert len(addmm) == 3
    a = addmm[0]["args"]
    assert a["Input Dims"] == "[[16], [4, 8], [8, 16], [], []]"
    assert a["Input type"] == "[float, float, float, Scalar, Scalar]"
    frames = a["Call stack"].split(";\n")
    assert re.search(r"torch/nn/modules/linear\.py\(\d+\): forward$", frames[0])
    assert any("train_mlp.py(" in f and f.endswith(": train_step") for f in frames)
    assert a["Module Hierarchy"] == "nn.Module: Sequential_0;nn.Module: Linear_0"
    assert [e["args"]["Module Hierarchy"].rsplit(";", 1)[1] for e in addmm] == \
        ["nn.Module: Linear_0", "nn.Module: Linear_1", "nn.Module: Linear_2"]
    backward = [e for e in slices(trace, "cpu_op") if e["name"] == "AddmmBackward0"]
    assert backward and "Call stack" not in backward[0].get("args", {})
    assert backward[0]["args"]["Fwd thread id"] == a.get("Fwd thread id", 0) or \
        backward[0]["args"]["Fwd thread id"] == addmm[0]["tid"]
    mem = [e for e in trace_events(trace) if e.get("name") == "[memory]"]
    assert mem and sum(e["args"]["Bytes"] for e in mem) >= 0
    assert all(e["args"]["Device Type"] == 0 for e in mem)
    # Results: shapes and stacks group like torch's.
    by_shape = prof.key_averages(group_by_input_shape=True)
    assert any(e.key == "aten::addmm" and e.input_shapes == [[16], [4, 8], [8, 16], [], []]
               for e in by_shape)
    by_stack = prof.key_averages(group_by_stack_n=2)
    assert any(e.key == "aten::addmm" and len(e.stack) == 2 for e in by_stack)
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    assert "CPU Mem" in table and table.rstrip().splitlines()[-1].startswith(
        "Self CPU time total:")
    assert len(table.strip().splitlines()) == 5 + 5  # header block, rows, rule, footer
    stacked = prof.key_averages(group_by_stack_n=1).table(row_limit=3)
    assert "Source Location" in stacked
    # events(): torch's FunctionEvent shape.
    ev = [e for e in prof.events() if e.name == "aten::addmm"][0]
    assert ev.cpu_time_total >= ev.self_cpu_time_total >= 0
    assert ev.cpu_parent is not None and ev in ev.cpu_parent.cpu_children
    assert ev.cpu_memory_usage >= 0 and ev.thread == addmm[0]["tid"]
    del torch


@needs_torch
def test_many_distinct_shapes_each_described():
    # More distinct (op, shapes) keys than the adapter's first shape table
    # holds, each seen twice: every op keeps its own description as the
    # table grows and is looked up again.
    import torch
    sizes = list(range(1, 1201))
    with _one_trace(record_shapes=True):
        for _ in range(2):
            for n in sizes:
                torch.ones(n).add(1.0)
    adds = slices(trace_of(result_dirs("./r")[0]), "cpu_op", "aten::add")
    assert [a["args"]["Input Dims"] for a in adds] == [f"[[{n}], [], []]" for n in sizes] * 2
    # torch wraps the Python number in a 0-dim double tensor.
    assert {a["args"]["Input type"] for a in adds} == {"[float, double, Scalar]"}


@needs_torch
def test_inputs_too_long_to_describe_are_cut_visibly():
    # Input texts stay under libaiprof's string limit: inputs past about
    # 60000 characters become one last "..." entry, never an empty list.
    import torch
    a = torch.ones([1] * 12000)          # "1, " x 12000: two of them are too long
    c = a > 0
    with _one_trace(record_shapes=True) as prof:
        torch.where(c, a, a)
    where = slices(trace_of(result_dirs("./r")[0]), "cpu_op", "aten::where")[0]
    assert json.loads(where["args"]["Input Dims"]) == [[1] * 12000, "..."]
    assert where["args"]["Input type"] == "[bool, ...]"
    events = [e for e in prof.events() if e.name == "aten::where"]
    assert events[0].input_shapes == [[1] * 12000, "..."]


@needs_torch
def test_every_free_matches_its_allocation():
    # Thousands of live blocks freed in a shuffled order: the adapter's
    # block table grows and deletes out of order, and every free must still
    # find its block's size.
    import random
    import torch
    with _one_trace(profile_memory=True):
        blocks = [torch.empty(64 + 8 * (i % 97)) for i in range(20000)]
        random.Random(0).shuffle(blocks)
        del blocks[:]
    mem = [e["args"] for e in events_of(result_dirs("./r")[0])
           if e.get("name") == "[memory]"]
    live = {}
    for m in mem:
        if m["Bytes"] > 0:
            live[m["Addr"]] = m["Bytes"]
        else:
            assert live.pop(m["Addr"]) == -m["Bytes"]
    assert sum(1 for m in mem if m["Bytes"] < 0) >= 20000
    assert mem[-1]["Total Allocated"] == mem[0]["Total Allocated"] - mem[0]["Bytes"] + \
        sum(live.values())


@needs_torch
def test_exports(train_one_step):
    with _one_trace(with_stack=True, profile_memory=True) as prof:
        for _ in range(3):
            train_one_step()
    prof.export_chrome_trace("out/trace.json")
    prof.export_chrome_trace("out/trace.json.gz")
    with open("out/trace.json") as f:
        plain = json.load(f)
    with gzip.open("out/trace.json.gz", "rt") as f:
        assert json.load(f) == plain
    assert plain == trace_of(result_dirs("./r")[0])

    prof.export_stacks("out/stacks.txt", "self_cpu_time_total")
    with open("out/stacks.txt") as f:
        lines = f.read().splitlines()
    assert lines
    total = 0
    for line in lines:
        path, value = line.rsplit(" ", 1)
        assert int(value) > 0 and " " not in path
        frames = path.split(";")
        assert frames[0].endswith("<module>") or "(" in frames[0]
        total += int(value)
    assert any(line.rsplit(" ", 1)[0].endswith(";aten::addmm") for line in lines)
    self_total = sum(e.self_cpu_time_total for e in prof.events() if e.stack)
    assert total <= self_total + len(lines)
    with pytest.warns(RuntimeWarning, match="no device data.*written empty"):
        prof.export_stacks("out/npu.txt", "self_npu_time_total")  # no device time: empty
    assert os.path.getsize("out/npu.txt") == 0

    prof.export_memory_timeline("out/mem.raw.json.gz", device="cpu")
    with gzip.open("out/mem.raw.json.gz", "rt") as f:
        raw = json.load(f)
    # PREEXISTING (1): the optimizer's parameters, labelled (_memory_labels.py).
    assert raw and {r[1] for r in raw} <= {1, 2, 4} and {r[3] for r in raw} <= set(range(8))
    prof.export_memory_timeline("out/mem.json.gz")
    prof.export_memory_timeline("out/mem.html")
    assert "<svg" in open("out/mem.html").read()


@needs_torch
def test_child_threads_and_autograd_ops_recorded(train_one_step):
    import torch
    x = torch.randn(8, 8, requires_grad=True)

    def backward_in_thread():
        (x * 2).sum().backward()

    with _one_trace():
        t = threading.Thread(target=backward_in_thread)
        t.start()
        t.join()
        train_one_step()
    trace = trace_of(result_dirs("./r")[0])
    mul_bw = slices(trace, "cpu_op", "MulBackward0")
    mul = slices(trace, "cpu_op", "aten::mul")
    assert mul_bw and mul
    assert mul_bw[0]["args"]["Fwd thread id"] == mul[0]["tid"]
    assert mul_bw[0]["args"]["Sequence number"] == mul[0]["args"]["Sequence number"]
    assert [e for e in trace_events(trace) if e.get("cat") == "fwdbwd"]


@needs_torch
def test_callbacks_off_between_traces(train_one_step):
    """Steps outside RECORD cost no recording and leave nothing behind."""
    with P.profile(schedule=P.schedule(wait=2, active=1, repeat=1),
                   on_trace_ready=P.tensorboard_trace_handler("./r")) as prof:
        for _ in range(5):
            train_one_step()
            prof.step()
    trace = trace_of(result_dirs("./r")[0])
    steps = [e["name"] for e in slices(trace, "user_annotation") if "ProfilerStep" in e["name"]]
    assert steps == ["ProfilerStep#2"]
    assert len(slices(trace, "cpu_op", "aten::mse_loss")) == 1


@needs_torch
def test_disable_profiler_in_child_thread_leaves_its_ops_out():
    """A thread that calls disable_profiler_in_child_thread() is not
    recorded until it calls enable_...() again; other threads are."""
    import torch
    x = torch.ones(4)
    tids = {}

    def child():
        tids["child"] = threading.get_native_id()
        P.profile.disable_profiler_in_child_thread()
        torch.neg(x)                       # left out
        with P.record_function("hidden"):  # left out
            pass
        P.profile.enable_profiler_in_child_thread()
        torch.abs(x)                       # recorded

    with P.profile(on_trace_ready=P.tensorboard_trace_handler("./r")):
        t = threading.Thread(target=child)
        t.start()
        t.join()
        torch.neg(x)                       # the main thread: recorded
    trace = trace_of(result_dirs("./r")[0])
    # (an op may call its own out= variant: same name, nested)
    assert {e["tid"] for e in slices(trace, "cpu_op", "aten::neg")} == \
        {threading.get_native_id()}
    assert {e["tid"] for e in slices(trace, "cpu_op", "aten::abs")} == {tids["child"]}
    assert not slices(trace, name="hidden")
    with pytest.warns(RuntimeWarning, match="with_modules cannot be turned on for one thread"):
        with P.profile():
            P.profile.enable_profiler_in_child_thread(with_modules=True)


@needs_torch
def test_child_thread_options_shapes_and_flops():
    """enable_profiler_in_child_thread(record_shapes=True, with_flops=True)
    is that thread's collection configuration (the seed): its ops carry
    input shapes and FLOPs though the profile has neither; the main
    thread's ops do not, and disable_...() ends it for the thread."""
    import torch
    a = torch.ones(8, 4)
    b = torch.ones(4, 2)
    tids = {}

    def child():
        tids["child"] = threading.get_native_id()
        P.profile.enable_profiler_in_child_thread(record_shapes=True, with_flops=True)
        torch.mm(a, b)                     # shapes and FLOPs
        P.profile.disable_profiler_in_child_thread()
        P.profile.enable_profiler_in_child_thread()
        torch.mm(b.t(), a.t())             # the options are set anew: none

    with P.profile(on_trace_ready=P.tensorboard_trace_handler("./r")):
        torch.mm(a, b)                     # the main thread: the profile's options
        t = threading.Thread(target=child)
        t.start()
        t.join()
    trace = trace_of(result_dirs("./r")[0])
    main = threading.get_native_id()
    mms = [e for e in slices(trace, "cpu_op", "aten::mm")]
    by_thread = {}
    for e in mms:
        by_thread.setdefault(e["tid"], []).append(e)
    assert set(by_thread) == {main, tids["child"]}, mms
    assert all("Input Dims" not in e.get("args", {}) for e in by_thread[main])
    first, second = sorted(by_thread[tids["child"]], key=lambda e: e["ts"])
    assert first["args"]["Input Dims"] == "[[8, 4], [4, 2]]", first
    assert first["args"]["flops"] == 2 * 8 * 4 * 2, first
    assert "Input Dims" not in second.get("args", {}) and "flops" not in second.get("args", {})


def test_package_works_without_torch():
    code = """
import sys, json, glob, gc
sys.modules["torch"] = None  # any `import torch` fails
import aiprof as torch_npu
def pure_python(i):  # with_stack: a python_function event, torch or not
    return i + 1
cfg = torch_npu.profiler._ExperimentalConfig(mstx=True, gc_detect_threshold=0)
with torch_npu.profiler.profile(
        schedule=torch_npu.profiler.schedule(wait=0, active=2, repeat=1),
        on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./nt"),
        with_stack=True, record_shapes=True, profile_memory=True, with_modules=True,
        experimental_config=cfg) as prof:
    for i in range(2):
        with torch_npu.profiler.record_function("work"):
            torch_npu.npu.mstx.mark("m")
            gc.collect()
            pure_python(i)
        prof.step()
print(prof.key_averages().table())
t = json.load(open(glob.glob("nt/*/ASCEND_PROFILER_OUTPUT/trace_view.json")[0]))
cats = {e.get("cat") for e in t}
assert {"user_annotation", "mstx", "GC", "python_function"} <= cats, cats
calls = [e for e in t if e.get("cat") == "python_function"
         and e["name"].endswith(": pure_python")]
assert len(calls) == 2, calls
"""
    proc = run_python(code)
    assert "work" in proc.stdout and "ProfilerStep*" in proc.stdout


@needs_torch
def test_thread_churn_while_recording():
    import torch
    x = torch.randn(4, 4)

    def work():
        for _ in range(5):
            x.add(1)
    with _one_trace(with_stack=True, record_shapes=True, with_modules=True, profile_memory=True):
        for _ in range(50):
            t = threading.Thread(target=work)
            t.start()
            t.join()
    adds = slices(trace_of(result_dirs("./r")[0]), "cpu_op", "aten::add")
    assert len(adds) == 250 and len({e["tid"] for e in adds}) == 50
    assert all("work" in e["args"]["Call stack"] for e in adds)


@needs_torch
@pytest.mark.parametrize("tracer", ["eval_frame", "profile"])
def test_other_profilers_hook_is_left_alone(tracer, monkeypatch):
    """cProfile holds Python's profile slot.  In profile mode aiprof leaves
    it, warns, and still records the ops (without stacks); in eval-frame
    mode (CPython 3.11) the two do not compete and ops keep their stacks.
    cProfile keeps working either way."""
    import cProfile
    import warnings
    import torch
    from aiprof import _C
    if tracer == "profile":
        monkeypatch.setenv("AIPROF_PY_TRACER", "profile")
    elif _C.tracer_mode() != "eval_frame":
        pytest.skip("this Python has no eval-frame tracer")
    x = torch.randn(4, 4)
    pr = cProfile.Profile()
    pr.enable()
    try:
        if tracer == "profile":
            with pytest.warns(RuntimeWarning, match="profile hook"):
                with _one_trace(with_stack=True):
                    x.add(1)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                with _one_trace(with_stack=True):
                    x.add(1)
    finally:
        pr.disable()
    adds = slices(trace_of(result_dirs("./r")[0]), "cpu_op", "aten::add")
    assert len(adds) == 1
    if tracer == "profile":
        assert "Call stack" not in adds[0].get("args", {})
    else:
        assert "test_features.py" in adds[0]["args"]["Call stack"]
    assert any("add" in str(k) for k in pr.getstats())


def test_flops_column_scale():
    from aiprof.profiler._table import _flops_scale
    assert _flops_scale([]) is None
    assert _flops_scale([80, 10 ** 9]) == (1.0, "FLOPs")
    assert _flops_scale([1500, 2 * 10 ** 6]) == (1e-3, "KFLOPs")
    assert _flops_scale([7 * 10 ** 12]) == (1e-12, "TFLOPs")
    assert _flops_scale([10 ** 21]) == (1e-15, "PFLOPs")  # the largest unit


@needs_torch
def test_options_changed_after_profile_are_honoured():
    """profile() makes its collectors ahead of start(); an option changed
    in between is still what start() records with (as torch.profiler reads
    it at start), and a second start makes fresh collectors."""
    import torch
    x = torch.randn(4, 4)
    prof = P.profile(activities=[P.ProfilerActivity.CPU])
    made = prof._made_collectors[1]
    prof.record_shapes = True
    with prof:
        torch.mm(x, x)
        first = prof._collectors
    assert first is not made  # made with record_shapes=False: not used
    mm = [e for e in prof.events() if e.name == "aten::mm"]
    assert mm and mm[0].input_shapes == [[4, 4], [4, 4]], mm
    prof.record_shapes = False
    prof.start()
    torch.mm(x, x)
    second = prof._collectors
    prof.stop()
    assert second is not first and first is not None
    mm = [e for e in prof.events() if e.name == "aten::mm"]
    assert mm and mm[0].input_shapes == [], mm
    # Unchanged options: start() uses the collectors profile() made.
    prof = P.profile(activities=[P.ProfilerActivity.CPU], record_shapes=True)
    made = prof._made_collectors[1]
    with prof:
        assert prof._collectors is made


def test_default_experimental_config_is_a_fresh_copy():
    """A profile given no experimental_config gets a copy of the default
    one (_ExperimentalConfig._default()): the same state as
    _ExperimentalConfig(), and changing one profile's leaves others alone."""
    Config = P._ExperimentalConfig
    first = P.profile(activities=[P.ProfilerActivity.CPU]).experimental_config
    assert isinstance(first, Config) and vars(first) == vars(Config())
    assert first is not Config._shared_default()  # what profiles read unless asked
    first.record_op_args = True
    first._export_type.append("x")
    second = P.profile(activities=[P.ProfilerActivity.CPU]).experimental_config
    assert second is not first and second.record_op_args is False
    assert vars(second) == vars(Config()) == vars(Config._shared_default())
