"""`aiprof cluster` gives the numbers msprof-analyze's `cluster -m all` gives
from the same per-rank outputs.  Text mode (the ranks' .db files removed):
the 4-rank MPI example (rank 2 slowed), cluster_step_trace_time.csv with
the same header and the same rows, value for value and text for text, and
communication_group.json with the same groups, and
cluster_communication.json / cluster_communication_matrix.json with the
same keys and numbers, except the split fields (Transit / Wait /
Synchronization / Idle Time and the two ratios) of each op and their
totals, which msprof-analyze copies from the rank files that `aiprof
cluster` wrote the split into (docs/CLUSTER.md "Written back into the
ranks"; test_cluster_writeback.py compares them), and the "Split" note
aiprof adds to an op not split.  The matrix file is byte for byte msprof-analyze's once the ranks
are in one order.  Only the order of the ranks differs: msprof-analyze
keeps the order it found the directories in (the file system's), aiprof
sorts by rank.  Db mode: cluster_analysis.db's ClusterStepTraceTime,
CommunicationGroupMapping, HostInfo, RankDeviceMap and ClusterBaseInfo, DDL
and rows.  And the synthetic pipeline-parallel job (make_cluster_parallel.py,
no MPI): DP/PP/TP Index, stage rows, group ids.  Skipped without
msprof-analyze (MSPROF_SRC, msprof_env.py), the MPI runs without MPI.
"""
import ast
import json
import os
import shutil
import subprocess
import sys

import pytest

import msprof_env
from mpi_example import BIN, ENV, needs_mpi, run_mpi_train


pytestmark = [
    pytest.mark.skipif(msprof_env.missing() is not None, reason=str(msprof_env.missing())),
]


@needs_mpi
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

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLES = ("ClusterStepTraceTime", "CommunicationGroupMapping", "HostInfo", "RankDeviceMap",
          "ClusterBaseInfo")


def _tables(path):
    import sqlite3
    db = sqlite3.connect(str(path))
    ddl = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type='table'"))
    rows = {t: sorted(db.execute("SELECT * FROM %s" % t).fetchall(), key=repr)
            for t in TABLES if t in ddl}
    db.close()
    return ddl, rows


@needs_mpi
def test_cluster_db_matches_msprof_analyze(tmp_path):
    """db mode (the ranks' .db files kept): cluster_analysis.db's tables
    with the same DDL text and the same rows, distributed_args included
    (DP/PP/TP Index, ClusterBaseInfo)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    run_mpi_train(runs)
    for meta in runs.rglob("profiler_metadata.json"):
        m = json.loads(meta.read_text())
        m["distributed_args"] = {"tensor_model_parallel_size": 1,
                                 "pipeline_model_parallel_size": 1, "data_parallel_size": 4,
                                 "world_size": 4, "rank": 0}
        meta.write_text(json.dumps(m))
    subprocess.run([os.path.join(BIN, "aiprof"), "cluster", "-q", str(runs)], env=ENV,
                   check=True, capture_output=True, text=True, timeout=300)
    ours = tmp_path / "ours.db"
    shutil.move(str(runs / "cluster_analysis_output" / "cluster_analysis.db"), str(ours))
    shutil.rmtree(str(runs / "cluster_analysis_output"))
    out = msprof_env.run(tmp_path, msprof_env.CLI, "cluster", "-d", str(runs), "-m", "all",
                         "-o", str(tmp_path / "ma"))
    theirs = tmp_path / "ma" / "cluster_analysis_output" / "cluster_analysis.db"
    assert theirs.exists(), out[-3000:]
    ddl_a, rows_a = _tables(ours)
    ddl_b, rows_b = _tables(theirs)
    for t in TABLES:
        assert ddl_a.get(t) == ddl_b.get(t), (t, ddl_a.get(t), ddl_b.get(t))
        assert rows_a.get(t) == rows_b.get(t), (t, rows_a.get(t), rows_b.get(t))
    assert len(rows_a["ClusterStepTraceTime"]) == 16
    assert {r[12] for r in rows_a["ClusterStepTraceTime"]} == {0, 1, 2, 3}  # DP Index = rank


def test_cluster_parallel_text_matches_msprof_analyze(tmp_path):
    """text mode on the synthetic TP1/PP2/DP2 job (make_cluster_parallel.py):
    DP/PP/TP Index, the pipeline "stage" rows and the groups' group_id /
    pg_name from parallel_group_info, as msprof-analyze writes them."""
    job = tmp_path / "job"
    subprocess.run([sys.executable, os.path.join(SRC, "tests", "e2e",
                                                 "make_cluster_parallel.py"), str(job),
                    "--no-db"], check=True)
    subprocess.run([os.path.join(BIN, "aiprof"), "cluster", "-q", str(job)], env=ENV,
                   check=True, capture_output=True, text=True, timeout=300)
    ours = tmp_path / "ours"
    shutil.move(str(job / "cluster_analysis_output"), str(ours))
    out = msprof_env.run(tmp_path, msprof_env.CLI, "cluster", "-d", str(job), "-m", "all",
                         "-o", str(tmp_path / "ma"))
    theirs = tmp_path / "ma" / "cluster_analysis_output"
    assert (theirs / "cluster_step_trace_time.csv").exists(), out[-3000:]
    a = (ours / "cluster_step_trace_time.csv").read_text().splitlines()
    b = (theirs / "cluster_step_trace_time.csv").read_text().splitlines()
    assert a[0] == b[0] and a[0].endswith(",DP Index,PP Index,TP Index")
    assert sorted(a[1:]) == sorted(b[1:])
    assert sum(1 for line in a if ",stage," in line) == 4
    ga = json.loads((ours / "communication_group.json").read_text())
    gb = json.loads((theirs / "communication_group.json").read_text())
    for kind in ("collective", "p2p"):
        assert sorted(ga[kind]) == sorted(gb[kind])
    key = lambda g: (g["type"], g["group_name"])
    assert sorted(ga["comm_group_parallel_info"], key=key) == \
        sorted(gb["comm_group_parallel_info"], key=key)
    assert all(g["group_id"] and g["pg_name"] for g in ga["comm_group_parallel_info"])
