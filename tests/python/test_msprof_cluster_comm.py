"""msprof-analyze's cluster analysis reads aiprof's per-rank communication
outputs (docs/COMMUNICATION.md): the 4-rank MPI example (rank 2 slowed)
analysed per rank, then `msprof-analyze cluster -m all` fills
CommunicationGroupMapping, ClusterCommunicationTime / Bandwidth / Matrix
from them (before these outputs it reported "Create CommunicationGroupMap
table failed" and no communication).  Skipped without msprof-analyze
(MSPROF_SRC, msprof_env.py) or without MPI.
"""
import os
import sqlite3
import subprocess

import pytest

import msprof_env
from mpi_example import BIN, ENV, needs_mpi, run_mpi_train

STEPS, PARAMS, RING = 3, 20000, 300

pytestmark = [
    pytest.mark.skipif(msprof_env.missing() is not None, reason=str(msprof_env.missing())),
    needs_mpi,
]


def _label(group):
    a = b = 0
    for c in group:
        a = (a * 29 + ord(c)) & 0xFFFFFFFF
        b = (b * 131 + ord(c)) & 0xFFFFFFFF
    return str(a << 32 | b)


def test_cluster_reads_the_communication_outputs(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    env = ENV
    run_mpi_train(runs, STEPS, PARAMS, RING)
    dirs = sorted(p for p in runs.iterdir() if p.name.endswith("_ascend_pt"))
    assert len(dirs) == 4
    for d in dirs:
        subprocess.run([os.path.join(BIN, "aiprof"), "analyse", "-q", str(d)], env=env,
                       check=True, capture_output=True, timeout=300)
    out = msprof_env.run(tmp_path, msprof_env.CLI, "cluster", "-d", str(runs), "-m", "all",
                         "-o", str(tmp_path / "ma"))
    assert "CommunicationGroupMap table failed" not in out, out[-3000:]
    assert "Communication matrix data is None" not in out, out[-3000:]
    db = sqlite3.connect(str(tmp_path / "ma" / "cluster_analysis_output" /
                             "cluster_analysis.db"))
    groups = {(t, r, g) for t, r, g in db.execute(
        "SELECT type, rank_set, group_name FROM CommunicationGroupMapping")}
    # groups by their label: msprof-analyze's double_hash of the recorded
    # name (MPI_COMM_WORLD, MPI_Comm[0,2]), as CANN names groups
    world, even = _label("MPI_COMM_WORLD"), _label("MPI_Comm[0,2]")
    assert ("collective", "(0,1,2,3)", world) in groups, groups
    assert ("p2p", "(0,1,2,3)", world) in groups, groups
    assert ("collective", "(0,2)", even) in groups, groups
    ranks = {r for (r,) in db.execute(
        "SELECT DISTINCT rank_id FROM ClusterCommunicationTime")}
    assert ranks == {0, 1, 2, 3}, ranks
    # every rank's broadcast in step 0: the whole parameter vector
    sizes = {r: s for r, s in db.execute(
        "SELECT rank_id, transit_size FROM ClusterCommunicationBandwidth "
        "WHERE hccl_op_name = 'hcom_broadcast__0_0_1' AND band_type = 'SDMA'")}
    assert sizes == {r: PARAMS * 4 / 1048576 for r in range(4)}, sizes
    # the ring's send links carry RING doubles per step
    links = db.execute("SELECT count(*), min(transit_size), max(transit_size) FROM "
                       "ClusterCommunicationMatrix WHERE hccl_op_name = 'send-total' "
                       "AND src_rank <> dst_rank").fetchone()
    assert links[0] >= STEPS and links[1] == links[2] == RING * 8 / 1048576, links
