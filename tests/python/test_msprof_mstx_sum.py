"""msprof-analyze's `mstx_sum` recipe (the released 26.2.0, installed:
msprof_env.INSTALLED) on a 2-rank profile with mstx ranges and marks.  It
reads MSTX_EVENTS (with STRING_IDS and STEP_TIME) of each rank's
ascend_pytorch_profiler_N.db, and its figures equal ours:

- every start/end range: count and total time per (rank, message) = the
  summary's "mstx ranges" table of that rank (`aiprof summary`), each in
  its own step (STEP_TIME);
- the `optimizer_start` / `optimizer_stop` mark pair, which mstx_sum turns
  into a duration: = the two marks' distance in our trace_view.json.

msprof-analyze 26.2.0 reads the ranges' device times through TASK when the
table exists, and with no range on a device (a host-only profile) they are
all None and it stops (TypeError: None - None in format_range_info): its own
bug, which torch_npu's data meets too where its TASK table exists and no
mstx range ran on a stream.  Our host-only databases keep their empty TASK
table (cluster_time_summary, communication_bottleneck and others query it
without asking), so the figures are checked on copies shaped as torch_npu's
CPU-only database (no TASK table: device times 0), and the failure on ours
is pinned: that error and no other (a fixed release makes that test fail:
then this note and docs/DATABASES.md are out of date).

Skipped, saying why, without the installed msprof-analyze.
"""
import glob
import importlib.util
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

import pytest

import msprof_env
from mpi_example import BIN, ENV

pytestmark = [
    pytest.mark.skipif(msprof_env.installed_missing() is not None,
                       reason=str(msprof_env.installed_missing())),
    pytest.mark.skipif(importlib.util.find_spec("msprof_analyze") is None,
                       reason="runs in the pass whose Python has msprof-analyze (the torch 2.x "
                              "venv's)"),
]

STEPS = 3
# Each rank: per step a "forward" range (rank + 2 ms), a "backward" range
# (1 ms), and an optimizer_start / optimizer_stop mark pair 1 ms apart.
_SCRIPT = r'''
import os, sys, time
import aiprof.profiler as P
from aiprof import mstx

def busy(ms):
    t = time.perf_counter()
    while (time.perf_counter() - t) * 1000 < ms:
        pass

rank = int(os.environ["RANK"])
with P.profile(activities=[P.ProfilerActivity.CPU],
               schedule=P.schedule(wait=0, warmup=0, active=%d, repeat=1),
               experimental_config=P._ExperimentalConfig(mstx=True),
               on_trace_ready=P.tensorboard_trace_handler(sys.argv[1])) as prof:
    for step in range(%d):
        r = mstx.range_start("forward")
        busy(2 + rank)
        mstx.range_end(r)
        r = mstx.range_start("backward")
        busy(1)
        mstx.range_end(r)
        mstx.mark("optimizer_start")
        busy(1)
        mstx.mark("optimizer_stop")
        prof.step()
''' % (STEPS, STEPS)


def _rank_of(d):
    return int(glob.glob(os.path.join(d, "profiler_info_*.json"))[0].rsplit("_", 1)[1][:-5])


