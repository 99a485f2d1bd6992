"""What starting and stopping a profile costs, aiprof vs torch.profiler in one
process.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_start.py [--rounds R]
        [--steps 20] [--modes default,profile_memory] [--loop mlp|cnn]

bench/python_overhead.py measures the steady state (the fastest step while
recording); this one measures what it leaves out, which an independent
benchmark of short profiles (profile() and start() inside the timed
region, 20 to 100 steps of a small MLP) sees as well:

  - make: profile(...) (aiprof: with its tensorboard_trace_handler(...),
    analysis off);
  - start: start() alone;
  - make+start: both, as that benchmark times them;
  - stop: stop() alone, after N steps, without an export (aiprof: the raw
    data is on disk; torch: its events are collected in memory);
  - run: what profile(...) + start() + N steps cost above the same N steps
    without a profiler, in process CPU time (all threads): the fastest such
    region over the rounds minus the fastest baseline region (torch's
    stop() is left out: without Kineto it alone takes more than the whole
    region).

Every other figure is wall time (perf_counter: start's cost was file-system
calls, and a short profile is judged by the clock); all are the minimum over the
rounds: load from other processes only adds time.  torch and aiprof
alternate, torch first in even rounds, so that noise and what a profiler
leaves behind hit both alike; N steps run before each profile, so that
start() meets the process as a training loop leaves it.  The ratio columns
are aiprof / torch measured in this run (the target for start is <= 1.0);
nothing here asserts a time.
"""
import argparse
import gc
import os
import sys
import tempfile
import time
import warnings

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

clock = time.perf_counter_ns
# The run column is process CPU time (every thread, aiprof's writer
# included; other processes not): over 20-100 steps, wall time on a busy
# machine varies by more than the overhead.
cpu = time.process_time_ns
COLLECT = False  # --gc


def mlp_loop():
    model, opt, x, y = train_mlp.build(batch=8, features=32, hidden=32, classes=4)
    return lambda: train_mlp.train_step(model, opt, x, y)


def cnn_loop():
    model, opt, x, y = train_cnn.build(batch=2)
    return lambda: train_cnn.train_step(model, opt, x, y)


LOOPS = {"mlp": mlp_loop, "cnn": cnn_loop}


def make_torch(options, out_dir):
    return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], **options)


def make_aiprof(options, out_dir):
    P = aiprof.profiler
    return P.profile(activities=[P.ProfilerActivity.CPU],
                     on_trace_ready=P.tensorboard_trace_handler(out_dir, analyse_flag=False),
                     **options)


MAKERS = {"torch": make_torch, "aiprof": make_aiprof}


def one_run(who, options, out_dir, step, n):
    """(make, start, make+start, stop, make+start+steps, baseline steps) ns
    of one profile of `n` steps after `n` steps without."""
    tb = cpu()
    for _ in range(n):
        step()
    base = cpu() - tb
    if COLLECT:
        gc.collect()
    c0 = cpu()
    t0 = clock()
    prof = MAKERS[who](options, out_dir)
    t1 = clock()
    prof.start()
    t2 = clock()
    for _ in range(n):
        step()
    t3 = clock()
    c3 = cpu()
    prof.stop()
    t4 = clock()
    return t1 - t0, t2 - t1, t2 - t0, t4 - t3, c3 - c0, base


def measure(step, mode, n, rounds):
    options = MODES[mode]
    best = {w: [float("inf")] * 6 for w in MAKERS}
    for r in range(rounds):
        order = ("torch", "aiprof") if r % 2 == 0 else ("aiprof", "torch")
        with tempfile.TemporaryDirectory(prefix="aiprof_bench_start_") as d:
            for who in order:
                res = one_run(who, options, d, step, n)
                best[who] = [min(b, x) for b, x in zip(best[who], res)]
    base = min(best["torch"][5], best["aiprof"][5])
    for w in MAKERS:
        best[w][4] -= base
    return best


def main():
    parser = argparse.ArgumentParser(description="short-profile cost, aiprof vs torch.profiler")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=20, help="steps before and in each profile")
    parser.add_argument("--modes", default="default,profile_memory",
                        help="comma-separated modes (%s)" % ",".join(MODES))
    parser.add_argument("--loop", default="mlp", choices=sorted(LOOPS))
    parser.add_argument("--gc", action="store_true",
                        help="gc.collect() before each profile: without it, a start() that "
                        "allocates may pay for the garbage the other profiler's stop() left")
    args = parser.parse_args()
    global COLLECT
    COLLECT = args.gc
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    step = LOOPS[args.loop]()
    for _ in range(5):
        step()
    print(f"torch {torch.__version__}, aiprof {aiprof.__version__}, loop {args.loop}, "
          f"{args.rounds} rounds; wall ms, minimum over rounds; ratio = aiprof / torch")
    cols = ("make", "start", "make+start", "stop", f"run {args.steps}")
    hdr = f"{'mode':15} | " + " | ".join(f"{c:^22}" for c in cols)
    print(hdr)
    print(f"{'':15} | " + " | ".join(f"{'torch':>7} {'aiprof':>7} {'ratio':>6}" for _ in cols))
    print("-" * len(hdr))
    for mode in args.modes.split(","):
        best = measure(step, mode, args.steps, args.rounds)
        t, a = best["torch"], best["aiprof"]
        cells = []
        for k in range(len(cols)):
            ratio = a[k] / t[k] if t[k] > 0 else float("inf")
            cells.append(f"{t[k] / 1e6:7.3f} {a[k] / 1e6:7.3f} {ratio:6.2f}")
        print(f"{mode:15} | " + " | ".join(cells))
        sys.stdout.flush()
    print()
    print("ms, wall, minimum over rounds; make = profile(...); stop = stop() without an export "
          f"after {args.steps} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
