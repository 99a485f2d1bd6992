"""trace_view.json's two forms as a user gets them from Python.

torch_npu's (the default): a top-level array, `ts` a string of absolute
epoch µs with exactly three decimals made from integer ns, `dur` a number.
Kineto's (trace_format="kineto"): an object with numeric `ts` relative to
baseTimeNanoseconds and the add_metadata entries as top-level keys.  The
two must describe the same events at the same nanoseconds.
"""
import glob
import gzip
import json
import os
import re
from decimal import Decimal

import pytest

from conftest import needs_torch, result_dirs, trace_of

TS_RE = re.compile(r"\d+\.\d{3}")


def _profile(out, steps=2, **handler):
    import torch
    import aiprof.profiler as P
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 16), torch.randn(8, 4)
    with P.profile(activities=[P.ProfilerActivity.CPU],
                   schedule=P.schedule(wait=0, warmup=0, active=steps, repeat=1),
                   on_trace_ready=P.tensorboard_trace_handler(out, **handler),
                   record_shapes=True) as prof:
        prof.add_metadata("run_name", "mlp <a&b>")
        prof.add_metadata_json("distributed_args", json.dumps({"world_size": 1, "rank": [0]}))
        for _ in range(steps):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            prof.step()
    return prof


def _ns(ts):
    return int(Decimal(ts) * 1000)


def _check_array(trace):
    assert isinstance(trace, list), type(trace)
    timed = [e for e in trace if "ts" in e]
    assert len(timed) > 50
    for e in trace:
        if "ts" in e:
            assert isinstance(e["ts"], str) and TS_RE.fullmatch(e["ts"]), e
            assert _ns(e["ts"]) > 1_000_000_000_000_000_000, e  # absolute epoch
        if "dur" in e:
            assert isinstance(e["dur"], (int, float)) and not isinstance(e["dur"], bool), e


def _check_same_events(array, kineto):
    """Same events in the same order; every string ts is exactly
    baseTimeNanoseconds + the relative one, in ns."""
    assert isinstance(kineto, dict)
    base = kineto["baseTimeNanoseconds"]
    assert isinstance(base, int) and base % 1_000_000_000 == 0
    events = kineto["traceEvents"]
    assert len(events) == len(array)
    for a, k in zip(array, events):
        assert a.get("name") == k.get("name") and a.get("ph") == k.get("ph"), (a, k)
        if "ts" in a:
            assert isinstance(k["ts"], (int, float)) and k["ts"] >= 0, k
            assert _ns(a["ts"]) == base + round(k["ts"] * 1000), (a, k)
        if "dur" in a:  # ts + dur is the end's ts exactly (binary fractions of a µs)
            end = k["ts"] + k["dur"]
            assert round(end * 1000) - round(k["ts"] * 1000) == round(a["dur"] * 1000), (a, k)


@needs_torch
def test_default_is_torch_npus_array_and_kineto_on_request(tmp_path):
    prof = _profile("./r")
    d = result_dirs("./r")[0]
    array = trace_of(d)
    _check_array(array)
    # run facts ride in the first process_name's args; no metadata keys here
    pn = array[0]
    assert pn["ph"] == "M" and pn["name"] == "process_name" and pn["args"]["name"] == "Python"
    assert pn["args"]["aiprof"]["droppedEvents"] == 0
    assert "run_name" not in json.dumps(array[:5])
    # export_chrome_trace: the array by default (a copy), Kineto's on request
    prof.export_chrome_trace("same.json")
    with open("same.json", "rb") as a, \
            open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "trace_view.json"), "rb") as b:
        assert a.read() == b.read()
    prof.export_chrome_trace("k.json", trace_format="kineto")
    with open("k.json") as f:
        kineto = json.load(f)
    _check_same_events(array, kineto)
    # add_metadata entries as top-level keys, as torch.profiler writes them
    assert kineto["run_name"] == "mlp <a&b>"
    assert kineto["distributed_args"] == {"world_size": 1, "rank": [0]}
    assert kineto["schemaVersion"] == 1 and kineto["aiprof"]["droppedEvents"] == 0
    assert "ENV_VARIABLES" not in kineto
    with open("k.json", "rb") as f:
        assert b"<a&b>" not in f.read()  # escaped as every string of the trace
    prof.export_chrome_trace("k.json.gz", trace_format="kineto")
    with gzip.open("k.json.gz", "rt") as f:
        assert json.load(f) == kineto
    # the result directory still holds the array
    assert isinstance(trace_of(d), list)


@needs_torch
def test_tensorboard_trace_handler_kineto(tmp_path):
    prof = _profile("./r", trace_format="kineto")
    d = result_dirs("./r")[0]
    kineto = trace_of(d)
    assert isinstance(kineto, dict) and kineto["run_name"] == "mlp <a&b>"
    assert all(isinstance(e["ts"], (int, float)) for e in kineto["traceEvents"] if "ts" in e)
    # the results read either form alike
    kineto_avg = {e.key: e.count for e in prof.key_averages()}
    assert kineto_avg["aten::addmm"] == 4
    # export_chrome_trace in torch_npu's form is written anew from the raw data
    prof.export_chrome_trace("arr.json")
    with open("arr.json") as f:
        array = json.load(f)
    _check_array(array)
    _check_same_events(array, kineto)
    assert isinstance(trace_of(d), dict)  # the directory is unchanged
    # and the same trace analysed in torch_npu's form gives the same results
    import aiprof.profiler as P
    P.analyse("./r", trace_format="torch_npu")
    assert isinstance(trace_of(d), list)
    from aiprof.profiler._results import TraceResult
    assert {e.key: e.count for e in TraceResult(d).key_averages()} == kineto_avg


@needs_torch
def test_async_analysis_keeps_the_form(tmp_path):
    prof = _profile("./r", async_mode=True, trace_format="kineto")
    prof.key_averages()  # waits for the background analysis
    assert isinstance(trace_of(result_dirs("./r")[0]), dict)


def test_bad_trace_format_is_refused():
    import aiprof.profiler as P
    with pytest.raises(ValueError, match="trace_format"):
        P.tensorboard_trace_handler("./r", trace_format="chrome")
    with pytest.raises(TypeError, match="trace_format"):
        P.tensorboard_trace_handler("./r", trace_format=1)
    with pytest.raises(ValueError, match="trace_format"):
        P.analyse(".", trace_format="json")
    assert not glob.glob("./r*")


@needs_torch
def test_export_chrome_trace_bad_format(tmp_path):
    prof = _profile("./r", steps=1)
    with pytest.raises(ValueError, match="torch_npu"):
        prof.export_chrome_trace("x.json", trace_format="protobuf")
    assert not os.path.exists("x.json")
