"""parallel_group_info when a torch.distributed program is profiled by
dynamic profiling (dynamic_profile, which PROF_CONFIG_PATH and `aiprof run
--config` also use): each rank's collection writes it into
profiler_metadata.json as a profile started in code does, and a
"metadata" entry of the config file wins over it.  Two gloo ranks;
skipped without torch.distributed or gloo (test_distributed.py's marks).
"""
import json
import os
import subprocess
import sys

from test_distributed import _by_rank, _env, _port, pytestmark  # noqa: F401  (the marks)

_SCRIPT = r'''
import json, os, sys, torch
import torch.distributed as dist
import torch.multiprocessing as mp

def run(rank, out, port, cfg):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    pair = dist.new_group([0, 1])
    from aiprof.profiler import dynamic_profile as dp
    dp.init(os.path.join(out, "cfg%d" % rank))
    for step in range(6):
        if step == 2:
            dp.start(cfg)
        dist.all_reduce(torch.ones(4))
        dist.all_reduce(torch.ones(2), group=pair)
        dp.step()
    dist.barrier()
    dist.destroy_process_group()
    # Out without the interpreter's teardown, whose destruction of gloo's
    # threads aborts now and then ("terminate called without an active
    # exception", torch 1.13): not what is under test.  The collection
    # ended at step 4 and was saved then.
    os._exit(0)

if __name__ == "__main__":
    mp.spawn(run, args=(sys.argv[1], int(sys.argv[2]), sys.argv[3]), nprocs=2)
'''


def _run(tmp_path, config):
    script = tmp_path / "dyn.py"
    script.write_text(_SCRIPT)
    cfg = tmp_path / "start.json"
    out = tmp_path / "out"
    cfg.write_text(json.dumps(dict({"activities": ["CPU"], "prof_dir": str(out / "prof"),
                                    "analyse": False, "active": 2, "warmup": 0},
                                   **config)))
    proc = subprocess.run([sys.executable, str(script), str(out), str(_port()), str(cfg)],
                          env=dict(_env(), AIPROF_DP_POLL_MS="50"), capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = _by_rank(out / "prof")
    assert sorted(ranks) == [0, 1]
    metas = {}
    for r, d in ranks.items():
        with open(os.path.join(d, "profiler_metadata.json")) as f:
            metas[r] = json.load(f)
    return metas


def test_dynamic_profile_writes_parallel_group_info(tmp_path):
    for r, meta in _run(tmp_path, {}).items():
        assert meta["parallel_group_info"] == {
            "0": {"group_name": "default_group", "group_rank": r, "global_ranks": [0, 1]},
            "1": {"group_name": "1", "group_rank": r, "global_ranks": [0, 1]}}, meta


def test_config_metadata_wins(tmp_path):
    mine = {"x": {"group_name": "mine", "group_rank": 0, "global_ranks": [0]}}
    for meta in _run(tmp_path, {"metadata": {"parallel_group_info": mine}}).values():
        assert meta["parallel_group_info"] == mine
