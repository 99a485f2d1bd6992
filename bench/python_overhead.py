"""aiprof vs torch.profiler on the same PyTorch training loops, in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [--quick]

For each mode (default, record_shapes, with_stack, profile_memory, all
together) and each loop (a small MLP and a small CNN from examples/python,
sized so that per-op costs dominate), it measures:

  - collection overhead: the fastest step while recording minus the
    fastest step with no profiler in the baseline run just before it
    (process CPU time: every thread of the process counts, other
    processes do not), the median of that difference over all rounds;
  - stop + export: the process CPU time (all threads) from stop() to a
    written Chrome trace file (torch: stop() + export_chrome_trace();
    aiprof: stop() — raw data to disk — then export_chrome_trace(), which
    runs the C analyser for trace_view.json and copies it), per event in
    the trace; the same in wall time is printed beside it;

and prints aiprof/torch ratios against the targets: overhead no more than
torch's in every mode (`ratio`), and with with_stack or all options
aiprof's own cost above PyTorch's RecordFunction floor at most half of
torch's own cost above it (`net`); stop+export at least 20x faster per
event.  The floor (aiprof's callbacks installed, nothing recording) is
measured like a profiler: against a baseline run of its own just before
it.  Each round runs torch, aiprof and the floor, each after its own
baseline, in an order that rotates from round to round, so that machine
noise and what a profiler leaves behind after it stops hit all alike.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples", "python"))

import torch  # noqa: E402

import aiprof  # noqa: E402
import train_cnn  # noqa: E402
import train_mlp  # noqa: E402

MODES = {
    "default": {},
    "record_shapes": dict(record_shapes=True),
    "with_stack": dict(with_stack=True),
    "profile_memory": dict(profile_memory=True),
    "all": dict(record_shapes=True, with_stack=True, profile_memory=True, with_modules=True),
}


def mlp_loop():
    model, opt, x, y = train_mlp.build(batch=8, features=32, hidden=32, classes=4)
    return lambda: train_mlp.train_step(model, opt, x, y)


def cnn_loop():
    model, opt, x, y = train_cnn.build(batch=2)
    return lambda: train_cnn.train_step(model, opt, x, y)


LOOPS = {"mlp": mlp_loop, "cnn": cnn_loop}


# Step times are process CPU time: every thread of the process counts
# (aiprof's raw writer included), and time the machine gives to other
# processes does not — the figures stay comparable on a busy machine.
clock_ns = time.process_time_ns


def step_times(step, n):
    out = []
    for _ in range(n):
        t0 = clock_ns()
        step()
        out.append(clock_ns() - t0)
    return out


# A run's step time is its fastest step: noise from a busy machine only
# adds time, so the minimum over a run is the most repeatable figure.
def run_baseline(step, n):
    return min(step_times(step, n))


def run_floor(step, n):
    """aiprof's PyTorch callbacks installed but nothing recording: the cost
    of RecordFunction itself, which torch.profiler pays as well."""
    from aiprof.profiler import _torch_bridge
    lib = _torch_bridge.adapter()
    lib.aiprof_torch_enable(1)
    try:
        return min(step_times(step, n))
    finally:
        lib.aiprof_torch_enable(0)


def count_events(path):
    """Slices and instants in a Chrome trace (object form, or the bare array
    torch writes when it runs without Kineto, as Debian's build does)."""
    with open(path) as f:
        trace = json.load(f)
    if isinstance(trace, dict):
        trace = trace["traceEvents"]
    return sum(1 for e in trace if e.get("ph") in ("X", "i"))


def run_torch(step, n, options, out_dir):
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], **options)
    prof.start()
    times = step_times(step, n)
    path = os.path.join(out_dir, "torch.json")
    t0, w0 = clock_ns(), time.perf_counter_ns()
    prof.stop()
    prof.export_chrome_trace(path)
    export_ns, wall_ns = clock_ns() - t0, time.perf_counter_ns() - w0
    events = count_events(path)
    ops = sum(1 for e in prof.events() if e.name.startswith("aten::"))
    return min(times[2:]), export_ns, events, ops, wall_ns


