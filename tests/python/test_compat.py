"""Compatibility points a user meets first (issue 13 §5): torch.profiler's
_ExperimentalConfig, operator_details.csv's nine columns, export_stacks of
device time, record_op_args, supported_profiler_level and the device
activities' message, and the async analysis child's start-up.  Each test
runs the code as a user would write it and checks what they would see."""
import csv
import glob
import os
import time
import warnings

import pytest

from aiprof import profiler as P
from aiprof.profiler import profiler as profiler_module
from aiprof.profiler.experimental_config import from_torch_config
from conftest import needs_torch, result_dirs, run_python

NINE = ["Name", "Input Shapes", "Call Stack", "Host Self Duration(us)",
        "Host Total Duration(us)", "Device Self Duration(us)", "Device Total Duration(us)",
        "Device Self Duration With AICore(us)", "Device Total Duration With AICore(us)"]


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    # aiprof warns once per process; each test here checks its own warning,
    # on a machine without a device (whatever this one has).
    monkeypatch.setattr(profiler_module, "_warned", set())
    monkeypatch.setattr(profiler_module, "device_status",
                        lambda: (1, "Test: no device found"))


def _aiprof_warnings(record):
    return [str(w.message) for w in record if str(w.message).startswith("aiprof:")]


def _linear_step():
    import torch
    model = torch.nn.Linear(8, 4)
    model(torch.randn(2, 8)).sum().backward()


# ---- 1. torch.profiler._ExperimentalConfig -----------------------------------

@needs_torch
def test_torch_experimental_config_runs_unchanged():
    # A torch.profiler script; only the profiler's import changed.
    import torch
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with P.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                       schedule=torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=1),
                       on_trace_ready=P.tensorboard_trace_handler("./r"),
                       experimental_config=torch.profiler._ExperimentalConfig()) as prof:
            for _ in range(3):
                _linear_step()
                prof.step()
    # torch's defaults ask for nothing aiprof lacks: no warning about them.
    assert not [m for m in _aiprof_warnings(record) if "_ExperimentalConfig" in m]
    assert isinstance(prof.experimental_config, P._ExperimentalConfig)
    assert any(e.name == "aten::addmm" for e in prof.events())
    assert len(result_dirs("./r")) == 1


@needs_torch
def test_torch_experimental_config_unsupported_fields_named_once():
    import torch
    cfg = torch.profiler._ExperimentalConfig(profiler_metrics=["kineto__tensor_core_insts"],
                                             profiler_measure_per_kernel=True)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(2):
            with P.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                           experimental_config=cfg) as prof:
                _linear_step()
    msgs = [m for m in _aiprof_warnings(record) if "_ExperimentalConfig" in m]
    assert len(msgs) == 1, msgs
    assert "profiler_metrics=[kineto__tensor_core_insts]" in msgs[0]
    assert "profiler_measure_per_kernel=True" in msgs[0]
    assert "verbose" not in msgs[0]  # verbose=True is what aiprof does
    # The warning names the user's line, not aiprof's.
    assert all(w.filename == __file__ for w in record if "_ExperimentalConfig" in str(w.message))
    assert any(e.name == "aten::addmm" for e in prof.events())


