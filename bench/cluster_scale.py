#!/usr/bin/env python3
"""cluster_scale.py BUILD — `aiprof cluster` at scale (issue 15, Performance).

1. Linearity: synthetic, already analysed rank directories
   (tests/e2e/make_cluster_dirs.py --ranks N: per rank 3 steps, 8
   collectives and 2 p2p ops each, with communication_matrix.json) at 100,
   300 and 1,000 ranks: seconds, seconds per 100 ranks, and that figure
   against the 100-rank run (the anchor; 1.00 = linear), wall and CPU
   (user + system of the aiprof process: the machine is often shared), and
   the peak resident memory of the aiprof process (its rusage), beside the
   bytes of the rank files it reads, measured in the same run (issue 30:
   <= 100 MiB at 1,000 ranks, CPU per 100 ranks at 1,000 <= 1.1x that at
   100).
2. Ranks whose raw data must be analysed first (the per-rank work): 16 rank
   directories, each a copy of one raw profile of 200,000 framework ops
   (bench_analyse --keep; the golden input where it is missing).  `-j 1`
   is the anchor; `-j 2`, and `mpirun -np 2 aiprof cluster --mpi -j 1`
   (two processes, each analysing half), as speed-ups over it.
3. `--mpi` with 2 processes on the 1,000 summaries, against one process
   (process 0 still builds every rank's summaries in memory, so on one
   machine the gain is small: --mpi is for ranks that need analysing and
   for clusters past one machine), and mpirun's own start for scale.
Runs alternate between the variants, REPS rounds; each figure is a median.
The --mpi parts need mpirun and libaiprof_cluster_mpi.so; skipped without."""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPS = 3
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GEN = os.path.join(SRC, "tests", "e2e", "make_cluster_dirs.py")


