"""aiprof.mindspore.Profiler: the seed's mindspore.Profiler call sequences
(seeds/mindspore_profiler_api.rst) and MindSpore 2.2's CPU output layout.

Runs without MindSpore; the op tests need torch, the others use
record_function ranges only (any Python program)."""
import csv
import json
import logging
import os
import subprocess
import sys
import textwrap

import pytest

import aiprof
from aiprof.profiler import record_function
from conftest import needs_torch

LOGGER = "aiprof.mindspore"


def prof_dir(base="data"):
    return os.path.join(base, "profiler")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def timeline(base="data"):
    with open(os.path.join(prof_dir(base), "cpu_timeline_display_0.json")) as f:
        return json.load(f)


def timeline_info(events):
    info = [e for e in events if e.get("ph") == "M" and e.get("name") == "timeline_info"]
    assert len(info) == 1
    return info[0]["args"]


def x_names(events):
    return [e["name"] for e in events if e.get("ph") == "X"]


def train_linear(steps=3):
    import torch
    model = torch.nn.Linear(4, 3)
    for i in range(steps):
        with record_function(f"ProfilerStep#{i}"):
            model(torch.randn(2, 4)).sum().backward()


def test_import_swap():
    import aiprof as mindspore
    assert mindspore.Profiler is aiprof.mindspore.Profiler
    from aiprof import Profiler  # "from mindspore import Profiler"
    assert Profiler is mindspore.Profiler
    assert "Profiler" in aiprof.__all__ and "profiler" in aiprof.__all__


@needs_torch
def test_default_run_writes_the_cpu_layout():
    import aiprof as mindspore
    profiler = mindspore.Profiler(output_path="./data")
    train_linear(3)
    profiler.analyse()
    d = prof_dir()
    for name in ("cpu_op_execute_timestamp_0.txt", "cpu_framework_0.txt",
                 "cpu_op_detail_info_0.csv", "cpu_op_type_info_0.csv",
                 "cpu_timeline_display_0.json", "cpu_timeline_summary_0.json",
                 "profiler_info_0.json", "host_info/host_info_0.csv",
                 "host_info/host_memory_0.csv", "host_info/timeline_0.json"):
        assert os.path.isfile(os.path.join(d, name)), name
    with open(os.path.join(d, "cpu_op_detail_info_0.csv")) as f:
        assert f.readline().strip() == ("op_side,op_type,op_name,full_op_name,op_occurrences,"
                                        "op_total_time(ms),op_avg_time(ms),total_proportion,"
                                        "subgraph,pid")
    detail = read_csv(os.path.join(d, "cpu_op_detail_info_0.csv"))
    types = {r["op_type"]: r for r in read_csv(os.path.join(d, "cpu_op_type_info_0.csv"))}
    # A type's figures are the sums of its nodes' rows.
    for op_type, row in types.items():
        nodes = [r for r in detail if r["op_type"] == op_type]
        assert int(row["type_occurrences"]) == sum(int(r["op_occurrences"]) for r in nodes)
        assert float(row["total_compute_time"]) == pytest.approx(
            sum(float(r["op_total_time(ms)"]) for r in nodes), rel=1e-4)
    assert int(types["aten::addmm"]["type_occurrences"]) == 3
    assert int(types["aten::addmm"]["execution_frequency(per-step)"]) == 1  # 3 steps
    assert sum(float(r["total_proportion"]) for r in detail) == pytest.approx(1.0, abs=1e-3)
    addmm = [r for r in detail if r["op_type"] == "aten::addmm"]
    # One node per call site and shapes, run once per step.
    assert len(addmm) == 1 and addmm[0]["op_occurrences"] == "3"
    assert addmm and all(r["full_op_name"].startswith("Default/") and
                         r["full_op_name"].endswith("/" + r["op_name"]) and
                         "aten::linear" in r["full_op_name"] for r in addmm)
    # The timestamp file: one line per node, one start,dur,tid per run.
    with open(os.path.join(d, "cpu_op_execute_timestamp_0.txt")) as f:
        lines = f.read().splitlines()
    assert len(lines) == len(detail)
    runs = {ln.split(";")[0]: ln.split(";")[2].split() for ln in lines}
    for r in detail:
        assert len(runs[r["full_op_name"]]) == int(r["op_occurrences"])
    events = timeline()
    names = x_names(events)
    assert any(n.startswith("aten::addmm-op") for n in names)
    # As in MindSpore, a timeline ts is the timestamp file's start_ns / 1000.
    node = addmm[0]
    first_ns = int(runs[node["full_op_name"]][0].split(",")[0])
    assert any(e.get("name") == node["op_name"] and e["ts"] == pytest.approx(first_ns / 1000,
                                                                            abs=1e-3)
               for e in events)
    base = timeline_info(events)["ts_base_ns"]
    with open(os.path.join(d, "profiler_info_0.json")) as f:
        assert json.load(f)["aiprof"]["time_base_ns"] == base
    host_rows = read_csv(os.path.join(d, "host_info", "host_info_0.csv"))
    first_op = min(int(r["time_stamp(us)"]) for r in host_rows if r["module_name"] == "PyTorch")
    assert base // 1000 <= first_op < base // 1000 + 10**6 * 60  # epoch µs, after the base
    steps = [e for e in events if e.get("ph") == "X" and e.get("tid") == 100000]
    assert [e["name"] for e in steps] == ["0", "1", "2"]
    assert any(e.get("name") == "computation_op" for e in events)
    assert timeline_info(events)["truncated"] is False
    with open(os.path.join(d, "cpu_timeline_summary_0.json")) as f:
        summary = json.load(f)
    assert summary["num_of_ops"] == len(detail)
    assert summary["op_exe_times"] == sum(int(r["op_occurrences"]) for r in detail)
    host = read_csv(os.path.join(d, "host_info", "host_info_0.csv"))
    assert any(r["module_name"] == "PyTorch" and r["time_stamp(us)"] != "0" for r in host)
    assert any(r["module_name"] == "aiprof" and int(r["memory_usage(kB)"]) > 0 for r in host)
    with open(os.path.join(d, "host_info", "timeline_0.json")) as f:
        host_tl = json.load(f)
    assert any(e["ph"] == "X" and e["name"] == "aten::linear" for e in host_tl)
    assert any(e["ph"] == "C" for e in host_tl)