@needs_torch
def test_torch_experimental_config_verbose_false_with_stack_named():
    import torch
    cfg = torch.profiler._ExperimentalConfig(verbose=False)
    with pytest.warns(RuntimeWarning, match=r"verbose=False \(Call stack is still written\)"):
        P._KinetoProfile(with_stack=True, experimental_config=cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P._KinetoProfile(with_stack=False, experimental_config=cfg)  # nothing differs


def test_torch2_experimental_config_fields_mapped():
    # torch 2.13 pickles fourteen fields (and may add more): the ones aiprof
    # understands are honoured, the others named with the reason, unknown
    # ones by position.
    class _ExperimentalConfig:
        def __init__(self, state):
            self.state = state

        def __getstate__(self):
            return self.state
    _ExperimentalConfig.__module__ = "torch._C._profiler"
    default = ([], False, False, [], False, False, False, False, False, False, False, "",
               False, False)
    cfg, unsupported = from_torch_config(_ExperimentalConfig(default))
    assert unsupported == [] and cfg.gc_detect_threshold is None
    state = list(default)
    state[6] = True           # disable_external_correlation: aiprof never pushes any
    state[7] = True           # profile_all_threads: aiprof records every thread
    state[9] = True           # record_python_gc_info → every GC pass
    state[13] = True          # trace_only: exports work (events() too)
    state[3] = [b"cycles"]    # performance_events
    state[11] = "x=1"         # custom_profiler_config
    state[12] = True          # adjust_timestamps
    cfg, unsupported = from_torch_config(_ExperimentalConfig(tuple(state) + (True,)))
    assert cfg.with_gc and cfg.gc_detect_threshold == 0.0
    assert unsupported == ["performance_events=[cycles] (no per-op CPU performance counters)",
                           "custom_profiler_config='x=1' (no PrivateUse1/custom profiler "
                           "back end)", "adjust_timestamps=True (no Vulkan events)",
                           "field #14 (newer torch)=True"]


@needs_torch
def test_real_torch_experimental_config_every_field():
    # The installed torch's own object, every field it has set away from its
    # default: each honoured or named (once, with its reason), none unknown.
    import torch
    fields = len(torch.profiler._ExperimentalConfig().__getstate__())
    values = {"profiler_metrics": ["m"], "profiler_measure_per_kernel": True, "verbose": True,
              "performance_events": ["cycles"], "enable_cuda_sync_events": True,
              "adjust_profiler_step": True, "disable_external_correlation": True,
              "profile_all_threads": True, "capture_overload_names": True,
              "record_python_gc_info": True, "expose_kineto_event_metadata": True,
              "custom_profiler_config": "k=v", "adjust_timestamps": True, "trace_only": True}
    from aiprof.profiler.experimental_config import _TORCH_FIELDS
    kwargs = {n: values[n] for n in _TORCH_FIELDS[:fields]}
    cfg, unsupported = from_torch_config(torch.profiler._ExperimentalConfig(**kwargs))
    named = {u.split("=")[0] for u in unsupported}
    assert not any(n.startswith("field #") for n in named), unsupported
    assert named.isdisjoint({"verbose", "disable_external_correlation", "profile_all_threads",
                             "record_python_gc_info", "trace_only"}), unsupported
    assert named | {"verbose", "disable_external_correlation", "profile_all_threads",
                    "record_python_gc_info", "trace_only"} >= set(_TORCH_FIELDS[:fields])
    assert all("(" in u for u in unsupported), unsupported  # each says why
    if fields > 9:
        assert cfg.with_gc and cfg.gc_detect_threshold == 0.0


@needs_torch
def test_profile_all_threads_records_threads_started_before():
    # Kineto records other threads only with profile_all_threads=True; aiprof's
    # callback is global, so a thread already running when the profile starts
    # has its ops recorded (with the torch config as without).
    import threading
    import torch
    go, done = threading.Event(), threading.Event()

    def worker():
        go.wait()
        a = torch.ones(3, 3)
        torch.mm(a, a)
        done.set()
    t = threading.Thread(target=worker)
    t.start()
    kwargs = {}
    if len(torch.profiler._ExperimentalConfig().__getstate__()) > 7:
        kwargs["profile_all_threads"] = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with P.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                       experimental_config=torch.profiler._ExperimentalConfig(**kwargs)) as prof:
            go.set()
            assert done.wait(60)
    t.join()
    mm = [e for e in prof.events() if e.name == "aten::mm"]
    assert len(mm) == 1 and mm[0].thread != threading.get_native_id(), mm


def test_other_experimental_config_types_refused():
    with pytest.raises(TypeError, match="torch.profiler._ExperimentalConfig"):
        P.profile(experimental_config={"verbose": True})


# ---- 2. operator_details.csv: the seed's nine columns --------------------------

@needs_torch
def test_operator_details_has_nine_columns_device_cells_empty():
    with P.profile(activities=[P.ProfilerActivity.CPU], record_shapes=True,
                   on_trace_ready=P.tensorboard_trace_handler("./r")):
        _linear_step()
    path = os.path.join(result_dirs("./r")[0], "ASCEND_PROFILER_OUTPUT", "operator_details.csv")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == NINE
    assert len(rows) > 5
    for r in rows[1:]:
        assert len(r) == 9 and r[5:] == ["", "", "", ""], r
        assert float(r[3]) <= float(r[4])
    assert any(r[0] == "aten::addmm" and r[1] for r in rows[1:])


# ---- 3. export_stacks of device time ------------------------------------------

