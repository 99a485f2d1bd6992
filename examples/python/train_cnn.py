"""Profile a small CNN training loop with aiprof (with_stack, with_modules,
profile_memory and an mstx range per step).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_cnn.py --dir ./result

Same schedule as train_mlp.py; prints the ops grouped by input shape and
writes FlameGraph stacks to DIR/cnn.stacks.
"""
import argparse
import os

import torch

import aiprof as torch_npu


class SmallCNN(torch.nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.head = torch.nn.Linear(16 * 4 * 4, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def build(seed=0, batch=16):
    torch.manual_seed(seed)
    model = SmallCNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(batch, 3, 16, 16)
    y = torch.randint(0, 10, (batch,))
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

    torch.set_num_threads(1)
    model, optimizer, x, y = build()
    config = torch_npu.profiler._ExperimentalConfig(mstx=True, gc_detect_threshold=1.0)
    with torch_npu.profiler.profile(
            activities=[torch_npu.profiler.ProfilerActivity.CPU],
            schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(args.dir),
            record_shapes=True, profile_memory=True, with_stack=True, with_modules=True,
            experimental_config=config) as prof:
        for step in range(args.steps):
            range_id = torch_npu.npu.mstx.range_start(f"step {step}")
            loss = train_step(model, optimizer, x, y)
            torch_npu.npu.mstx.range_end(range_id)
            prof.step()
    print(f"final loss {loss:.4f}")
    print(prof.key_averages(group_by_input_shape=True).table(
        sort_by="self_cpu_time_total", row_limit=10))
    prof.export_stacks(os.path.join(args.dir, "cnn.stacks"), "self_cpu_time_total")


if __name__ == "__main__":
    main()
