"""Ascend's own analysis tool on aiprof's results: msprof-analyze `compare`
between two result directories and `advisor all` on one.

msprof-analyze cannot be committed here and there is no network at test
time: set MSPROF_SRC to an extracted source tree of Ascend/msprof-analyze
(its Python dependencies from Debian: python3-click python3-ijson
python3-pandas python3-xlsxwriter python3-openpyxl python3-tqdm
python3-prettytable python3-networkx python3-jinja2 python3-sqlalchemy
python3-plotly) or these tests are skipped, saying why.

Both tools read trace_view.json only in "text mode", i.e. when
ASCEND_PROFILER_OUTPUT holds no ascend_pytorch_profiler*.db; beside a
database they read it instead, and compare then needs the TASK table of
device tasks, which only a device fills (docs/RESULT_LAYOUT.md).  So the
result directories are copied without their databases, as a torch_npu
result of export type text without them would look.
"""
import glob
import os
import shutil

import pytest

import msprof_env
from conftest import needs_torch, result_dirs

pytestmark = pytest.mark.skipif(msprof_env.missing() is not None,
                                reason=msprof_env.missing() or "")

# The dataset advisor's timeline checks build from trace_view.json.
_PROBE = """import os, sys
sys.path.insert(0, os.environ["MSPROF_SRC"])
if __name__ == "__main__":
    from msprof_analyze.advisor.dataset.timeline_event_dataset import ScheduleAnalysisDataset
    d = ScheduleAnalysisDataset(sys.argv[1], {})
    print("EVENTS", d.dataset_len, len(d.aten or []), len(d.profiler_step), d.data_type)
"""


def _msprof(tmp_path, script, *args):
    out = msprof_env.run(tmp_path, script, *args)
    assert "Traceback" not in out, out
    assert "'str' object has no attribute" not in out, out
    return out


def _two_runs():
    from conftest import TinyNet
    import aiprof.profiler as P
    dirs = []
    for run in ("a", "b"):
        step = TinyNet(seed=1)
        with P.profile(activities=[P.ProfilerActivity.CPU],
                       schedule=P.schedule(wait=0, warmup=0, active=3, repeat=1),
                       on_trace_ready=P.tensorboard_trace_handler(f"./runs_{run}"),
                       record_shapes=True) as prof:
            for _ in range(3):
                step()
                prof.step()
        src = result_dirs(f"./runs_{run}")[0]
        text = os.path.join(f"./text_{run}", os.path.basename(src))
        shutil.copytree(src, text)
        for db in glob.glob(os.path.join(text, "ASCEND_PROFILER_OUTPUT", "*.db")):
            os.unlink(db)
        dirs.append(os.path.abspath(text))
    return dirs


@needs_torch
def test_compare_lists_the_operators(tmp_path):
    a, b = _two_runs()
    out = _msprof(tmp_path, msprof_env.CLI, "compare", "-d", a, "-bp", b, "-o", str(tmp_path / "cmp"))
    assert "Can't find any torch op" not in out, out
    books = glob.glob(str(tmp_path / "cmp" / "*.xlsx"))
    assert len(books) == 1, out
    import openpyxl
    wb = openpyxl.load_workbook(books[0], read_only=True)
    rows = list(wb["OperatorCompare"].iter_rows(values_only=True))
    names = {r[1] for r in rows[3:] if r and r[1]}
    # (zero_grad() zeroes in place on torch 1.13, sets grads to None on 2.x)
    assert {"aten::linear", "aten::mse_loss", "aten::relu"} <= names, names
    ops = [r for r in rows[3:] if r and r[1]]
    # 3 steps of the same step: every op of one run is matched in the other
    assert len(ops) >= 30 and all(r[1] == r[6] for r in ops), ops[:5]
    print(f"msprof-analyze compare: {len(ops)} operators compared, {len(names)} distinct")


@needs_torch
def test_advisor_timeline_checks_see_our_events(tmp_path):
    a, _ = _two_runs()
    out = _msprof(tmp_path, msprof_env.CLI, "advisor", "all", "-d", a, "-o", str(tmp_path / "adv"),
                  "-l", "en")
    assert "timeline_event_dataset" in out, out  # the timeline analyzers ran
    assert "while parsing file" not in out, out
    assert glob.glob(str(tmp_path / "adv" / "mstt_advisor_*.html")), out
    probe = _msprof(tmp_path, _PROBE, a)
    line = [x for x in probe.splitlines() if x.startswith("EVENTS")][-1].split()
    events, aten, steps, mode = int(line[1]), int(line[2]), int(line[3]), line[4]
    assert mode == "text" and events > 100 and aten > 10 and steps == 3, line
    print(f"msprof-analyze advisor: {events} timeline events, {aten} aten ops, {steps} steps")