@needs_torch
@pytest.mark.parametrize("metric", ["self_npu_time_total", "self_cuda_time_total"])
def test_export_stacks_device_metric_warns_each_call(metric):
    with P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True) as prof:
        _linear_step()
    for n in range(2):  # each call writes a file: each one says why it is empty
        with pytest.warns(RuntimeWarning, match=f"{metric}.*no device data.*s{n}.log is "
                                                "written empty"):
            prof.export_stacks(f"s{n}.log", metric)
        assert os.path.getsize(f"s{n}.log") == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prof.export_stacks("cpu.log", "self_cpu_time_total")
    assert os.path.getsize("cpu.log") > 0


# ---- 4. record_op_args --------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("record_shapes", [False, True])
def test_record_op_args_says_what_it_writes(record_shapes):
    cfg = P._ExperimentalConfig(record_op_args=True)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with P.profile(activities=[P.ProfilerActivity.CPU], record_shapes=record_shapes,
                       experimental_config=cfg,
                       on_trace_ready=P.tensorboard_trace_handler("./r")):
            _linear_step()
    msgs = _aiprof_warnings(record)
    assert not [m for m in msgs if "not collected" in m and "record_op_args" in m], msgs
    note = [m for m in msgs if m.startswith("aiprof: record_op_args")]
    assert len(note) == 1 and "op_args.csv is written" in note[0], msgs
    assert ("cells are empty" in note[0]) == (not record_shapes)
    files = glob.glob("./r/*_ascend_pt_op_args/op_args.csv")
    assert len(files) == 1
    with open(files[0], newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["Name", "Input Shapes", "Input Data Types", "Count"]
    addmm = [r for r in rows[1:] if r[0] == "aten::addmm"]
    assert addmm and bool(addmm[0][1]) == record_shapes


# ---- 5. supported_profiler_level and device activities -------------------------

def test_supported_profiler_level_is_what_this_machine_does(tmp_path):
    """Every level means something here: Level1/Level2 write api_statistic.csv
    (Level0 does not), and the warning names only their Ascend layers as not
    collected."""
    levels = P.ProfilerLevel
    assert P.supported_profiler_level() == {levels.Level_none, levels.Level0, levels.Level1,
                                            levels.Level2}
    written = {}
    for level in (levels.Level0, levels.Level2):
        cfg = P._ExperimentalConfig(profiler_level=level)
        out = tmp_path / level
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            with P.profile(activities=[P.ProfilerActivity.CPU], experimental_config=cfg,
                           on_trace_ready=P.tensorboard_trace_handler(str(out))):
                with P.record_function("work"):
                    pass
        msgs = " ".join(_aiprof_warnings(record))
        assert ("profiler_level=Level2's Ascend layers" in msgs) == (level == levels.Level2), msgs
        assert "records what Level0 does" not in msgs
        written[level] = glob.glob(str(out / "*" / "ASCEND_PROFILER_OUTPUT" / "api_statistic.csv"))
    assert not written[levels.Level0]
    assert len(written[levels.Level2]) == 1
    with open(written[levels.Level2][0]) as f:
        rows = list(csv.DictReader(f))
    assert any(r["API Name"] == "work" and r["Level"] == "op" for r in rows), rows


def test_npu_only_activities_message_is_true():
    with pytest.warns(RuntimeWarning) as record:
        with P.profile(activities=[P.ProfilerActivity.NPU]) as prof:
            with P.record_function("unseen"):
                pass
    msg = " ".join(_aiprof_warnings(record))
    assert "NPU activity requested, but no device data" in msg
    assert "CPU is not in activities" in msg
    assert "records no operators" in msg and "CPU activity is" not in msg
    assert len(prof.events()) == 0  # what the message says: nothing was recorded


def test_cpu_and_npu_activities_message():
    with pytest.warns(RuntimeWarning, match=r"NPU activity requested, but no device data can "
                      r"be collected on this machine \(Test: no device found\); CPU activity "
                      r"is recorded"):
        with P.profile(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.NPU]) as prof:
            with P.record_function("seen"):
                pass
    assert [e.name for e in prof.events()] == ["seen"]


# ---- 6. the async analysis child ---------------------------------------------

