"""Profile a PyTorch training loop with MindSpore 2.2's Profiler API.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/mindspore_profiler.py --dir ./data

The seed's callback pattern (mindspore.Profiler's start()/stop() example):
a Profiler made with start_profile=False is started at step START and
stopped at step STOP, then analyse() writes MindSpore's CPU layout into
DIR/profiler/ (docs/MINDSPORE.md) and op_analyse() prints the per-shape
figures of two op types.  Only the import differs from a MindSpore script.
"""
import argparse
import json

import aiprof as mindspore
from aiprof.profiler import record_function
from train_mlp import build, train_step


class StopAtStep:
    """The seed's Callback: start and stop the profiler at given steps."""

    def __init__(self, start_step, stop_step, output_path):
        self.start_step, self.stop_step = start_step, stop_step
        self.profiler = mindspore.Profiler(start_profile=False, output_path=output_path)

    def step_begin(self, step):
        if step == self.start_step:
            self.profiler.start()

    def step_end(self, step):
        if step == self.stop_step:
            self.profiler.stop()

    def end(self):
        self.profiler.analyse()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="./data", help="output_path (default ./data)")
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args(argv)
    model, optimizer, x, y = build()
    callback = StopAtStep(start_step=2, stop_step=4, output_path=args.dir)
    for step in range(1, args.steps + 1):
        callback.step_begin(step)
        with record_function(f"ProfilerStep#{step}"):
            train_step(model, optimizer, x, y)
        callback.step_end(step)
    callback.end()
    result = json.loads(callback.profiler.op_analyse(op_name=["aten::addmm", "aten::relu"]))
    for name in ("aten::addmm", "aten::relu"):
        for entry in result[name]:
            print(f"{name:12} {entry['input_shape']:50} x{entry['op_occurrences']:<3} "
                  f"{entry['op_avg_time(us)']:10.1f} us avg")
    return result


if __name__ == "__main__":
    main()