def run_aiprof(step, n, options, out_dir):
    prof = aiprof.profiler.profile(
        activities=[aiprof.profiler.ProfilerActivity.CPU],
        on_trace_ready=aiprof.profiler.tensorboard_trace_handler(out_dir, analyse_flag=False),
        **options)
    prof.start()
    times = step_times(step, n)
    path = os.path.join(out_dir, "aiprof.json")
    t0, w0 = clock_ns(), time.perf_counter_ns()
    prof.stop()
    prof.export_chrome_trace(path)
    export_ns, wall_ns = clock_ns() - t0, time.perf_counter_ns() - w0
    events = count_events(path)
    return min(times[2:]), export_ns, events, None, wall_ns


# The order of the runs in each round: every kind of run follows each of
# the others in turn.
ORDERS = (("torch", "aiprof", "floor"), ("aiprof", "floor", "torch"),
          ("floor", "torch", "aiprof"), ("torch", "floor", "aiprof"),
          ("aiprof", "torch", "floor"), ("floor", "aiprof", "torch"))


def measure(loop_name, mode, steps, rounds):
    step = LOOPS[loop_name]()
    step_times(step, 5)  # warm caches and allocators
    options = MODES[mode]
    base = {"torch": [], "aiprof": [], "floor": []}
    floors, torch_res, aip_res = [], [], []
    # The floor runs with the callbacks as aiprof's trace of this mode set
    # them up (with inputs when it records shapes): one short trace first.
    with tempfile.TemporaryDirectory(prefix="aiprof_bench_") as d:
        run_aiprof(step, 3, options, d)
    for r in range(rounds):
        with tempfile.TemporaryDirectory(prefix="aiprof_bench_") as d:
            # Each kind of run follows a baseline run of its own, and the
            # order rotates: a profiler can leave the process slower after
            # it stops (torch's with_stack does, by ~5% of a CNN step),
            # which must count against none of the runs.
            for who in ORDERS[r % len(ORDERS)]:
                base[who].append(run_baseline(step, steps))
                if who == "torch":
                    torch_res.append(run_torch(step, steps, options, d))
                elif who == "aiprof":
                    aip_res.append(run_aiprof(step, steps, options, d))
                else:
                    floors.append(run_floor(step, steps))
    # Within a run, the fastest step: load from other processes comes in
    # bursts and only ever adds time.  Each run against the baseline run
    # just before it, and the median of those differences over the rounds:
    # the machine's speed drifts between rounds (a baseline run 5% faster
    # than the others, taken as every run's reference, moved a ratio by
    # 0.1), and a pair of runs close in time shares its drift.
    med = statistics.median

    def overhead(runs, who):
        return med(run - b for run, b in zip(runs, base[who])) / 1e3

    return dict(loop=loop_name, mode=mode, base_us=min(min(b) for b in base.values()) / 1e3,
                torch_us=overhead([r[0] for r in torch_res], "torch"),
                aiprof_us=overhead([r[0] for r in aip_res], "aiprof"),
                floor_us=overhead(floors, "floor"),
                ops=med(r[3] for r in torch_res) / steps,
                torch_exp=min(r[1] / max(r[2], 1) for r in torch_res),
                aiprof_exp=min(r[1] / max(r[2], 1) for r in aip_res),
                torch_wall=min(r[4] / max(r[2], 1) for r in torch_res),
                aiprof_wall=min(r[4] / max(r[2], 1) for r in aip_res),
                events=med(r[2] for r in aip_res))


