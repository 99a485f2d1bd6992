"""NVTX ranges and marks from the `nvtx` Python package (NVIDIA's, on PyPI;
in the torch 2.13 venv) recorded as mstx ranges (docs/NVTX.md): in-process
under aiprof.profiler with mstx on — the trace's start, before NVTX's
first call, makes libaiprof NVTX's tool — and for a program that never
heard of aiprof under `aiprof run`.  Checked in trace_view.json by
tests/e2e/nvtx_c/check_nvtx.py (names, phases, domains, nesting, counts) and
in the db's PYTORCH_API (type mstx).  With mstx off nothing is recorded.
Skipped where `nvtx` is not installed (Debian's python3)."""
import glob
import os
import sqlite3
import subprocess
import sys

import pytest

import aiprof
from conftest import ROOT, result_dirs, run_python

nvtx = pytest.importorskip("nvtx", reason="the nvtx package is not installed (pip install nvtx)")

CHECK = os.path.join(ROOT, "tests", "e2e", "nvtx_c", "check_nvtx.py")
CLI = os.path.join(os.path.dirname(os.path.dirname(aiprof.__file__)), os.pardir, "bin", "aiprof")

STEPS = r'''
import nvtx
def steps():
    for _ in range(2):
        with nvtx.annotate("step"):
            with nvtx.annotate("forward", domain="train"):
                nvtx.mark("tick", domain="train")
            nvtx.push_range("backward", domain="train")
            nvtx.pop_range(domain="train")
            r = nvtx.start_range("async_py", domain="train")
            nvtx.end_range(r)
'''

IN_PROCESS = r'''
import aiprof.profiler as P
''' + STEPS + r'''
with P.profile(activities=[P.ProfilerActivity.CPU],
               experimental_config=P._ExperimentalConfig(mstx={mstx}),
               on_trace_ready=P.tensorboard_trace_handler("./out")):
    steps()
'''


def _db_mstx(d):
    db = glob.glob(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler*.db"))
    if not db:
        return None
    with sqlite3.connect(db[0]) as c:
        return sorted(r[0] for r in c.execute(
            "SELECT s.value FROM PYTORCH_API p JOIN STRING_IDS s ON p.name = s.id "
            "JOIN ENUM_API_TYPE t ON p.type = t.id WHERE t.name = 'mstx'"))


@pytest.fixture(autouse=True)
def no_other_tool(monkeypatch):
    """libaiprof names itself only where no NVTX tool was chosen."""
    monkeypatch.delenv("NVTX_INJECTION64_PATH", raising=False)


def test_nvtx_package_in_process():
    run_python(IN_PROCESS.format(mstx=True))
    [d] = result_dirs("out")
    subprocess.run([sys.executable, CHECK, d, "python"], check=True)
    rows = _db_mstx(d)
    if rows is not None:
        assert rows.count("step") == 2 and rows.count("forward") == 2, rows


def test_nvtx_package_mstx_off_records_nothing():
    run_python(IN_PROCESS.format(mstx=False))
    [d] = result_dirs("out")
    with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "trace_view.json")) as f:
        text = f.read()
    assert '"cat":"mstx"' not in text.replace(" ", "")


@pytest.mark.skipif(not os.path.exists(CLI), reason="the aiprof command is not built")
def test_nvtx_package_under_aiprof_run(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(STEPS + "\nsteps()\n")
    subprocess.run([CLI, "run", "--dir", str(tmp_path / "r"), "--", sys.executable, str(prog)],
                   check=True, capture_output=True, text=True, timeout=120)
    [d] = result_dirs(str(tmp_path / "r"))
    subprocess.run([sys.executable, CHECK, d, "python"], check=True)
