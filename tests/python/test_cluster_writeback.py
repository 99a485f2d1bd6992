"""The cross-rank communication split and the ranks' own files
(docs/COMMUNICATION.md, docs/CLUSTER.md "Written back into the ranks"), on
the 4-rank MPI example (rank 2 slowed):

- a rank analysed alone writes only what it measured: no Transit / Wait /
  Synchronization / Idle time, transit time, bandwidth or size
  distribution in communication.json, NULL in analysis.db, no time on a
  collective's self link (before: 0 beside the elapse, and a bandwidth
  that divided by the time spent waiting) and no collective "total"
  matrix entry, which would have none;
- `aiprof cluster` writes the measured split into each rank's
  communication.json, communication_matrix.json and analysis.db: wait +
  transit + idle = elapse, the bandwidth block's transit is the Time
  Info's, its bandwidth divides by it; each collective type's total entry
  is added with the sum of its ops' transit times; the cluster's own
  cluster_communication.json has one transit per record too;
- a second pass writes the same bytes; `aiprof analyse DIR` takes it out;
- msprof-analyze's cluster analysis then reads the measured figures
  (skipped, saying why, without msprof-analyze).
Skipped without MPI.
"""
import filecmp
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

import msprof_env
from mpi_example import BIN, ENV, needs_mpi, run_mpi_train

pytestmark = needs_mpi
SPLIT = ("Transit Time(ms)", "Wait Time(ms)", "Synchronization Time(ms)", "Idle Time(ms)",
         "Wait Time Ratio", "Synchronization Time Ratio")
OUT = "ASCEND_PROFILER_OUTPUT"


def aiprof(*args):
    return subprocess.run([os.path.join(BIN, "aiprof"), *args], env=ENV, check=True,
                          capture_output=True, text=True, timeout=300).stdout


def load(d, name):
    with open(os.path.join(d, OUT, name)) as f:
        return json.load(f)


def ops(comm):
    for step, classes in comm.items():
        for cls, entries in classes.items():
            for key, op in entries.items():
                if key != "Total Op Info":
                    yield step, cls, key, op


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    runs = tmp_path_factory.mktemp("wb") / "runs"
    runs.mkdir()
    run_mpi_train(runs, 3, 20000, 300)
    dirs = sorted(str(p) for p in runs.iterdir() if p.name.endswith("_ascend_pt"))
    assert len(dirs) == 4
    for d in dirs:
        aiprof("analyse", "-q", d)
    return runs, dirs


def test_rank_alone_writes_only_what_it_measured(runs):
    _, dirs = runs
    for d in dirs:
        for step, cls, key, op in ops(load(d, "communication.json")):
            t = op["Communication Time Info"]
            assert set(t) == {"Start Timestamp(us)", "Elapse Time(ms)"}, (key, t)
            for tt, bw in op["Communication Bandwidth Info"].items():
                assert set(bw) == {"Transit Size(MB)", "Large Packet Ratio"}, (key, bw)
        for step, classes in load(d, "communication_matrix.json").items():
            for key, links in classes["collective"].items():
                for link, v in links.items():
                    a, b = link.split("-")
                    if a == b:  # its elapse holds the wait: no time, no bandwidth
                        assert "Transit Time(ms)" not in v and "Bandwidth(GB/s)" not in v, v
                # and no total, whose size msprof-analyze would divide by its time
                assert "-total@" not in key, key
        db = sqlite3.connect(os.path.join(d, OUT, "analysis.db"))
        assert db.execute("SELECT count(*) FROM CommAnalyzerTime WHERE transit_time IS NOT "
                          "NULL OR wait_time IS NOT NULL OR idle_time IS NOT NULL").fetchone() \
            == (0,)
        assert db.execute("SELECT count(*) FROM CommAnalyzerBandwidth WHERE transit_time IS "
                          "NOT NULL OR bandwidth IS NOT NULL").fetchone() == (0,)
        db.close()