def main():
    parser = argparse.ArgumentParser(description="aiprof vs torch.profiler overhead")
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--modes", default=",".join(MODES),
                        help="comma-separated modes to run (default: all)")
    parser.add_argument("--loops", default=",".join(LOOPS),
                        help="comma-separated loops to run (default: all)")
    args = parser.parse_args()
    steps = args.steps or (20 if args.quick else 30)
    rounds = args.rounds or (2 if args.quick else 7)
    torch.set_num_threads(1)
    import warnings
    warnings.simplefilter("ignore")

    kineto = "with Kineto" if torch.autograd.kineto_available() else "without Kineto (legacy)"
    print(f"torch {torch.__version__} {kineto}, aiprof {aiprof.__version__}, {steps} steps x "
          f"{rounds} rounds per mode")
    hdr = (f"{'loop':4} {'mode':15} {'base':>8} {'ops':>5} {'RF floor':>9} | {'torch ovh':>10} "
           f"{'aiprof ovh':>10} {'ratio':>6} {'target':>6} {'net':>5} {'bound':>5} | {'torch exp':>10} "
           f"{'aiprof exp':>10} {'speedup':>8} {'target':>6} {'wall':>6}")
    print(hdr)
    print(f"{'':4} {'':15} {'us/step':>8} {'/step':>5} {'us/step':>9} | {'us/step':>10} "
          f"{'us/step':>10} {'':>6} {'':>6} {'':>5} {'':>5} | {'us/event':>10} {'us/event':>10} {'':>8}")
    print("-" * len(hdr))
    failures = []
    for loop in args.loops.split(","):
        for mode in args.modes.split(","):
            r = measure(loop, mode, steps, rounds)
            ratio = r["aiprof_us"] / r["torch_us"] if r["torch_us"] > 0 else float("inf")
            # The same ratio without the RecordFunction cost both pay: what
            # each profiler adds on top of PyTorch's own instrumentation.
            own_torch = r["torch_us"] - r["floor_us"]
            net = (r["aiprof_us"] - r["floor_us"]) / own_torch if own_torch > 0 else float("inf")
            # The best ratio any profiler built on these callbacks could
            # reach: its own cost zero, only the RecordFunction floor left.
            bound = r["floor_us"] / r["torch_us"] if r["torch_us"] > 0 else float("inf")
            # Every mode: no dearer than torch.  With stacks: aiprof's own
            # cost at most half of torch's own cost (issue 13 restated the
            # "half of torch's overhead" target on what aiprof controls).
            net_target = 0.5 if mode in ("with_stack", "all") else None
            speed = r["torch_exp"] / r["aiprof_exp"] if r["aiprof_exp"] > 0 else float("inf")
            wall = r["torch_wall"] / r["aiprof_wall"] if r["aiprof_wall"] > 0 else float("inf")
            ok_ratio = ratio <= 1.0
            ok_net = net_target is None or net <= net_target
            ok_ovh = ok_ratio and ok_net
            ok_exp = speed >= 20
            if not ok_ratio:
                failures.append(f"{loop}/{mode}: overhead ratio {ratio:.2f} > 1.0")
            if not ok_net:
                failures.append(f"{loop}/{mode}: net {net:.2f} > {net_target}")
            if not ok_exp:
                failures.append(f"{loop}/{mode}: stop+export speedup {speed:.1f} < 20")
            print(f"{loop:4} {mode:15} {r['base_us']:8.1f} {r['ops']:5.0f} "
                  f"{r['floor_us']:9.1f} | "
                  f"{r['torch_us']:10.1f} {r['aiprof_us']:10.1f} {ratio:6.2f} "
                  f"{'net' if net_target else 'ratio':>6} {net:5.2f} {bound:5.2f} | "
                  f"{r['torch_exp'] / 1e3:10.2f} "
                  f"{r['aiprof_exp'] / 1e3:10.3f} {speed:7.1f}x {'>=20x':>6} {wall:5.1f}x"
                  f"{'' if ok_ovh and ok_exp else '  MISS'}")
            sys.stdout.flush()
    print()
    print("overhead = fastest step while recording - fastest step without a profiler just "
          "before it (process CPU time, all threads), median over the rounds (order rotates);")
    print("RF floor = PyTorch's RecordFunction cost with a callback installed, paid by both "
          "profilers;")
    print("stop+export = process CPU time (all threads: the C analyser's second core counts "
          "against aiprof), judged; wall = the same speedup in wall time, printed only "
          "(a loaded machine stretches every hand-over between threads)")
    print("ratio = aiprof overhead / torch overhead (target <= 1.0 in every mode); net = the "
          "same, each minus the RF floor (target <= 0.5 with with_stack and all)")
    print("target = the column judged beside ratio: net for with_stack and all, ratio alone "
          "elsewhere")
    print("bound = RF floor / torch overhead: the ratio a profiler on RecordFunction callbacks "
          "would reach if its own cost were zero")
    print("exp = stop + export_chrome_trace time per trace event (fastest round)")
    if failures:
        print("targets missed: " + "; ".join(failures))
    else:
        print("all targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
