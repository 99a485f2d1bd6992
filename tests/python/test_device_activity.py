"""Device activity in the Python API (issue 14 §5): ProfilerActivity.NPU,
CUDA and XPU select device collection (libaiprof's activity bits, written
to profiler_info.json), use_cuda keeps working, supported_activities() is
what libaiprof's device back ends report, and a program with no device
still profiles its host and is told why once per process."""
import glob
import json
import os
import warnings

import pytest

from aiprof import _C
from aiprof import profiler as P
from aiprof.profiler import profiler as profiler_module
from conftest import result_dirs, run_python, slices, trace_of


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(profiler_module, "_warned", set())


def _activities_of(result_dir):
    with open(os.path.join(result_dir, "profiler_info.json")) as f:
        info = json.load(f)
    return info["config"]["common_config"]["activities"]


def _profile(**kwargs):
    return P.profile(on_trace_ready=P.tensorboard_trace_handler("./r"), **kwargs)


def test_device_status_is_libaiprofs_answer():
    bits, why = _C.device_status()
    assert bits & 1                      # CPU, always
    assert not bits & ~7                 # CPU, NPU, CUDA: nothing else is claimed
    assert why                           # says why there is or is not device data
    expected = {a for a, b in [(P.ProfilerActivity.CPU, 1), (P.ProfilerActivity.NPU, 2),
                               (P.ProfilerActivity.CUDA, 4)] if bits & b}
    assert P.supported_activities() == expected
    assert P.ProfilerActivity.MTIA not in P.supported_activities()


@pytest.mark.parametrize("device,name", [(P.ProfilerActivity.NPU, "ProfilerActivity.NPU"),
                                         (P.ProfilerActivity.CUDA, "ProfilerActivity.CUDA"),
                                         (P.ProfilerActivity.XPU, "ProfilerActivity.XPU")])
def test_device_activity_reaches_libaiprof(device, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _profile(activities=[P.ProfilerActivity.CPU, device]):
            with P.record_function("host_work"):
                pass
    d = result_dirs("./r")[0]
    assert _activities_of(d) == ["ProfilerActivity.CPU", name]
    # the host is profiled whether or not a device was found
    assert slices(trace_of(d), "user_annotation", "host_work")


def test_use_cuda_selects_device_collection():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _profile(activities=[P.ProfilerActivity.CPU], use_cuda=True):
            pass
    assert _activities_of(result_dirs("./r")[0]) == ["ProfilerActivity.CPU",
                                                    "ProfilerActivity.CUDA"]


def test_torch_profiler_members_match_by_name():
    class TorchXPU:  # torch.profiler.ProfilerActivity.XPU
        name = "XPU"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _profile(activities=[P.ProfilerActivity.CPU, TorchXPU()]):
            pass
    assert "ProfilerActivity.XPU" in _activities_of(result_dirs("./r")[0])


def test_no_device_warns_once_per_process_with_the_reason(monkeypatch):
    monkeypatch.setattr(profiler_module, "device_status", lambda: (1, "Fake: no device here"))
    with pytest.warns(RuntimeWarning) as record:
        for acts in ([P.ProfilerActivity.CPU, P.ProfilerActivity.NPU],
                     [P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA],
                     [P.ProfilerActivity.CPU, P.ProfilerActivity.XPU], None):
            with _profile(activities=acts):
                with P.record_function("still_profiled"):
                    pass
        warnings.warn("sentinel", RuntimeWarning)  # pytest.warns needs one at least
    device = [str(w.message) for w in record if "no device data" in str(w.message)]
    assert len(device) == 1, device
    assert "(Fake: no device here)" in device[0] and "CPU activity is recorded" in device[0]
    for d in result_dirs("./r"):
        assert slices(trace_of(d), "user_annotation", "still_profiled")


def test_device_found_means_no_warning(monkeypatch):
    monkeypatch.setattr(profiler_module, "device_status", lambda: (3, "Fake: device found"))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with _profile(activities=[P.ProfilerActivity.NPU]):
            pass
    assert not [w for w in record if str(w.message).startswith("aiprof:")]


def test_real_machine_without_a_device_says_why_once():
    # A fresh process whose OpenCL loader finds no platform (and a
    # libaiprof without device back end alike): one warning naming the
    # reason libaiprof gives, one line in the first trace's log, and the
    # host data of every trace.
    code = (
        "import warnings\n"
        "warnings.simplefilter('always')\n"
        "from aiprof import profiler as P, _C\n"
        "print('STATUS', _C.device_status())\n"
        "for acts in ([P.ProfilerActivity.CPU, P.ProfilerActivity.NPU], None,\n"
        "             [P.ProfilerActivity.CPU, P.ProfilerActivity.XPU]):\n"
        "    with P.profile(activities=acts,\n"
        "                   on_trace_ready=P.tensorboard_trace_handler('./r')):\n"
        "        with P.record_function('host'):\n"
        "            pass\n")
    empty = os.path.abspath("no_icds")
    os.mkdir(empty)
    proc = run_python(code, env={"OCL_ICD_VENDORS": empty, "AIPROF_QUIET": "0"})
    status = [line for line in proc.stdout.splitlines() if line.startswith("STATUS")][0]
    if "(1," not in status:
        pytest.skip(f"a device was found even without ICDs: {status}")
    lines = [line for line in proc.stderr.splitlines() if "no device data" in line]
    assert len(lines) == 1, proc.stderr
    dirs = result_dirs("./r")
    assert len(dirs) == 3
    logged = []
    for d in dirs:
        assert slices(trace_of(d), "user_annotation", "host")
        for log in glob.glob(os.path.join(d, "logs", "*.log")):
            with open(log) as f:
                logged += [line for line in f if "device activity requested" in line]
    assert len(logged) == 1, logged
