"""trace.perfetto-trace as a Python user asks for it: trace_format="perfetto"
on the offline analyse(), on tensorboard_trace_handler and on
export_chrome_trace (docs/RESULT_LAYOUT.md).  Every file written is decoded
with Perfetto's published schema and compared with trace_view.json of the
same analysis (perfetto_check.py) when the perfetto package is importable;
without it that part is skipped with the reason (the file's presence, mode
and first bytes are still checked).
"""
import os
import shutil
import stat

import pytest

import perfetto_check
from conftest import ROOT, needs_torch, result_dirs

PB, WHY = perfetto_check.load_schema()
PF = os.path.join("ASCEND_PROFILER_OUTPUT", "trace.perfetto-trace")


def _looks_like_trace(path):
    """A Trace message: its first field is packet (1, length-delimited)."""
    with open(path, "rb") as f:
        head = f.read(1)
    assert head == b"\x0a", head
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o137 == 0  # at most 0640


def _decode_and_match(result_dir):
    if PB is None:
        pytest.skip(WHY)
    counts = perfetto_check.check(result_dir, PB)
    assert counts["slices"] > 0
    return counts


def test_offline_analyse_keyword():
    import aiprof.profiler as P
    shutil.copytree(os.path.join(ROOT, "tests", "golden", "input", "golden_ascend_pt"),
                    "g/golden_ascend_pt")
    P.analyse("g", trace_format="perfetto")
    d = "g/golden_ascend_pt"
    _looks_like_trace(os.path.join(d, PF))
    assert os.path.exists(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
    counts = _decode_and_match(d)
    assert counts["flows"] >= 1 and counts["counters"] > 0 and counts["instants"] > 0


def test_unknown_form_is_refused():
    import aiprof.profiler as P
    with pytest.raises(ValueError, match="perfetto"):
        P.analyse(".", trace_format="protobuf")


def _train(out, **handler):
    import torch
    import aiprof.profiler as P
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 16), torch.randn(8, 4)
    with P.profile(activities=[P.ProfilerActivity.CPU],
                   schedule=P.schedule(wait=0, warmup=0, active=2, repeat=1),
                   on_trace_ready=P.tensorboard_trace_handler(out, **handler),
                   record_shapes=True, with_stack=True) as prof:
        for _ in range(2):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            prof.step()
    return prof


@needs_torch
def test_trace_handler_and_export_chrome_trace():
    prof = _train("out", trace_format="perfetto")
    (d,) = result_dirs("out")
    _looks_like_trace(os.path.join(d, PF))
    prof.export_chrome_trace("copy.perfetto-trace", trace_format="perfetto")
    _looks_like_trace("copy.perfetto-trace")
    with open("copy.perfetto-trace", "rb") as a, open(os.path.join(d, PF), "rb") as b:
        assert a.read() == b.read()  # the same model gives the same bytes
    counts = _decode_and_match(d)
    assert counts["flows"] > 0  # fwdbwd


@needs_torch
def test_async_analysis_writes_it():
    """The analysis in a background process (async_mode) gets the form too."""
    prof = _train("out", async_mode=True, trace_format="perfetto")
    prof.key_averages()  # waits for the background analysis
    (d,) = result_dirs("out")
    _looks_like_trace(os.path.join(d, PF))
