#!/usr/bin/env python3
"""The measuring half of scripts/gpu_check.sh (docs/CUDA.md): a small torch
training loop (an MLP on cuda) run three times in fresh processes — without
a profiler, under aiprof (`import aiprof as torch_npu`, CPU + CUDA
activity) and under torch.profiler (Kineto + CUPTI, CPU + CUDA) — and the
CUDA C example's aiprof profile, compared and printed:

  - kernel count per name, aiprof vs Kineto (target: equal), and for the C
    example against what the program says it launched;
  - summed kernel time per name, aiprof vs Kineto (target: within 1%, or
    within the noise of two Kineto runs: compare_kernels);
  - per-op collection overhead over the unprofiled loop, aiprof vs Kineto
    (target: aiprof <= 0.5x Kineto's);
  - stop + export time per event (target: aiprof >= 20x faster);
  - whether aiprof's trace_view.json passes tests/e2e/check_nesting.py.

The two profiles come from two runs of the same loop (one process cannot
hold two CUPTI clients), so per-name times compare two runs; the counts
must be equal.  Exit status: 0 when every target holds, 1 otherwise, 2
when the runs themselves failed.  `--device cpu` runs the same plumbing
without a GPU (no kernels: nothing to compare), for checking this script.
"""
import argparse
import csv
import glob
import json
import os
import subprocess
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
WARMUP, STEPS = 10, 50
if "--device" in sys.argv and sys.argv[sys.argv.index("--device") + 1:][:1] == ["cpu"]:
    WARMUP, STEPS = 2, 5  # the rehearsal: the plumbing, quickly


# ---- the workload (run in a child: --mode base|aiprof|kineto) ------------

def workload(mode, device, out):
    import torch
    if mode == "aiprof":
        import aiprof as torch_npu  # noqa: F401  (the drop-in, before the loop)
    torch.manual_seed(0)
    if device == "cpu":
        torch.set_num_threads(1)  # the rehearsal, on a shared machine: no thread storm
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batch = 256 if device == "cuda" else 32  # the CPU rehearsal: the plumbing, quickly
    x = torch.randn(batch, 512, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    loss_fn = torch.nn.CrossEntropyLoss()

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        sync()

    for _ in range(WARMUP):
        step()
    result = {"mode": mode}
    if mode == "base":
        t0 = time.perf_counter()
        for _ in range(STEPS):
            step()
        result["loop_s"] = time.perf_counter() - t0
    elif mode == "aiprof":
        P = torch_npu.profiler
        acts = [P.ProfilerActivity.CPU] + ([P.ProfilerActivity.CUDA] if device == "cuda" else [])
        prof = P.profile(activities=acts, on_trace_ready=P.tensorboard_trace_handler(out))
        prof.start()
        t0 = time.perf_counter()
        for _ in range(STEPS):
            step()
        t1 = time.perf_counter()
        prof.stop()  # ends the trace, writes and analyses the result directory
        t2 = time.perf_counter()
        result.update(loop_s=t1 - t0, stop_export_s=t2 - t1)
    else:
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
        prof = profile(activities=acts)
        prof.start()
        t0 = time.perf_counter()
        for _ in range(STEPS):
            step()
        t1 = time.perf_counter()
        prof.stop()
        path = os.path.join(out, os.environ.get("GPU_CHECK_TRACE", "kineto_trace.json"))
        prof.export_chrome_trace(path)
        t2 = time.perf_counter()
        result.update(loop_s=t1 - t0, stop_export_s=t2 - t1, trace=path)
    print("RESULT " + json.dumps(result))


def run_mode(mode, args, trace="kineto_trace.json"):
    env = dict(os.environ, GPU_CHECK_TRACE=trace)
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--mode", mode,
                               "--device", args.device, "--out", args.out],
                              capture_output=True, text=True, env=env, timeout=150)
    except subprocess.TimeoutExpired as e:
        sys.stderr.write(f"gpu_check: the {mode} run took over 150 s; its output:\n"
                         f"{(e.stdout or b'')[-3000:]!r}\n{(e.stderr or b'')[-3000:]!r}\n")
        sys.exit(2)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    sys.stderr.write(f"gpu_check: the {mode} run failed (exit {proc.returncode}):\n"
                     f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}\n")
    sys.exit(2)