def test_start_profile_false_then_start_stop():
    import aiprof as mindspore
    profiler = mindspore.Profiler(start_profile=False, output_path="./data")
    with record_function("before"):
        pass
    profiler.start()
    with record_function("inside"):
        pass
    profiler.stop()
    with record_function("after"):
        pass
    profiler.analyse()
    names = x_names(timeline())
    assert "inside" in names
    assert "before" not in names and "after" not in names


def test_analyse_online_stops_a_running_profiler():
    import aiprof as mindspore
    profiler = mindspore.Profiler(output_path="./data", pretty=True)  # pretty: not an init arg
    with record_function("work"):
        pass
    profiler.analyse(pretty=True)
    with open(os.path.join(prof_dir(), "cpu_timeline_display_0.json")) as f:
        text = f.read()
    assert text.startswith("[\n    {\n") and "work" in text
    json.loads(text)
    with open(os.path.join(prof_dir(), "profiler_info_0.json")) as f:
        assert f.read().startswith("{\n    ")
    with pytest.raises(RuntimeError, match="repeated start"):
        profiler.start()


def test_analyse_offline_after_abnormal_exit(tmp_path):
    script = textwrap.dedent("""
        import aiprof as mindspore
        from aiprof.profiler import record_function
        profiler = mindspore.Profiler(output_path="./run")
        with record_function("crashed_step"):
            pass
        raise RuntimeError("training died before analyse()")
    """)
    env = dict(os.environ, AIPROF_QUIET="1")
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "training died" in proc.stderr
    assert not os.path.exists(os.path.join("run", "profiler", "cpu_framework_0.txt"))
    import aiprof as mindspore
    offline = mindspore.Profiler(start_profile=False, output_path="./other")
    offline.analyse(offline_path="./run")
    assert "crashed_step" in x_names(timeline("run"))
    assert os.path.isfile(os.path.join("run", "profiler", "profiler_info_0.json"))
    offline.analyse(offline_path="./run/profiler")  # the profiler folder itself works too
    with pytest.raises(ValueError, match="holds no aiprof MindSpore data"):
        offline.analyse(offline_path="./other")