def check_split(d):
    """The split as written into rank directory d; the number of split ops."""
    comm = load(d, "communication.json")
    split = 0
    for step, cls, key, op in ops(comm):
        t = op["Communication Time Info"]
        # no text in a Time Info: msprof-analyze adds every field up
        assert all(isinstance(v, (int, float)) for v in t.values()), (key, t)
        if "Transit Time(ms)" not in t:
            assert cls == "p2p", (key, t)  # only point-to-point stays whole
            assert not any(k in t for k in SPLIT[1:]), t
            continue
        split += 1
        assert abs(t["Transit Time(ms)"] + t["Wait Time(ms)"] + t["Idle Time(ms)"] -
                   t["Elapse Time(ms)"]) < 2e-6, (key, t)
        for tt, bw in op["Communication Bandwidth Info"].items():
            assert bw["Transit Time(ms)"] == t["Transit Time(ms)"], (key, t, bw)
            want = round(bw["Transit Size(MB)"] / bw["Transit Time(ms)"], 4) \
                if bw["Transit Time(ms)"] > 0 else 0
            assert bw["Bandwidth(GB/s)"] == want, (key, bw)
            assert [v[1] for v in bw["Size Distribution"].values()] == [t["Transit Time(ms)"]]
    totals = {}
    for step, classes in load(d, "communication_matrix.json").items():
        for key, links in classes["collective"].items():
            for link, v in links.items():
                a, b = link.split("-")
                if a != b:
                    continue
                if "-total@" in key:
                    # added by aiprof cluster: the sum of the type's split ops
                    kind, group = key.split("-total@")
                    mine = [op for k, op in comm[step]["collective"].items()
                            if k.endswith("@" + group) and
                            k.split("__")[0][len("hcom_"):].lower() == kind]
                    want = sum(op["Communication Time Info"]["Transit Time(ms)"] for op in mine)
                    assert mine and abs(v["Transit Time(ms)"] - want) < 1e-9, (key, v, want)
                    totals[(key, step)] = v["Transit Time(ms)"]
                    continue
                op = comm[step]["collective"][v["Op Name"] + "@" + key.split("@", 1)[1]]
                assert v["Transit Time(ms)"] == \
                    op["Communication Time Info"]["Transit Time(ms)"], (key, v)
    db = sqlite3.connect(os.path.join(d, OUT, "analysis.db"))
    rows = {(n + "@" + g, s): (tr, w, i) for n, g, s, tr, w, i in db.execute(
        "SELECT hccl_op_name, group_name, step, transit_time, wait_time, idle_time FROM "
        "CommAnalyzerTime WHERE type = 'collective'")}
    # the totals as rows of their own (the rank had none)
    assert totals == {(n + "@" + g, s): t for n, g, s, t in db.execute(
        "SELECT hccl_op_name, group_name, step, transit_time FROM CommAnalyzerMatrix WHERE "
        "type = 'collective' AND hccl_op_name LIKE '%-total'")}, totals
    assert totals
    db.close()
    for step, cls, key, op in ops(comm):
        if cls == "collective":
            t = op["Communication Time Info"]
            assert rows[(key, step)] == (t["Transit Time(ms)"], t["Wait Time(ms)"],
                                         t["Idle Time(ms)"]), key
    return split


def test_cluster_writes_the_split_back(runs, tmp_path):
    top, dirs = runs
    before = tmp_path / "before"
    shutil.copytree(dirs[0], before)
    out = aiprof("cluster", str(top))
    assert "written into 4 rank directories" in out, out
    assert all(check_split(d) >= 13 for d in dirs)
    # the cluster's own file: one transit per record (point 4 of issue 26)
    with open(os.path.join(top, "cluster_analysis_output", "cluster_communication.json")) as f:
        cluster = json.load(f)
    n = 0
    for rank_set, steps in cluster.items():
        for step, entries in steps.items():
            for key, by_rank in entries.items():
                for rank, op in by_rank.items():
                    t = op["Communication Time Info"]
                    if key.startswith("Total") or "Transit Time(ms)" not in t:
                        continue
                    for bw in op["Communication Bandwidth Info"].values():
                        assert bw["Transit Time(ms)"] == t["Transit Time(ms)"], (key, rank)
                        n += 1
    assert n >= 4 * 13
    # a second pass: the same bytes; `aiprof analyse` restores the rank's own
    snap = tmp_path / "snap"
    shutil.copytree(dirs[1], snap)
    out = aiprof("cluster", str(top))  # the totals' rows exist now: updated in place
    assert "written into 4 rank directories" in out and "not written back" not in out, out
    for name in ("communication.json", "communication_matrix.json", "analysis.db"):
        assert filecmp.cmp(os.path.join(dirs[1], OUT, name), snap / OUT / name, shallow=False)
    aiprof("analyse", "-q", dirs[0])
    for name in ("communication.json", "communication_matrix.json"):
        assert filecmp.cmp(os.path.join(dirs[0], OUT, name), before / OUT / name,
                           shallow=False), name
    aiprof("cluster", str(top))


def msprof_cmd():
    exe = os.path.join(os.path.dirname(sys.executable), "msprof-analyze")
    if os.access(exe, os.X_OK):
        return [exe], None
    if msprof_env.missing() is None:
        return None, "MSPROF_SRC"
    return None, f"no msprof-analyze beside {sys.executable}; {msprof_env.missing()}"


def test_msprof_reads_the_measured_split(runs, tmp_path):
    cmd, why = msprof_cmd()
    if cmd is None and why != "MSPROF_SRC":
        pytest.skip(why)
    top, dirs = runs
    aiprof("cluster", str(top))
    ma = tmp_path / "ma"
    if cmd:
        proc = subprocess.run(cmd + ["cluster", "-d", str(top), "-m", "all", "-o", str(ma)],
                              capture_output=True, text=True, timeout=600, cwd=tmp_path)
        log = proc.stdout + proc.stderr
    else:
        log = msprof_env.run(tmp_path, msprof_env.CLI, "cluster", "-d", str(top), "-m", "all",
                             "-o", str(ma))
    assert "Traceback" not in log, log[-3000:]
    q = ("SELECT step, rank_id, hccl_op_name, round(elapsed_time, 6), round(transit_time, 6), "
         "round(wait_time, 6), round(idle_time, 6) FROM ClusterCommunicationTime WHERE "
         "hccl_op_name LIKE 'hcom_%' AND transit_time IS NOT NULL")
    theirs = set(sqlite3.connect(str(ma / "cluster_analysis_output" /
                                     "cluster_analysis.db")).execute(q))
    ours = set(sqlite3.connect(os.path.join(top, "cluster_analysis_output",
                                            "cluster_analysis.db")).execute(q))
    assert len(ours) >= 4 * 13 and theirs == ours, (sorted(theirs ^ ours)[:6], len(ours))
    assert any(r[5] > 0 for r in theirs)  # rank 2 is slow: the others wait
