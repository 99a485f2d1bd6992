"""`aiprof cluster` gives the numbers msprof-analyze's `cluster -m all` gives
from the same per-rank outputs (text mode: the ranks' .db files removed):
the 4-rank MPI example (rank 2 slowed), cluster_step_trace_time.csv with
the same header and the same rows, value for value and text for text, and
communication_group.json with the same groups, and
cluster_communication.json / cluster_communication_matrix.json with the
same keys and numbers, except the split fields (Transit / Wait /
Synchronization / Idle Time and the two ratios) of each op and their
totals: msprof-analyze sums the per-rank files' 0s ("not split here"),
aiprof fills the cross-rank split, and adds its "Split" note to an op not
split.  The matrix file is byte for byte msprof-analyze's once the ranks
are in one order.  Only the order of the ranks differs: msprof-analyze
keeps the order it found the directories in (the file system's), aiprof
sorts by rank.  Skipped without msprof-analyze
(MSPROF_SRC, msprof_env.py) or without MPI.
"""
import ast
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

    # cluster_communication(.json/_matrix.json): the same numbers
    split = {"Transit Time(ms)", "Wait Time(ms)", "Synchronization Time(ms)", "Idle Time(ms)",
             "Wait Time Ratio", "Synchronization Time Ratio", "Split"}

    def norm(d, depth=0, parent=None):
        if not isinstance(d, dict):
            return d
        out = {}
        for k, v in d.items():
            if depth == 0:  # "(0, 1, 2, 3)": the same set
                k = tuple(sorted(ast.literal_eval(k)))
            if parent == "Communication Time Info" and k in split:
                continue
            out[k] = norm(v, depth + 1, k)
        return out

    def same(a, b, path):
        if isinstance(a, dict) and isinstance(b, dict):
            assert set(a) == set(b), (path, set(a) ^ set(b))
            for k in a:
                same(a[k], b[k], path + (k,))
        elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
            assert a == pytest.approx(b, rel=1e-9, abs=1e-12), (path, a, b)
        else:
            assert a == b, (path, a, b)

    for name in ("cluster_communication.json", "cluster_communication_matrix.json"):
        a = json.loads((ours / name).read_text())
        b = json.loads((theirs / name).read_text())
        same(norm(a), norm(b), (name,))
    ops = json.loads((ours / "cluster_communication.json").read_text())["(0, 1, 2, 3)"]
    waits = [t["Communication Time Info"].get("Wait Time(ms)", 0)
             for d in ops.values() for op, ranks in d.items()
             if op.startswith("hcom_allReduce") for t in ranks.values()]
    assert any(w > 0 for w in waits)  # the split is there, where msprof-analyze has 0

    # the matrix text: msprof-analyze's, with the rank sets and the links
    # in one order (both follow the order the ranks are read in)
    def rank_order(d):
        return {s: {st: {op: dict(sorted(links.items())) for op, links in ops_.items()}
                    for st, ops_ in steps.items()} for s, steps in sorted(d.items())}
    a = json.loads((ours / "cluster_communication_matrix.json").read_text())
    b = json.loads((theirs / "cluster_communication_matrix.json").read_text())
    assert json.dumps(rank_order(a)) == json.dumps(rank_order(b))
