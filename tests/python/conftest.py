"""Shared fixtures for the aiprof Python tests.

Run:  PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python -q

Every test runs in its own temporary working directory (seed examples write
"./result"), with ASCEND_WORK_PATH unset.
"""
import glob
import json
import os
import subprocess
import sys
from decimal import Decimal

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(ROOT, "examples", "python")
sys.path.insert(0, EXAMPLES)

import aiprof  # noqa: E402  (fails early with a clear message if not built)

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASCEND_WORK_PATH", raising=False)
    yield tmp_path


def result_dirs(base="."):
    return sorted(glob.glob(os.path.join(base, "*_ascend_pt")))


def trace_of(result_dir):
    """trace_view.json as parsed, in whichever form it was written."""
    with open(os.path.join(result_dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json")) as f:
        return json.load(f)


def ts_ns(ts):
    """A `ts` in integer ns, exactly: torch_npu's string "<µs>.<3 digits>"
    or a number."""
    return int(Decimal(str(ts)) * 1000)


def trace_events(trace):
    """The events of a parsed trace in either form (docs/RESULT_LAYOUT.md)
    with numeric `ts` in µs: Kineto's (relative to baseTimeNanoseconds) as
    they are; torch_npu's absolute strings made relative to the whole second
    below the earliest, which is the base aiprof's Kineto form has."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    stamps = [ts_ns(e["ts"]) for e in events if isinstance(e.get("ts"), str)]
    if not stamps:
        return events
    base = min(stamps) // 1_000_000_000 * 1_000_000_000
    out = []
    for e in events:
        if isinstance(e.get("ts"), str):
            e = dict(e, ts=(ts_ns(e["ts"]) - base) / 1000.0)
        out.append(e)
    return out


def events_of(result_dir):
    return trace_events(trace_of(result_dir))


def slices(trace, cat=None, name=None):
    return [e for e in trace_events(trace) if e.get("ph") == "X"
            and (cat is None or e.get("cat") == cat)
            and (name is None or e.get("name") == name)]


def run_python(code, timeout=60, env=None, check=True):
    """Run `code` in a fresh /usr/bin/python3 with the same aiprof."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.path.dirname(os.path.dirname(aiprof.__file__)), EXAMPLES,
                    full_env.get("PYTHONPATH")] if p)
    if env:
        full_env.update(env)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=full_env)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:\n{proc.stdout}\n"
                             f"stderr:\n{proc.stderr}")
    return proc


class TinyNet:
    """A deterministic two-layer training step for seed examples."""

    def __init__(self, seed=0):
        import torch
        torch.manual_seed(seed)
        self.model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                         torch.nn.Linear(16, 2))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x = torch.randn(4, 8)
        self.y = torch.randn(4, 2)

    def __call__(self):
        import torch
        self.opt.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()
        return loss


@pytest.fixture
def train_one_step():
    if not HAVE_TORCH:
        pytest.skip("torch is not installed")
    return TinyNet()
