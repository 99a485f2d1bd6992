"""A 2-rank gloo DDP training loop on CPU, profiled twice in each rank's
process, one after the other: by aiprof (Kineto's form of trace_view.json)
and by torch.profiler on Kineto.  Used by test_kineto_readers.py.

    python ddp_kineto_pair.py OUT [WORLD]

writes OUT/aiprof/rank<r>/<result dir> (tensorboard_trace_handler with
trace_format="kineto") and OUT/kineto/*.pt.trace.json (torch's handler),
and OUT/rank<r>.ok when rank r finished.  Ranks rendezvous on 127.0.0.1
at a free port (env://)."""
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

STEPS = 6  # schedule: wait 1, warmup 1, active 3 -> steps 2..4 recorded


def _loop(model, opt, x, y, prof):
    for _ in range(STEPS):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        prof.step()


def _worker(rank, world, out, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8))
    model = torch.nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randn(32, 8)

    import aiprof.profiler as P
    with P.profile(activities=[P.ProfilerActivity.CPU],
                   schedule=P.schedule(wait=1, warmup=1, active=3, repeat=1),
                   on_trace_ready=P.tensorboard_trace_handler(
                       os.path.join(out, "aiprof", "rank%d" % rank), trace_format="kineto"),
                   record_shapes=True) as prof:
        _loop(model, opt, x, y, prof)

    import torch.profiler as TP
    with TP.profile(activities=[TP.ProfilerActivity.CPU],
                    schedule=TP.schedule(wait=1, warmup=1, active=3, repeat=1),
                    on_trace_ready=TP.tensorboard_trace_handler(
                        os.path.join(out, "kineto"), worker_name="rank%d" % rank),
                    record_shapes=True) as prof:
        _loop(model, opt, x, y, prof)
    dist.barrier()
    dist.destroy_process_group()
    open(os.path.join(out, "rank%d.ok" % rank), "w").close()


def main():
    out = os.path.abspath(sys.argv[1])
    world = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_worker, args=(world, out, port), nprocs=world, join=True)


if __name__ == "__main__":
    main()
