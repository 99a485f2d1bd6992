#!/usr/bin/env python3
"""mpi_overhead.py BUILD — what libaiprof_mpi.so's PMPI wrappers cost an MPI
call on two ranks (issue 15's target: at most 0.5 us per call).

The same plain MPI program (bench/mpi/mpi_bench_pair.c: 8-byte
MPI_Allreduce on MPI_COMM_WORLD, and MPI_Send / MPI_Recv ping-pong) runs
under `mpirun -np 2` as it is — the anchor — and under `aiprof run`, which
preloads libaiprof_mpi.so and records every call (one COMM_OP each).  The
two alternate, REPS times each; each figure is the median of its runs, as
ns per call measured inside the program (start-up and the trace's saving
not counted; each run's fastest tenth of its calls, so that another
program on the machine taking a CPU for a moment does not count).  Prints each cost as ns/call over the anchor and as a ratio.
Needs mpirun and a build with MPI; says so and exits 0 otherwise."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

REPS = 7
CALLS = 20000


def run(cmd, env):
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=300)
    if out.returncode:
        sys.exit("mpi_overhead: %s failed:\n%s" % (" ".join(cmd), out.stdout[-2000:]))
    vals = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("allreduce", "sendrecv"):
            vals[parts[0]] = float(parts[1])
    return vals


def main(build):
    prog = os.path.join(build, "bin", "mpi_bench_pair")
    aiprof = os.path.join(build, "bin", "aiprof")
    if not os.path.exists(prog) or not shutil.which("mpirun"):
        print("skipped: no MPI (apt-get install openmpi-bin libopenmpi-dev, rebuild)")
        return 0
    env = dict(os.environ, OMPI_MCA_btl="self,vader", AIPROF_QUIET="1")
    mpirun = ["mpirun", "-np", "2", "--oversubscribe"]
    if os.getuid() == 0:
        mpirun.append("--allow-run-as-root")
    tmp = tempfile.mkdtemp(prefix="aiprof_bench_mpi_")
    plain, recorded = [], []
    try:
        for _ in range(REPS):
            plain.append(run(mpirun + [prog, str(CALLS)], env))
            recorded.append(run(mpirun + [aiprof, "run", "--dir", tmp, "--no-analyse", "--",
                                          prog, str(CALLS)], env))
            for d in os.listdir(tmp):
                shutil.rmtree(os.path.join(tmp, d), ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PMPI wrappers on 2 ranks (mpirun -np 2, shared memory), ns per MPI call, "
          "median of %d alternating runs of %d calls (fastest tenth of each):" % (REPS, CALLS))
    print("%-28s %10s %10s %14s %8s" % ("call", "plain", "recorded", "wrapper cost", "ratio"))
    worst = 0.0
    for key, label in (("allreduce", "MPI_Allreduce 8 B"),
                       ("sendrecv", "MPI_Send / MPI_Recv 8 B")):
        a = statistics.median(r[key] for r in plain)
        b = statistics.median(r[key] for r in recorded)
        worst = max(worst, b - a)
        print("%-28s %10.1f %10.1f %+11.1f ns %7.2fx" % (label, a, b, b - a, b / a))
    print("wrapper cost per recorded call: at most %.1f ns (target <= 500 ns): %s"
          % (worst, "met" if worst <= 500 else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build"))
