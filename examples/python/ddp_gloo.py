"""Profile 2-rank DistributedDataParallel training on CPU (gloo), torch_npu-style.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/ddp_gloo.py --dir ./result

Starts --world-size processes (torch.multiprocessing.spawn; under torchrun
it is one of them instead), each training the same small MLP wrapped in
DistributedDataParallel on its own shard of synthetic data, under
schedule(wait=1, warmup=1, active=2, repeat=1).  Every step also averages
the loss across the ranks with torch.distributed.all_reduce and
broadcasts a learning-rate scale from rank 0.  Each rank writes its own
DIR/{host}_{pid}_{time}_ascend_pt (profiler_info_{rank}.json;
profiler_metadata.json's parallel_group_info lists the process groups);
the torch.distributed calls are recorded as communication operations
(docs/PYTHON.md, "torch.distributed"), and profiler_level=Level1 writes
their communication.json and communication_matrix.json (the seed writes
them at Level1 and Level2 only).  `--slow-rank R` makes rank R
slower in every step.  Only the import differs from a torch_npu script.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist

import aiprof as torch_npu


def worker(rank, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    dist.init_process_group("gloo", rank=rank, world_size=args.world_size)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    torch.manual_seed(1 + rank)  # each rank its own shard
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    lr_scale = torch.ones(1)
    prof = torch_npu.profiler.profile(
        activities=[torch_npu.profiler.ProfilerActivity.CPU],
        schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
        experimental_config=torch_npu.profiler._ExperimentalConfig(
            profiler_level=torch_npu.profiler.ProfilerLevel.Level1),
        on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(args.dir))
    with prof:
        for _ in range(args.steps):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            loss.backward()               # DDP averages the gradients (gloo allreduce)
            if rank == args.slow_rank:
                time.sleep(args.slow_ms / 1000)
            optimizer.step()
            mean = loss.detach().clone()
            dist.all_reduce(mean)         # the loss, averaged for logging
            dist.broadcast(lr_scale, src=0)
            prof.step()
    if rank == 0:
        print(f"ddp_gloo: {args.world_size} ranks, loss {mean.item() / args.world_size:.4f}")
    dist.destroy_process_group()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default="./result")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--port", type=int, default=29512)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-ms", type=float, default=20)
    args = p.parse_args(argv)
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun
        args.world_size = int(os.environ["WORLD_SIZE"])
        worker(int(os.environ["RANK"]), args)
    else:
        torch.multiprocessing.spawn(worker, args=(args,), nprocs=args.world_size)


if __name__ == "__main__":
    main()
