#!/usr/bin/env python3
"""Writes the golden result directory: a small, hand-made raw profile
(docs/RAW_FORMAT.md, independent of the recording core) that exercises every
output of the analyser.  Its files are committed under
tests/golden/input/golden_ascend_pt/; the expected outputs are under
tests/golden/expected/ (made by update_golden.sh, compared by
tests/e2e/test_golden.sh).

Usage: make_golden_input.py OUT_RESULT_DIR

Contents (ticks are ns from R0, clock "monotonic"):
  thread 1001 "main": ProfilerStep#7 and #8 (a schedule), ops with sequence
    numbers, shapes, dtypes, call stacks, a backward pass (AddmmBackward0
    flagged BACKWARD, linked to aten::linear by sequence number 11), mstx
    push/pop range and mark, a cross-thread start/end range, GC, memory
    records (temporary, autograd detail, long-lived, never freed, freed
    but allocated before the trace), hostile names;
  thread 1002 "worker": ops, the end of the cross-thread range.
"""
import json
import os
import struct
import sys
import zlib

CHUNK_MAGIC = 0x4B4E4843
INFO, STRINGS, EVENTS, CLOCK, STATS, END = 1, 2, 3, 4, 5, 6
R0 = 1_700_000_000_000_000_000
PID, MAIN, WORKER = 31337, 1001, 1002

NAMES = [
    b"ProfilerStep#7", b"ProfilerStep#8", b"aten::linear", b"aten::addmm", b"aten::relu",
    b"autograd::engine::evaluate_function: AddmmBackward0", b"AddmmBackward0", b"aten::mm",
    b"[[8, 16], [16, 4]]", b"[float, float]", b"train.py(20): train_step;\nmodel.py(7): forward",
    b"nn.Module: Net_0", b"io", b"dataloader", b"checkpoint", b"main", b"worker",
    b"quote\"comma,=cmd\n</script><img src=x onerror=alert(1)>", b"bad\xff\xfeutf8 \xe6\x97\xa5",
    b"Optimizer.step#SGD.step", b"save", b"aten::copy_", b"@SUM(A1)",
]
ID = {n: i + 1 for i, n in enumerate(NAMES)}


def chunk(ctype, payload=b"", tid=0):
    head = struct.pack("<IHHI", CHUNK_MAGIC, ctype, 0, len(payload))
    tail = struct.pack("<Q", tid)
    crc = zlib.crc32(payload, zlib.crc32(tail, zlib.crc32(head)))
    pad = b"\0" * ((8 - len(payload) % 8) % 8)
    return head + struct.pack("<I", crc) + tail + payload + pad


def strings():
    body = struct.pack("<II", 1, len(NAMES))
    for t in NAMES:
        body += struct.pack("<I", len(t)) + t
    return chunk(STRINGS, body)


def op(name, start, end, seq=None, fwd=None, shapes=None, stack=None, backward=False):
    flags, extra = 0, b""
    if seq is not None:
        flags |= 1
        extra += struct.pack("<q", seq)
    if fwd is not None:
        flags |= 2
        extra += struct.pack("<Q", fwd)
    if shapes is not None:
        flags |= 4
        extra += struct.pack("<II", ID[shapes[0]], ID[shapes[1]])
    if stack is not None:
        flags |= 8
        extra += struct.pack("<II", ID[stack[0]], ID[stack[1]])
    if backward:
        flags |= 0x10
    return struct.pack("<BBHIQQ", 6, flags, 24 + len(extra), ID[name], start, end) + extra


def annotation(name, start, end):
    return struct.pack("<BBHIQQ", 1, 0, 24, ID[name], start, end)


def rng(name, domain, start, end):
    return struct.pack("<BBHIQQII", 2, 0, 32, ID[name], start, end, ID[domain], 0)


def rng_start(name, ts, rid):
    return struct.pack("<BBHIQQII", 3, 0, 32, ID[name], ts, rid, 0, 0)


def rng_end(ts, rid):
    return struct.pack("<BBHIQQ", 4, 0, 24, 0, ts, rid)


def mark(name, ts):
    return struct.pack("<BBHIQII", 5, 0, 24, ID[name], ts, 0, 0)


def gc(start, end):
    return struct.pack("<BBHIQQ", 8, 0, 24, 0, start, end)


def thread_name(name, ts):
    return struct.pack("<BBHIQ", 9, 0, 16, ID[name], ts)


class Memory:
    def __init__(self, preexisting):
        self.allocated = preexisting
        self.reserved = 1 << 20

    def ev(self, ts, addr, nbytes):
        self.allocated += nbytes
        while self.allocated > self.reserved:
            self.reserved *= 2
        return struct.pack("<BBHIQQqqqBb6x", 7, 0, 56, 0, ts, addr, nbytes, self.allocated,
                           self.reserved, 0, -1)