@needs_torch
def test_op_analyse_str_and_list():
    import aiprof as mindspore
    profiler = mindspore.Profiler(output_path="./data")
    train_linear(3)
    profiler.analyse()
    one = json.loads(profiler.op_analyse(op_name="aten::addmm"))
    assert set(one) == {"aten::addmm", "device_id"} and one["device_id"] == "0"
    (entry,) = one["aten::addmm"]
    assert entry["op_side"] == "cpu" and entry["op_occurrences"] == 3
    assert entry["input_shape"].startswith("input_0:3,input_1:2,4,input_2:4,3")
    assert entry["op_avg_time(us)"] == pytest.approx(entry["op_total_time(us)"] / 3, rel=1e-3)
    both = json.loads(profiler.op_analyse(op_name=["aten::addmm", "aten::mm"], device_id=0))
    assert set(both) == {"aten::addmm", "aten::mm", "device_id"} and both["device_id"] == 0
    # The node name matches too, as in MindSpore.
    node = read_csv(os.path.join(prof_dir(), "cpu_op_detail_info_0.csv"))[0]["op_name"]
    assert node in json.loads(profiler.op_analyse(node))
    with pytest.raises(RuntimeError, match="<aten::nothing> is not found"):
        profiler.op_analyse("aten::nothing")
    with pytest.raises(RuntimeError, match="device_id is equal to 3 does not exist"):
        profiler.op_analyse("aten::addmm", device_id=3)
    # Offline, as the seed's second example: a Profiler on the same output path.
    later = mindspore.Profiler(output_path="./data", start_profile=False)
    assert json.loads(later.op_analyse("aten::addmm"))["aten::addmm"][0]["op_occurrences"] == 3


@needs_torch
def test_op_analyse_analyses_a_stopped_profiler():
    import aiprof as mindspore
    profiler = mindspore.Profiler(output_path="./data", start_profile=False)
    profiler.start()
    train_linear(2)
    profiler.stop()
    assert json.loads(profiler.op_analyse("aten::addmm"))["aten::addmm"][0]["op_occurrences"] == 2


def test_documented_runtime_errors():
    import aiprof as mindspore
    p = mindspore.Profiler(output_path="./data")          # start_profile=True: started
    with pytest.raises(RuntimeError, match="already started"):
        p.start()
    with pytest.raises(RuntimeError, match="still collecting"):
        p.op_analyse("x")
    p.stop()
    with pytest.raises(RuntimeError, match="has not started"):
        p.stop()
    with pytest.raises(RuntimeError, match="repeated start and stop"):
        p.start()
    q = mindspore.Profiler(output_path="./data2", start_profile=False)
    with pytest.raises(RuntimeError, match="has not started"):
        q.stop()
    q.start()
    with pytest.raises(RuntimeError, match="already started"):
        q.start()
    q.stop()
    with pytest.raises(RuntimeError, match="No profiler file|does not exist"):
        mindspore.Profiler(output_path="./empty", start_profile=False).op_analyse("x")


@pytest.mark.parametrize("args, word", [
    ((1,), "op_name must be str or list"),
    ((("a",),), "op_name must be str or list"),
    (("",), "cannot be"),
    (([],), "cannot be"),
    (([1],), "non-empty str"),
    (("aten::mm", "0"), "device_id must be int"),
    (("aten::mm", True), "device_id must be int"),
])
def test_op_analyse_type_errors(args, word):
    import aiprof as mindspore
    p = mindspore.Profiler(output_path="./data", start_profile=False)
    with pytest.raises(TypeError, match=word):
        p.op_analyse(*args)


@pytest.mark.parametrize("kwargs, exc, word", [
    ({"aicore_metrics": 6}, ValueError, "aicore_metrics must be in"),
    ({"aicore_metrics": -2}, ValueError, "aicore_metrics must be in"),
    ({"aicore_metrics": "1"}, TypeError, "aicore_metrics must be an int"),
    ({"aicore_metrics": True}, TypeError, "aicore_metrics must be an int"),
    ({"profile_framework": "cpu"}, ValueError, "profile_framework must be one of"),
    ({"profile_framework": 1}, TypeError, "profile_framework must be a str or None"),
    ({"timeline_limit": 0}, ValueError, "timeline_limit must be greater than 0"),
    ({"timeline_limit": 1.5}, TypeError, "timeline_limit must be an int"),
    ({"timeline_limit": True}, TypeError, "timeline_limit must be an int"),
    ({"op_time": "yes"}, TypeError, "op_time must be a bool"),
    ({"start_profile": 1}, TypeError, "start_profile must be a bool"),
    ({"profile_memory": None}, TypeError, "profile_memory must be a bool"),
    ({"sync_enable": 0}, TypeError, "sync_enable must be a bool"),
    ({"output_path": 3}, TypeError, "output_path must be a str"),
    ({"output_path": "a b"}, ValueError, "output_path"),
])
def test_parameter_checks(kwargs, exc, word):
    import aiprof as mindspore
    with pytest.raises(exc, match=word):
        mindspore.Profiler(output_path="./data", **kwargs) if "output_path" not in kwargs \
            else mindspore.Profiler(**kwargs)
    assert not os.path.exists("data")  # refused before anything was made or started


def test_analyse_argument_checks():
    import aiprof as mindspore
    p = mindspore.Profiler(output_path="./data", start_profile=False)
    with pytest.raises(TypeError, match="pretty must be a bool"):
        p.analyse(pretty=1)
    with pytest.raises(TypeError, match="offline_path must be a str"):
        p.analyse(offline_path=5)