# A program whose profile is analysed in the background (async_mode).
ASYNC_PROFILE = (
    "import aiprof.profiler as P\n"
    "from aiprof.profiler import _analyse\n"
    "with P.profile(activities=[P.ProfilerActivity.CPU],\n"
    "               on_trace_ready=P.tensorboard_trace_handler('./a', async_mode=True)):\n"
    "    with P.record_function('x'):\n"
    "        pass\n")


def test_async_analysis_child_starts_without_runpy_warning():
    proc = run_python(
        ASYNC_PROFILE +
        "for d in list(_analyse._pending):\n"
        "    _analyse.wait_for(d)\n",
        env={"PYTHONWARNINGS": "default"})
    assert "found in sys.modules" not in proc.stderr, proc.stderr
    assert "Warning" not in proc.stderr, proc.stderr
    assert glob.glob("./a/*_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_details.csv")


def test_program_leaving_before_its_async_analysis_warns_nothing():
    """The background analysis outlives the program on purpose (a session of
    its own): leaving while it runs is no ResourceWarning, and it finishes."""
    proc = run_python(
        ASYNC_PROFILE +
        "[p] = _analyse._pending.values()\n"
        "assert p.poll() is None, 'the analysis ended before the program: nothing tested'\n",
        env={"PYTHONWARNINGS": "always"})
    assert proc.returncode == 0, proc.stderr
    assert "ResourceWarning" not in proc.stderr, proc.stderr
    for _ in range(600):  # no time asserted: a loaded machine may take long
        if glob.glob("./a/*_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_details.csv"):
            break
        time.sleep(0.05)
    assert glob.glob("./a/*_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_details.csv")


# ---- 5. record_function ranges carry their call stack ------------------------

@needs_torch
def test_record_function_ranges_carry_the_call_stack():
    """torch's record_function scopes (user_annotation) get the Python
    stack with_stack captured where they opened, as torch's own trace and
    torch_npu's give them: the optimizer's Optimizer.step#SGD.step and the
    user's own scope, in trace_view.json and in PYTORCH_API's callchain."""
    import json
    import sqlite3
    import torch
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True,
                   on_trace_ready=P.tensorboard_trace_handler("./r")):
        with torch.autograd.profiler.record_function("my_scope"):
            model(torch.ones(3, 4)).sum().backward()
        opt.step()
    d = result_dirs("./r")[0]
    with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "trace_view.json")) as f:
        events = json.load(f)
    scopes = {e["name"]: e for e in events if e.get("cat") == "user_annotation"}
    step = [n for n in scopes if n.startswith("Optimizer.step#SGD.step")]
    assert step and "my_scope" in scopes, sorted(scopes)
    for name in step + ["my_scope"]:
        stack = scopes[name].get("args", {}).get("Call stack", "")
        assert "test_compat.py" in stack, (name, scopes[name])
    db = sqlite3.connect(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler.db"))
    chains = db.execute("SELECT count(*) FROM PYTORCH_API a JOIN STRING_IDS s ON a.name = s.id "
                        "WHERE s.value = 'my_scope' AND a.callchainId IS NOT NULL").fetchone()[0]
    assert chains == 1


# ---- 6. metadata at trace start -----------------------------------------------

def test_metadata_at_trace_start_needs_no_second_try():
    """Metadata added before start() (as parallel_group_info is on every
    distributed rank) and right after it is written once the trace's
    directory exists: no "cannot create ...profiler_metadata.json.tmpPID"
    (the file was written before the writer thread made the directory)."""
    proc = run_python("\n".join([
        "import json, glob",
        "from aiprof import profiler as P",
        "prof = P.profile(activities=[P.ProfilerActivity.CPU],",
        "                 on_trace_ready=P.tensorboard_trace_handler('./r'))",
        "prof.add_metadata_json('parallel_group_info', json.dumps({'0': {'group_name': 'g'}}))",
        "prof.start()",
        "prof.add_metadata('after', 'start')",
        "prof.stop()",
        "d = glob.glob('./r/*_ascend_pt')[0]",
        "meta = json.load(open(d + '/profiler_metadata.json'))",
        "assert meta['parallel_group_info'] == {'0': {'group_name': 'g'}}, meta",
        "assert meta['after'] == 'start', meta",
    ]), env={"AIPROF_QUIET": "0"})
    assert "cannot create" not in proc.stderr, proc.stderr
    assert "not written" not in proc.stderr and "not rewritten" not in proc.stderr, proc.stderr