def timed(cmd, env, ok=(0,), usage=None):
    """Wall seconds of `cmd`; with `usage` (a list), its (CPU seconds,
    peak RSS in KiB) appended: the child's own rusage (os.wait4), not the
    largest of every child this script ran."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        t = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode not in ok:
            log.seek(0)
            sys.exit("cluster_scale: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode,
                                                             log.read()[-2000:].decode()))
    if usage is not None:
        usage.append((ru.ru_utime + ru.ru_stime, ru.ru_maxrss))
    return t


def summary_bytes(top):
    """Bytes of what `aiprof cluster` reads of analysed ranks: the rank
    summaries and metadata (not its own outputs)."""
    n = 0
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != "cluster_analysis_output"]
        n += sum(os.path.getsize(os.path.join(root, f)) for f in files
                 if f.endswith((".json", ".csv")))
    return n


def unanalyse(top):
    """Back to raw data only, so that the next run analyses every rank."""
    for root, dirs, _ in os.walk(top):
        for d in list(dirs):
            if d in ("ASCEND_PROFILER_OUTPUT", "cluster_analysis_output", "logs"):
                shutil.rmtree(os.path.join(root, d))
                dirs.remove(d)


def raw_template(build, tmp, env):
    bench = os.path.join(build, "bin", "bench_analyse")
    if not os.path.exists(bench):
        return None, "the golden input"
    out = subprocess.run([bench, "200000", "1", "--keep"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, cwd=tmp).stdout
    m = re.search(r"kept (\S+)", out)
    return (m.group(1), "200,000 framework ops") if m else (None, "the golden input")


def main(build):
    build = os.path.abspath(build)
    aiprof = os.path.join(build, "bin", "aiprof")
    env = dict(os.environ, AIPROF_QUIET="1", OMPI_MCA_btl="self,vader")
    mpi = (os.path.exists(os.path.join(build, "lib", "libaiprof_cluster_mpi.so"))
           and shutil.which("mpirun"))
    mpirun = ["mpirun", "-np", "2", "--oversubscribe"]
    if os.getuid() == 0:
        mpirun.append("--allow-run-as-root")
    tmp = tempfile.mkdtemp(prefix="aiprof_bench_cluster_")
    kept = None
    try:
        sizes = (100, 300, 1000)
        for n in sizes:
            subprocess.run([sys.executable, GEN, os.path.join(tmp, "s%d" % n), "37", "3000",
                            "--ranks", str(n)], check=True)
        kept, what = raw_template(build, tmp, env)
        raw = os.path.join(tmp, "raw")
        subprocess.run([sys.executable, GEN, raw, "0", "0", "--ranks", "16", "--raw"] +
                       (["--template", kept] if kept else []), check=True)
        t = {}

        use = {}

        def add(key, cmd, before=None):
            if before:
                before()
            t.setdefault(key, []).append(timed(cmd, env, usage=use.setdefault(key, [])))

        for _ in range(REPS):
            for n in sizes:
                add(("sum", n), [aiprof, "cluster", "-q", os.path.join(tmp, "s%d" % n)])
            if mpi:
                add("mpi1000", mpirun + [aiprof, "cluster", "--mpi", "-q",
                                         os.path.join(tmp, "s1000")])
                add("mpirun", mpirun + ["true"])
            add("j1", [aiprof, "cluster", "-q", "-j", "1", raw], lambda: unanalyse(raw))
            add("j2", [aiprof, "cluster", "-q", "-j", "2", raw], lambda: unanalyse(raw))
            if mpi:
                add("mpiraw", mpirun + [aiprof, "cluster", "--mpi", "-q", "-j", "1", raw],
                    lambda: unanalyse(raw))
        med = {k: statistics.median(v) for k, v in t.items()}
        print("aiprof cluster, median of %d alternating runs (%d CPUs):" % (REPS, os.cpu_count()))
        anchor = med[("sum", 100)] / 100 * 100
        print("  analysed ranks (summaries only)   seconds   s per 100 ranks   vs 100 ranks")
        for n in sizes:
            per = med[("sum", n)] / n * 100
            print("  %5d ranks %27.3f %17.3f %13.2fx" % (n, med[("sum", n)], per, per / anchor))
        cpu = {n: statistics.median(u[0] for u in use[("sum", n)]) for n in sizes}
        rss = {n: statistics.median(u[1] for u in use[("sum", n)]) / 1024 for n in sizes}
        data = {n: summary_bytes(os.path.join(tmp, "s%d" % n)) / 2**20 for n in sizes}
        print("  same runs, the aiprof process's rusage (CPU: user + system):")
        print("              CPU s   CPU s per 100 ranks   vs 100 ranks   peak RSS   "
              "rank files read   RSS / files")
        for n in sizes:
            per = cpu[n] / n * 100
            print("  %5d ranks %7.3f %21.3f %13.2fx %7.1f MiB %13.1f MiB %12.2fx"
                  % (n, cpu[n], per, per / (cpu[100] / 100 * 100), rss[n], data[n],
                     rss[n] / data[n]))
        print("  target (issue 30): peak RSS <= 100 MiB at 1,000 ranks (now %.1f MiB), "
              "CPU per 100 ranks at 1,000 <= 1.10x that at 100 (now %.2fx)"
              % (rss[1000], cpu[1000] / cpu[100] / 10))
        print("  raw ranks (16 x %s), analysed first:" % what)
        print("    -j 1 (anchor)                   %7.3f s" % med["j1"])
        print("    -j 2                            %7.3f s   speed-up %.2fx"
              % (med["j2"], med["j1"] / med["j2"]))
        if mpi:
            print("    mpirun -np 2 --mpi -j 1         %7.3f s   speed-up %.2fx"
                  % (med["mpiraw"], med["j1"] / med["mpiraw"]))
            print("  1,000 ranks (summaries only):")
            print("    one process (anchor)            %7.3f s" % med[("sum", 1000)])
            print("    mpirun -np 2 --mpi              %7.3f s   speed-up %.2fx "
                  "(mpirun's own start: %.3f s)" % (med["mpi1000"],
                                                     med[("sum", 1000)] / med["mpi1000"],
                                                     med["mpirun"]))
        else:
            print("  --mpi: skipped (no mpirun or libaiprof_cluster_mpi.so)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if kept:
            shutil.rmtree(os.path.dirname(kept), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build"))
