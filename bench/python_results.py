"""events() + key_averages() of a finished profile, on the loops of
bench/python_overhead.py (a small MLP, all options on).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_results.py [--steps 20 100]

For each step count it records one profile (analyse_flag=False: nothing
analysed at stop, as when a script only asks for key_averages()), then
times events() + key_averages() on a fresh result object: the first call
(whatever is done once per directory) and the fastest of --rounds later
ones; libaiprof loads the raw data and returns the op rows
(aip_result_op_rows) each time.
"""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import aiprof  # noqa: E402
import python_overhead  # noqa: E402  (its loops and modes)
from aiprof.profiler._results import TraceResult  # noqa: E402


def record(steps, out_dir):
    step = python_overhead.LOOPS["mlp"]()
    prof = aiprof.profiler.profile(
        activities=[aiprof.profiler.ProfilerActivity.CPU],
        on_trace_ready=aiprof.profiler.tensorboard_trace_handler(out_dir, analyse_flag=False),
        **python_overhead.MODES["all"])
    with prof:
        for _ in range(steps):
            step()
    return prof._trace_dir


def time_results(result_dir, rounds, with_events):
    """(first call's ns, fastest later call's ns, events): the first
    includes whatever is done once per directory (before the op rows: the
    trace_view.json analysis).  key_averages() alone reads the columns;
    events() also makes a FunctionEvent per row."""
    times, n = [], 0
    for _ in range(rounds + 1):
        r = TraceResult(result_dir, profile_memory=True, with_stack=True)
        t0 = time.perf_counter_ns()
        if with_events:
            n = len(r.events())
        n = max(n, sum(a.count for a in r.key_averages()))
        times.append(time.perf_counter_ns() - t0)
    return times[0], min(times[1:]), n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for steps in args.steps:
        with tempfile.TemporaryDirectory() as d:
            rd = record(steps, d)
            for with_events, what in ((False, "key_averages()"),
                                      (True, "events()+key_averages()")):
                first, ns, n = time_results(rd, args.rounds, with_events)
                print(f"{steps:4d} steps, {n:6d} events, {what:24s} first "
                      f"{first / 1e6:8.2f} ms, then {ns / 1e6:8.2f} ms "
                      f"({ns / max(n, 1):6.0f} ns/event)")


if __name__ == "__main__":
    main()
