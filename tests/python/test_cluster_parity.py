"""`aiprof cluster` gives the numbers msprof-analyze's `cluster -m all` gives
from the same per-rank outputs (text mode: the ranks' .db files removed):
the 4-rank MPI example (rank 2 slowed), cluster_step_trace_time.csv with
the same header and the same rows, value for value and text for text, and
communication_group.json with the same groups.  Only the order of the
ranks differs: msprof-analyze keeps the order it found the directories in
(the file system's), aiprof sorts by rank.  Skipped without msprof-analyze
(MSPROF_SRC, msprof_env.py) or without MPI.
"""
import json
import os
import shutil
import subprocess

import pytest

import msprof_env
from mpi_example import BIN, ENV, needs_mpi, run_mpi_train


pytestmark = [
    pytest.mark.skipif(msprof_env.missing() is not None, reason=str(msprof_env.missing())),
    needs_mpi,
]


def test_cluster_matches_msprof_analyze(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    env = ENV
    run_mpi_train(runs)
    verdict = subprocess.run([os.path.join(BIN, "aiprof"), "cluster", "-q", str(runs)], env=env,
                             check=True, capture_output=True, text=True, timeout=300).stdout
    assert "\nslow rank: 2 " in verdict, verdict
    ours = runs / "cluster_analysis_output"
    shutil.move(str(ours), str(tmp_path / "ours"))
    ours = tmp_path / "ours"
    for db in runs.rglob("*.db"):  # msprof-analyze reads text when no rank has a db
        db.unlink()
    out = msprof_env.run(tmp_path, msprof_env.CLI, "cluster", "-d", str(runs), "-m", "all",
                         "-o", str(tmp_path / "ma"))
    theirs = tmp_path / "ma" / "cluster_analysis_output"
    assert (theirs / "cluster_step_trace_time.csv").exists(), out[-3000:]
    a = (ours / "cluster_step_trace_time.csv").read_text().splitlines()
    b = (theirs / "cluster_step_trace_time.csv").read_text().splitlines()
    assert a[0] == b[0]
    assert len(a) == 1 + 4 * 4  # steps 0..2 and the closing barrier's step 3
    assert sorted(a[1:]) == sorted(b[1:])
    ga = json.loads((ours / "communication_group.json").read_text())
    gb = json.loads((theirs / "communication_group.json").read_text())
    for kind in ("collective", "p2p"):
        assert sorted(ga[kind]) == sorted(gb[kind]), (kind, ga[kind], gb[kind])
    key = lambda g: (g["type"], g["group_name"])
    assert sorted(ga["comm_group_parallel_info"], key=key) == \
        sorted(gb["comm_group_parallel_info"], key=key)