def test_logged_notes(caplog):
    import aiprof as mindspore
    caplog.set_level(logging.WARNING, logger=LOGGER)
    p = mindspore.Profiler(output_path="./data", start_profile=False, ascend_job_id="x",
                           l2_cache=True, op_time=False, timeline_limit=10)
    text = caplog.text
    assert "ascend_job_id is an invalid param which doesn't work." in text
    assert "l2_cache (Ascend)" in text
    assert "When op_time is set to False, the parameter 'timeline_limit' setting is invalid." \
        in text
    caplog.clear()
    p.analyse()
    assert "never started" in caplog.text


def test_op_time_false_records_no_ops_but_host_memory():
    import aiprof as mindspore
    p = mindspore.Profiler(output_path="./data", op_time=False, profile_framework="memory")
    with record_function("unrecorded"):
        pass
    p.analyse()
    d = prof_dir()
    assert not any(n.startswith("cpu_") for n in os.listdir(d))
    rows = read_csv(os.path.join(d, "host_info", "host_info_0.csv"))
    assert rows and all(r["module_name"] == "aiprof" for r in rows)


@pytest.mark.parametrize("framework", ["time", "memory", None])
def test_profile_framework_kinds(framework):
    import aiprof as mindspore
    p = mindspore.Profiler(output_path="./data", profile_framework=framework)
    with record_function("stage"):
        pass
    p.analyse()
    host_dir = os.path.join(prof_dir(), "host_info")
    if framework is None:
        assert not os.path.exists(host_dir)
        return
    rows = read_csv(os.path.join(host_dir, "host_info_0.csv"))
    memory = [r for r in rows if int(r["memory_usage(kB)"]) > 0]
    timed = [r for r in rows if r["module_name"] != "aiprof"]
    if framework == "time":
        assert not memory
        assert [(r["stage"], r["start_end"]) for r in timed] == [("stage", "0"), ("stage", "1")]
    else:
        assert memory and not timed
        assert len(read_csv(os.path.join(host_dir, "host_memory_0.csv"))) == len(memory)


def test_timeline_limit_truncates_and_says_so(caplog):
    import aiprof as mindspore
    caplog.set_level(logging.WARNING, logger=LOGGER)
    p = mindspore.Profiler(output_path="./data", timeline_limit=1, profile_framework=None)
    for i in range(14000):  # ~100 bytes each: more than 1 MB of timeline
        with record_function(f"range_{i}"):
            pass
    p.analyse()
    path = os.path.join(prof_dir(), "cpu_timeline_display_0.json")
    assert os.path.getsize(path) <= 1024 * 1024
    events = timeline()  # still valid JSON
    info = timeline_info(events)
    assert info["truncated"] is True and info["timeline_limit(MB)"] == 1
    assert info["dropped_events"] > 0
    assert info["written_events"] == len([e for e in events if e.get("ph") == "X"])
    assert info["written_events"] + info["dropped_events"] >= 14000
    assert "range_0" in x_names(events) and "range_13999" not in x_names(events)
    assert "larger than timeline_limit (1 MB)" in caplog.text
    with open(os.path.join(prof_dir(), "profiler_info_0.json")) as f:
        assert json.load(f)["aiprof"]["timeline_dropped_events"] == info["dropped_events"]


@needs_torch
def test_hostile_names_keep_the_files_parseable():
    import torch
    import aiprof as mindspore
    p = mindspore.Profiler(output_path="./data")
    x = torch.randn(2, 2)
    with record_function("a/b;c,d\ne"):
        torch.mm(x, x)
    p.analyse()
    d = prof_dir()
    detail = read_csv(os.path.join(d, "cpu_op_detail_info_0.csv"))
    mm = [r for r in detail if r["op_type"] == "aten::mm"]
    assert len(mm) == 1 and mm[0]["full_op_name"].startswith("Default/a_b_c,d e/")
    with open(os.path.join(d, "cpu_framework_0.txt")) as f:
        assert len(f.read().splitlines()) == len(detail)
    assert json.loads(p.op_analyse("aten::mm"))["aten::mm"][0]["op_occurrences"] == 1
    assert "a/b;c,d\ne" in x_names(timeline())  # the timeline keeps the name as is


