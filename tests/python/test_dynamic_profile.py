"""dynamic_profile (the seed's dp.init / dp.step / dp.start examples),
each in a fresh process: libaiprof's config watcher is per process.
AIPROF_DP_POLL_MS shortens the library's 2 s poll for the test."""
import glob
import json
import os
import textwrap

from conftest import needs_torch, run_python, slices, trace_of

pytestmark = needs_torch

ENV = {"AIPROF_DP_POLL_MS": "50"}


def test_dp_init_step_with_config_edit():
    code = textwrap.dedent("""
        import json, time, torch
        from aiprof.profiler import dynamic_profile as dp
        x = torch.randn(8, 8)
        def train_one_step():
            return x @ x
        dp.init("profiler_config_path")
        cfg = json.load(open("profiler_config_path/profiler_config.json"))
        cfg.update(start_step=-1, active=2, analyse=True, prof_dir="./prof",
                   record_shapes=True, with_stack=True)
        time.sleep(0.1)
        json.dump(cfg, open("profiler_config_path/profiler_config.json", "w"))
        for step in range(40):
            train_one_step()
            time.sleep(0.01)
            dp.step()
    """)
    run_python(code, env=ENV)
    dirs = glob.glob("prof/*_ascend_pt")
    assert len(dirs) == 1
    trace = trace_of(dirs[0])
    mm = slices(trace, "cpu_op", "aten::mm")
    assert len(mm) == 2  # active=2 steps, one matmul each
    assert mm[0]["args"]["Input Dims"] == "[[8, 8], [8, 8]]"
    assert "train_one_step" in mm[0]["args"]["Call stack"]
    assert glob.glob("profiler_config_path/log/dp_*.log")


def test_dp_start_at_step_5():
    with open("start_config.json", "w") as f:
        json.dump({"activities": ["CPU"], "prof_dir": "./started", "analyse": True,
                   "active": 1, "warmup": 0, "start_step": 0, "with_flops": True}, f)
    code = textwrap.dedent("""
        import torch
        from aiprof.profiler import dynamic_profile as dp
        x = torch.randn(4, 4)
        def train_one_step():
            return x + x
        dp.init("profiler_config_path")
        for step in range(8):
            if step==5:
                dp.start("start_config.json")
            train_one_step()
            dp.step()
    """)
    run_python(code, env=ENV)
    dirs = glob.glob("started/*_ascend_pt")
    assert len(dirs) == 1
    add = slices(trace_of(dirs[0]), "cpu_op", "aten::add")
    assert len(add) == 1
    # with_flops from the config file reaches the collectors: a 4x4 add.
    assert add[0]["args"]["flops"] == 16 and add[0]["args"]["Input Dims"] == "[[4, 4], [4, 4], []]"
    assert os.path.exists("profiler_config_path/profiler_config.json")