def _our_ranges(d):
    """(message) -> (count, total ms) from the summary's mstx table."""
    out = subprocess.run([os.path.join(BIN, "aiprof"), "summary", d], env=ENV, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    table = out.split("\nmstx ranges:", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    got = {}
    for line in table:
        total, count, _avg, _max, _domain, message = line.split(None, 5)
        got[message] = (int(count), float(total))
    return got


def _our_mark_gaps(d):
    """The optimizer_start → optimizer_stop distances (ns) in trace_view.json."""
    with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "trace_view.json")) as f:
        events = json.load(f)
    ts = {"optimizer_start": [], "optimizer_stop": []}
    for e in events:
        if e.get("ph") in ("i", "I") and e.get("name") in ts:
            a, b = e["ts"].split(".") if isinstance(e["ts"], str) else ("%.3f" % e["ts"]).split(".")
            ts[e["name"]].append(int(a) * 1000 + int(b))
    assert len(ts["optimizer_start"]) == len(ts["optimizer_stop"]) == STEPS, ts
    return [b - a for a, b in zip(sorted(ts["optimizer_start"]), sorted(ts["optimizer_stop"]))]


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """The two ranks' result directories (analysed by on_trace_ready)."""
    top = tmp_path_factory.mktemp("mstx")
    script = top / "ranks.py"
    script.write_text(_SCRIPT)
    pkg = os.path.dirname(os.path.dirname(__import__("aiprof").__file__))
    for rank in (0, 1):
        env = dict(ENV, RANK=str(rank), WORLD_SIZE="2",
                   PYTHONPATH=os.pathsep.join(p for p in [pkg, os.environ.get("PYTHONPATH")]
                                              if p))
        proc = subprocess.run([sys.executable, str(script), str(top / "job")], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
    dirs = sorted(glob.glob(str(top / "job" / "*_ascend_pt")))
    assert sorted(_rank_of(d) for d in dirs) == [0, 1]
    return top / "job"


def _mstx_sum(tmp_path, job):
    """mstx_sum's MSTXMarkStats rows, after checking its log is clean."""
    out = msprof_env.run_installed(str(tmp_path), "cluster", "-d", str(job), "-m", "mstx_sum",
                                   "-o", str(tmp_path / "res"))
    bad = [line for line in out.splitlines()
           if "[ERROR]" in line or any(b in line for b in (
               "Traceback", "no such table", "no such column", "There is no mstx data"))]
    assert not bad, out[-3000:]
    db = sqlite3.connect(str(tmp_path / "res" / "cluster_analysis_output" /
                             "cluster_analysis.db"))
    db.row_factory = sqlite3.Row
    rows = [dict(r) for r in db.execute("SELECT * FROM MSTXMarkStats")]
    db.close()
    return rows


def test_mstx_sum_with_empty_task_table(job, tmp_path):
    """On our databases as written (an empty TASK table beside host-only
    mstx ranges) msprof-analyze 26.2.0 stops in its own code, and only
    there: the None - None of the ranges' device times, nothing missing from
    our tables.  A release that fixes it makes this fail: then check the
    figures on our databases as they are, and update docs/DATABASES.md."""
    out = msprof_env.run_installed(str(tmp_path), "cluster", "-d", str(job), "-m", "mstx_sum",
                                   "-o", str(tmp_path / "res"))
    errors = [line.split("] ", 1)[-1] for line in out.splitlines() if "[ERROR]" in line]
    assert errors == ["unsupported operand type(s) for -: 'NoneType' and 'NoneType'",
                      "Mapper data is None."], out[-3000:]
    assert not any(b in out for b in ("no such table", "no such column")), out[-3000:]


def test_mstx_sum_equals_ours(job, tmp_path):
    shaped = tmp_path / "job"
    shutil.copytree(job, shaped)
    for db in glob.glob(str(shaped / "*" / "ASCEND_PROFILER_OUTPUT" / "*.db")):
        con = sqlite3.connect(db)
        con.execute("DROP TABLE IF EXISTS TASK")  # torch_npu's CPU-only database has none
        con.commit()
        con.close()
    rows = _mstx_sum(tmp_path, shaped)
    theirs, gaps, steps = {}, {}, {}
    for r in rows:
        rank = int(r["Rank"])
        name = re.sub(r"_\d+$", "", r["Name"])  # mstx_sum numbers repeats within a step
        cann = float(r["CannDurationNs"])
        assert float(r["DeviceDurationNs"]) == 0, r  # nothing ran on a device
        if name == "optimizer":
            gaps.setdefault(rank, []).append(cann)
            continue
        n, s = theirs.get((rank, name), (0, 0.0))
        theirs[(rank, name)] = (n + 1, s + cann)
        steps.setdefault((rank, name), set()).add(int(r["StepId"]))
    for d in sorted(glob.glob(str(job / "*_ascend_pt"))):
        rank = _rank_of(d)
        ours = _our_ranges(d)
        assert set(ours) == {"forward", "backward"}, ours
        for name, (count, total_ms) in ours.items():
            n, s = theirs[(rank, name)]
            assert n == count == STEPS, (rank, name, n, count)
            assert abs(s / 1e6 - total_ms) <= 0.0005 + 1e-9, (rank, name, s, total_ms)
            assert len(steps[(rank, name)]) == STEPS, steps
        assert sorted(gaps[rank]) == sorted(float(g) for g in _our_mark_gaps(d)), \
            (rank, gaps[rank])
    print(f"mstx_sum: {len(rows)} rows over 2 ranks equal ours")