def test_no_vmrss_is_logged_once_and_the_run_goes_on(monkeypatch, caplog):
    import aiprof as mindspore
    from aiprof.mindspore import _host_info
    caplog.set_level(logging.WARNING, logger=LOGGER)
    monkeypatch.setattr(_host_info, "read_vmrss_kb", lambda *a: None)
    p = mindspore.Profiler(output_path="./data", profile_framework="all")
    with record_function("still_recorded"):
        pass
    p.analyse()
    assert caplog.text.count("has no VmRSS") == 1
    rows = read_csv(os.path.join(prof_dir(), "host_info", "host_info_0.csv"))
    assert rows and not any(int(r["memory_usage(kB)"]) for r in rows)
    assert "still_recorded" in x_names(timeline())


def test_read_vmrss_kb():
    from aiprof.mindspore._host_info import read_vmrss_kb
    assert read_vmrss_kb() > 0
    assert read_vmrss_kb("/nonexistent/status") is None


@needs_torch
def test_example_callback_script():
    import mindspore_profiler  # examples/python (conftest puts it on sys.path)
    result = mindspore_profiler.main(["--dir", "./data", "--steps", "6"])
    # Steps 2..4 recorded (start at step_begin(2), stop at step_end(4)):
    # 3 linear layers x 3 steps.
    assert sum(e["op_occurrences"] for e in result["aten::addmm"]) == 9
    steps = [e["name"] for e in timeline() if e.get("ph") == "X" and e.get("tid") == 100000]
    assert steps == ["2", "3", "4"]


def test_a_trace_that_could_not_be_saved_is_logged(caplog):
    import aiprof as mindspore
    caplog.set_level(logging.WARNING, logger=LOGGER)
    p = mindspore.Profiler(output_path="./data", profile_framework=None)
    real_stop = p._prof.stop

    def failing_stop():  # as when the file system refused the trace
        real_stop()
        p._prof._trace_dir, p._prof._session_error = None, "No space left on device"

    p._prof.stop = failing_stop
    p.analyse()
    assert "no trace was saved (No space left on device)" in caplog.text
    assert not any(n.startswith("cpu_") for n in os.listdir(prof_dir()))
    assert os.path.isfile(os.path.join(prof_dir(), "profiler_info_0.json"))


def test_rows_return_their_base():
    """result_rows' base_ns (aip_result_op_rows): the whole second below the
    earliest time recorded; absolute time = base + start, as the host_info
    file needs (checked against trace_view.json's absolute ts)."""
    import shutil
    import tempfile
    from array import array
    from aiprof import _C
    from conftest import ROOT, ts_ns
    src = os.path.join(ROOT, "tests", "golden", "input", "golden_ascend_pt")
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "golden_ascend_pt")
        shutil.copytree(src, d)
        raw = _C.result_rows(d, frozenset())
        _C.analyse_dir(d, _C.EXPORT_TEXT, True, _C.OUTPUTS_TRACE_VIEW)
        with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "trace_view.json")) as f:
            trace = json.load(f)
    assert raw["base_ns"] > 0 and raw["base_ns"] % 1_000_000_000 == 0
    start = array("d", raw["start"])
    first = min(ts_ns(e["ts"]) for e in trace if (e.get("ph") == "X" and e.get("cat") in (
        "cpu_op", "user_annotation")) or (e.get("ph") == "i" and e.get("name") == "[memory]"))
    assert raw["base_ns"] + round(start[0] * 1000) == first


def test_one_profiler_collects_at_a_time():
    import aiprof as mindspore
    first = mindspore.Profiler(output_path="./one")
    with pytest.raises(RuntimeError, match="already running"):
        mindspore.Profiler(output_path="./two")
    second = mindspore.Profiler(output_path="./two", start_profile=False)
    with pytest.raises(RuntimeError, match="already running"):
        second.start()
    first.stop()
    second.start()  # the failed start left it startable
    with record_function("second_only"):
        pass
    second.analyse()
    assert "second_only" in x_names(timeline("two"))


def test_host_memory_thread_leaves_the_programs_signals(tmp_path):
    """The host-memory sampler's thread blocks asynchronous signals (issue 27,
    defect 4): a program that blocks SIGTERM and takes it with sigwait gets
    it, instead of dying of it in the sampler's thread."""
    code = textwrap.dedent(f"""
        import os, signal, time
        from aiprof.mindspore._host_info import MemorySampler
        s = MemorySampler({str(tmp_path / "host_info_0.csv")!r}, period_s=0.01)
        s.start()  # profiling first, then the program sets its signals up
        signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGTERM}})
        time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)
        print("took", signal.sigwait({{signal.SIGTERM}}))
    """)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.path.dirname(os.path.dirname(aiprof.__file__)), env.get("PYTHONPATH")] if p)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert proc.stdout.strip() == "took %d" % int(__import__("signal").SIGTERM), proc.stdout
