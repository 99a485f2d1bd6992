"""The 4-rank MPI example (examples/mpi/mpi_train.c, rank 2 slowed) run for
the tests that analyse a cluster (test_cluster_parity.py,
test_msprof_cluster_comm.py).  Skipped where aiprof was built without MPI."""
import os
import shutil
import subprocess

import pytest

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__import__("aiprof").__file__)))
BIN = os.path.join(os.path.dirname(PYDIR), "bin")
ENV = dict(os.environ, OMPI_MCA_btl="self,vader", AIPROF_QUIET="1")

needs_mpi = pytest.mark.skipif(not os.path.exists(os.path.join(BIN, "mpi_train")) or
                               shutil.which("mpirun") is None,
                               reason="aiprof built without MPI")


def run_mpi_train(runs, steps=3, params=20000, ring=300):
    """4 ranks of mpi_train, rank 2 slowed by 5 ms a step, results in `runs`."""
    cmd = ["mpirun", "-np", "4", "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    subprocess.run(cmd + [os.path.join(BIN, "mpi_train"), "--steps", str(steps), "--params",
                          str(params), "--ring", str(ring), "--compute-ms", "2",
                          "--slow-rank", "2", "--slow-ms", "5", "--dir", str(runs)],
                   env=ENV, check=True, capture_output=True, timeout=300)