def main_thread():
    mem = Memory(preexisting=65536)
    shapes = (b"[[8, 16], [16, 4]]", b"[float, float]")
    stack = (b"train.py(20): train_step;\nmodel.py(7): forward", b"nn.Module: Net_0")
    r = [thread_name(b"main", 50)]
    for step, base in ((b"ProfilerStep#7", 1_000), (b"ProfilerStep#8", 400_000)):
        r.append(annotation(step, base, base + 380_000))
        r.append(op(b"aten::linear", base + 10_000, base + 60_000, seq=11, shapes=shapes,
                    stack=stack))
        r.append(op(b"aten::addmm", base + 12_000, base + 50_000, shapes=shapes))
        r.append(mem.ev(base + 13_000, 0x7000_0000 + base, 4096))      # temporary
        r.append(mem.ev(base + 14_000, 0x7100_0000 + base, 32768))     # activation-like
        r.append(mem.ev(base + 40_000, 0x7000_0000 + base, -4096))
        r.append(op(b"aten::relu", base + 61_000, base + 70_000, seq=12))
        r.append(op(NAMES[17], base + 71_000, base + 72_000))
        r.append(op(NAMES[18], base + 73_000, base + 74_000))
        r.append(op(b"@SUM(A1)", base + 75_000, base + 76_000))
        r.append(rng(b"dataloader", b"io", base + 80_000, base + 95_000))
        r.append(mark(b"checkpoint", base + 96_000))
        ev = base + 100_000
        r.append(op(b"autograd::engine::evaluate_function: AddmmBackward0", ev, ev + 80_000))
        r.append(op(b"AddmmBackward0", ev + 1_000, ev + 79_000, seq=11, fwd=MAIN,
                    backward=True))
        r.append(op(b"aten::mm", ev + 2_000, ev + 40_000))
        r.append(mem.ev(ev + 3_000, 0x7200_0000 + base, 16384))        # temporary
        r.append(mem.ev(ev + 4_000, 0x7300_0000 + base, 2048))         # autograd detail
        r.append(mem.ev(ev + 60_000, 0x7200_0000 + base, -16384))
        r.append(mem.ev(ev + 90_000, 0x7300_0000 + base, -2048))
        r.append(mem.ev(ev + 95_000, 0x7100_0000 + base, -32768))
        r.append(op(b"Optimizer.step#SGD.step", base + 200_000, base + 260_000))
        r.append(op(b"aten::copy_", base + 210_000, base + 220_000))
        r.append(mem.ev(base + 215_000, 0x7400_0000 + base, 1024))     # never freed
    r.append(mem.ev(300_000, 0x7F00_0000, -65536))                      # allocated before
    r.append(rng_start(b"save", 350_000, 42))
    r.append(gc(360_000, 365_000))
    return r


def worker_thread():
    r = [thread_name(b"worker", 60)]
    for base in (20_000, 420_000):
        r.append(op(b"aten::mm", base, base + 30_000))
        r.append(op(b"aten::copy_", base + 31_000, base + 35_000))
    r.append(rng_end(500_000, 42))
    return r


def raw_file():
    out = b"AIPRAW\r\n" + struct.pack("<HHI", 1, 0, 16)
    info = {"pid": PID, "hostname": "goldenhost", "program": "Python", "clock": "monotonic",
            "ticks_per_second": 1e9, "aiprof_version": "0.1.0"}
    out += chunk(INFO, json.dumps(info).encode())
    out += strings()
    out += chunk(CLOCK, struct.pack("<QQQ", 0, 0, R0))
    out += chunk(EVENTS, b"".join(main_thread()), MAIN)
    out += chunk(EVENTS, b"".join(worker_thread()), WORKER)
    stats = struct.pack("<II", 2, 0) + struct.pack("<QQQ", MAIN, 80, 3) + \
        struct.pack("<QQQ", WORKER, 9, 0)
    out += chunk(STATS, stats)
    out += chunk(CLOCK, struct.pack("<QQQ", 10**6, 10**6, R0 + 10**6))
    out += chunk(END)
    return out


PROFILER_INFO = {
    "config": {
        "common_config": {
            "activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
            "schedule": {"wait": 0, "active": 2, "warmup": 0, "repeat": 1, "skip_first": 7},
            "record_shapes": True, "profile_memory": True, "with_stack": True,
            "with_flops": False, "with_modules": True},
        "experimental_config": {
            "_profiler_level": "Level1", "_aic_metrics": "ACL_AICORE_PIPE_UTILIZATION",
            "_l2_cache": False, "_msprof_tx": True, "_mstx": True, "_data_simplification": True,
            "record_op_args": True, "_export_type": ["text"], "_host_sys": [], "_op_attr": False,
            "_gc_detect_threshold": 0.5, "_mstx_domain_include": [], "_mstx_domain_exclude": [],
            "_sys_io": False, "_sys_interconnection": False}},
    "start_info": {"syscnt_enable": False, "freq": 1000000000, "start_cnt": 0,
                   "start_monotonic": 0, "start_realtime": R0},
    "end_info": {"collectionTimeEnd": R0 + 10**6, "MonotonicTimeEnd": 10**6, "end_cnt": 10**6},
    "torch_npu_version": "", "cann_version": "", "rank_id": -1,
}

METADATA = {
    "ENV_VARIABLES": {"ASCEND_GLOBAL_LOG_LEVEL": "", "HCCL_ALGO": "level0:ring"},
    "distributed_args": {"tp": 1, "pp": 1, "dp": 1},
    "note": "quote\" <b>bold</b> \u65e5\u672c",
}


def main(out_dir):
    os.makedirs(os.path.join(out_dir, "FRAMEWORK"), exist_ok=True)
    with open(os.path.join(out_dir, "FRAMEWORK", f"aiprof_{PID}.raw"), "wb") as f:
        f.write(raw_file())
    with open(os.path.join(out_dir, "profiler_info.json"), "w") as f:
        json.dump(PROFILER_INFO, f, indent=4)
    with open(os.path.join(out_dir, "profiler_metadata.json"), "w") as f:
        json.dump(METADATA, f, indent=4)


if __name__ == "__main__":
    main(sys.argv[1])
