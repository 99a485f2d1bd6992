"""Profile a small MLP training loop with aiprof, torch_npu-style.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_mlp.py --dir ./result

Runs 6 deterministic CPU training steps under
schedule(wait=1, warmup=1, active=2, repeat=1): steps 2 and 3 are recorded,
the trace is written to DIR/{host}_{pid}_{time}_ascend_pt and analysed
(ASCEND_PROFILER_OUTPUT/trace_view.json, operator_details.csv,
step_trace_time.csv), and the ten ops with the most self CPU time are
printed.  Only the import differs from a torch_npu script.
"""
import argparse

import torch

import aiprof as torch_npu


def build(seed=0, batch=64, features=128, hidden=256, classes=10):
    """Model, optimizer and one fixed batch — the same every run."""
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(features, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, features)
    y = torch.randint(0, classes, (batch,))
    return model, optimizer, x, y


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="./result", help="result directory (default ./result)")
    parser.add_argument("--steps", type=int, default=6, help="training steps (default 6)")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)  # deterministic op sequence and timing
    model, optimizer, x, y = build()
    with torch_npu.profiler.profile(
            activities=[torch_npu.profiler.ProfilerActivity.CPU],
            schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(args.dir),
            record_shapes=True) as prof:
        for step in range(args.steps):
            with torch_npu.profiler.record_function("train_step"):
                loss = train_step(model, optimizer, x, y)
            prof.step()
    print(f"final loss {loss:.4f}")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))


if __name__ == "__main__":
    main()
