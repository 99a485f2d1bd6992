"""Host-side Computing (docs/RESULT_LAYOUT.md): the MPI example annotates
its compute ("backward": compute_ms, with MPI_Iallreduce of the first half
outstanding during the second half; rank 2 computes slow_ms more) and
step_trace_time.csv must count it: Computing at least the annotated
compute of every step, Overlapped at least the half computed while the
Iallreduce was outstanding, Communication = Overlapped + Not Overlapped,
and `aiprof cluster` says the same per rank.  Before, Computing was 0.000
on every rank and the overlapped compute counted as Communication(Not
Overlapped).  The bounds are what the program guarantees (its compute
spins until the time has passed), not timings.  Skipped without MPI.
"""
import csv
import io
import os
import subprocess

from mpi_example import BIN, ENV, needs_mpi, run_mpi_train

pytestmark = needs_mpi
COMPUTE_MS, SLOW_MS, STEPS = 2, 5, 3  # run_mpi_train's


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(io.StringIO(f.read())))


def test_annotated_compute_is_computing(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    run_mpi_train(runs, STEPS)
    dirs = sorted(p for p in runs.iterdir() if p.name.endswith("_ascend_pt"))
    assert len(dirs) == 4
    ranks = {}
    for d in dirs:
        subprocess.run([os.path.join(BIN, "aiprof"), "analyse", "-q", str(d)], env=ENV,
                       check=True, capture_output=True, timeout=300)
        rank = int(next(f for f in os.listdir(d) if f.startswith("profiler_info_"))[14:-5])
        ranks[rank] = {r["Step"]: r for r in rows(d / "ASCEND_PROFILER_OUTPUT" /
                                                   "step_trace_time.csv")}
    for rank, by_step in ranks.items():
        want = (COMPUTE_MS + (SLOW_MS if rank == 2 else 0)) * 1000
        for step in map(str, range(STEPS)):
            r = {k: float(v) for k, v in by_step[step].items() if k not in ("Device_id",)}
            assert r["Computing"] >= want, (rank, step, r)
            assert r["Overlapped"] >= COMPUTE_MS * 1000 / 2, (rank, step, r)
            assert abs(r["Communication"] - r["Overlapped"] -
                       r["Communication(Not Overlapped)"]) < 0.002, r
    subprocess.run([os.path.join(BIN, "aiprof"), "cluster", "-q", str(runs)], env=ENV,
                   check=True, capture_output=True, timeout=300)
    cluster = rows(runs / "cluster_analysis_output" / "cluster_step_trace_time.csv")
    seen = 0
    for r in cluster:
        if r["Type"] != "rank" or r["Step"] not in ranks[int(r["Index"])]:
            continue
        mine = ranks[int(r["Index"])][r["Step"]]
        for col in ("Computing", "Overlapped", "Communication(Not Overlapped)", "Free"):
            assert float(r[col]) == float(mine[col]), (r, mine)
        seen += 1
    assert seen == sum(len(v) for v in ranks.values())