# ---- reading the profiles --------------------------------------------------

def aiprof_dir(base):
    dirs = sorted(glob.glob(os.path.join(base, "*_ascend_pt")))
    if not dirs:
        sys.exit(f"gpu_check: no aiprof result directory under {base}")
    return dirs[-1]


def aiprof_kernels(result_dir):
    """{name: [count, summed µs]} from kernel_details.csv (kernels only)."""
    out = defaultdict(lambda: [0, 0.0])
    path = os.path.join(result_dir, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
    if not os.path.exists(path):
        return out
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            name = row["Name"]
            if name.startswith("Memcpy") or name.startswith("Memset"):
                continue
            out[name][0] += 1
            out[name][1] += float(row["Duration(us)"])
    return out


def aiprof_events(result_dir):
    with open(os.path.join(result_dir, "profiler_info.json")) as f:
        info = json.load(f)
    return int(info.get("aiprof", {}).get("recorded_events", 0))


def kineto(path):
    """({kernel name: [count, summed µs]}, events, cpu ops) of Kineto's trace."""
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    kernels = defaultdict(lambda: [0, 0.0])
    ops = 0
    for e in events:
        cat = e.get("cat", "")
        if cat == "kernel":
            kernels[e["name"]][0] += 1
            kernels[e["name"]][1] += float(e.get("dur", 0))
        elif cat == "cpu_op" or (not cat and e.get("ph") == "X"):
            ops += 1  # torch 1.13's CPU-only export has no categories
    return kernels, len(events), ops


# ---- the report --------------------------------------------------------------

def short(name, n=60):
    return name if len(name) <= n else name[:n - 3] + "..."


def rel(a, b):
    return (a - b) / b if b else (0.0 if not a else float("inf"))


def compare_kernels(ours, theirs, again):
    """Counts must be equal.  Summed times come from different processes
    (one process holds one CUPTI client at a time), whose kernels differ by
    the GPU's own run-to-run noise: a name's aiprof-vs-Kineto difference
    passes when within 1% or within twice Kineto's own difference between
    its two runs plus 0.5% (the noise measured, not assumed)."""
    ok_count = ok_time = True
    names = sorted(set(ours) | set(theirs), key=lambda k: -max(ours[k][1], theirs[k][1]))
    print(f"{'kernel':62} {'aiprof':>7} {'Kineto':>7} {'aiprof us':>11} {'Kineto us':>11} "
          f"{'diff':>7} {'noise':>7}")
    for k in names:
        a, b, b2 = ours[k], theirs[k], again[k]
        diff, noise = rel(a[1], b[1]), abs(rel(b2[1], b[1]))
        flag = ""
        if a[0] != b[0]:
            ok_count, flag = False, "  COUNT"
        if abs(diff) > max(0.01, 2 * noise + 0.005):
            ok_time, flag = False, flag + "  TIME"
        print(f"{short(k):62} {a[0]:7d} {b[0]:7d} {a[1]:11.1f} {b[1]:11.1f} {diff * 100:6.2f}% "
              f"{noise * 100:6.2f}%{flag}")
    return ok_count, ok_time


def check_c_example(result_dir, expect):
    """The C program's kernels against what it says it launched
    (expect: "name=count,..."; names without their argument list)."""
    ks = aiprof_kernels(result_dir)
    got = {k.split("(")[0]: v[0] for k, v in ks.items()}
    want = {k: int(v) for k, v in (kv.split("=") for kv in expect.split(","))}
    ok = all(got.get(k) == v for k, v in want.items())
    print(f"CUDA C example: kernels {dict(sorted(got.items()))}, launched {want}: "
          f"{'OK' if ok else 'MISMATCH'}")
    return ok


def nesting_ok(result_dir):
    proc = subprocess.run([sys.executable, os.path.join(SRC, "tests", "e2e", "check_nesting.py"),
                           result_dir], capture_output=True, text=True)
    print("nesting: " + (proc.stdout.strip() or proc.stderr.strip()))
    return proc.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=["base", "aiprof", "kineto"])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--c-result", help="the CUDA C example's aiprof result base directory")
    ap.add_argument("--c-expect", default="scale=20,add=20,transpose=20",
                    help="what the C program launched: name=count,...")
    ap.add_argument("--c-only", action="store_true", help="check the C program's result only")
    args = ap.parse_args()
    if args.mode:
        workload(args.mode, args.device, args.out)
        return 0
    os.makedirs(args.out, exist_ok=True)
    ok = True
    if args.c_result:
        ok &= check_c_example(aiprof_dir(args.c_result), args.c_expect)
        if args.c_only:
            return 0 if ok else 1
    base, ours, theirs = (run_mode(m, args) for m in ("base", "aiprof", "kineto"))
    again = run_mode("kineto", args, "kineto_trace_2.json")  # Kineto's own run-to-run noise
    rdir = aiprof_dir(args.out)
    kk, k_events, k_ops = kineto(theirs["trace"])
    print(f"\ntorch MLP on {args.device}, {STEPS} steps after {WARMUP} of warm-up, "
          f"{k_ops} ops (Kineto's cpu_op events)")
    ok_count, ok_time = compare_kernels(aiprof_kernels(rdir), kk, kineto(again["trace"])[0])
    ops = max(k_ops, 1)
    over_a = (ours["loop_s"] - base["loop_s"]) / ops * 1e9
    over_k = (theirs["loop_s"] - base["loop_s"]) / ops * 1e9
    print(f"loop: {base['loop_s']:.3f} s without a profiler, {ours['loop_s']:.3f} s under "
          f"aiprof, {theirs['loop_s']:.3f} s under Kineto")
    ratio = over_a / over_k if over_k > 0 else float("inf")
    ok_over = over_k > 0 and ratio <= 0.5
    print(f"per-op overhead: aiprof {over_a:.0f} ns, Kineto {over_k:.0f} ns "
          f"(aiprof/Kineto {ratio:.2f}, target <= 0.5): {'OK' if ok_over else 'MISSED'}")
    a_events = aiprof_events(rdir) + sum(v[0] for v in aiprof_kernels(rdir).values())
    per_a = ours["stop_export_s"] / max(a_events, 1) * 1e9
    per_k = theirs["stop_export_s"] / max(k_events, 1) * 1e9
    speed = per_k / per_a if per_a > 0 else float("inf")
    ok_stop = speed >= 20
    print(f"stop+export: aiprof {ours['stop_export_s']:.3f} s for {a_events} events "
          f"({per_a:.0f} ns/event), Kineto {theirs['stop_export_s']:.3f} s for {k_events} "
          f"events ({per_k:.0f} ns/event): {speed:.1f}x (target >= 20x): "
          f"{'OK' if ok_stop else 'MISSED'}")
    ok_nest = nesting_ok(rdir)
    print(f"\nkernel counts equal: {ok_count}; kernel time within 1% or the noise: {ok_time}; "
          f"overhead: {ok_over}; stop+export: {ok_stop}; nesting: {ok_nest}")
    if args.device == "cpu":  # the rehearsal: the plumbing, not the targets
        print("--device cpu: the runs and the reading of their results went through; the "
              "targets are judged on a GPU only")
        return 0 if ok and ok_nest else 1
    ok &= ok_count and ok_time and ok_over and ok_stop and ok_nest
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
