"""`aiprof advise` on Python programs with one planted problem each
(docs/ADVISE.md): a GC storm, a slow DataLoader, an activation kept from
step to step.  advise must rank that problem first, with its evidence."""
import gc
import json
import os
import subprocess
import time

import pytest

import aiprof
from aiprof import profiler as P
from conftest import needs_torch, result_dirs

# build/python/aiprof/__init__.py -> build/bin/aiprof
AIPROF = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(aiprof.__file__)))), "bin", "aiprof")


def advise(result_dir):
    if not os.access(AIPROF, os.X_OK):
        pytest.skip(f"no aiprof command at {AIPROF}")
    out = subprocess.run([AIPROF, "advise", "-q", "--json", result_dir], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def _profile(**kwargs):
    return P.profile(schedule=P.schedule(wait=0, warmup=1, active=5, repeat=1),
                     on_trace_ready=P.tensorboard_trace_handler("./r"), **kwargs)


class _Node:
    def __init__(self):
        self.other = self   # a cycle: only the collector frees it


def test_gc_storm_ranked_first():
    cfg = P._ExperimentalConfig(gc_detect_threshold=0)
    keep = [_Node() for _ in range(200000)]  # live objects every full pass walks
    with _profile(experimental_config=cfg) as prof:
        for _ in range(6):
            garbage = [_Node() for _ in range(50000)]
            del garbage
            gc.collect()
            sum(range(10000))
            prof.step()
    del keep
    d = advise(result_dirs("./r")[0])
    first = d["findings"][0]
    assert first["rule"] == "gc", [f["rule"] for f in d["findings"]]
    assert first["severity"] in ("medium", "high"), first
    assert "GC passes" in first["evidence"] and "worst pause" in first["evidence"], first
    assert first["where"], first


@needs_torch
def test_slow_dataloader_ranked_first():
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Slow(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            time.sleep(0.004)   # decoding that should run in workers
            return torch.ones(8)

    model = torch.nn.Linear(8, 8)
    loader = iter(DataLoader(Slow(), batch_size=2, num_workers=0))
    with _profile() as prof:
        for _ in range(6):
            x = next(loader)
            model(x).sum().backward()
            prof.step()
    d = advise(result_dirs("./r")[0])
    first = d["findings"][0]
    assert first["rule"] == "dataloader", [f["rule"] for f in d["findings"]]
    assert "DataLoader" in first["evidence"], first
    assert first["severity"] in ("medium", "high"), first


@needs_torch
def test_kept_activation_ranked_first():
    import torch
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1))
    kept = []
    with _profile(profile_memory=True) as prof:
        for _ in range(6):
            out = model(torch.randn(256, 256))
            kept.append(out)   # the graph and its activations outlive the step
            prof.step()
    d = advise(result_dirs("./r")[0])
    first = d["findings"][0]
    assert first["rule"] == "memory_growth", [(f["rule"], f["severity"]) for f in d["findings"]]
    assert "rose in" in first["evidence"] and "allocated by" in first["evidence"], first
