#!/usr/bin/env python3
"""Writes the golden device and communication result directory: a small,
hand-made raw profile (docs/RAW_FORMAT.md, format 1.7) of rank 0 of a
2-rank MPI job whose program drives an OpenCL device, laid out as the
OpenCL back end and the MPI collector record it (the records of
tests/e2e/fake_device_profile.c, with fixed times instead of measured ones).
Its files are committed under tests/golden/input/golden_device_ascend_pt/;
the expected outputs under tests/golden/expected_device/ (made by
update_golden.sh, compared by tests/e2e/test_golden_device.sh).

Usage: make_golden_device_input.py OUT_RESULT_DIR

Contents (ticks are ns from R0, clock "monotonic"; the device clock reads
the host's + 1000 s, two DEVICE_CLOCK samples say so):
  device 0 "Golden GPU" (OpenCL, GPU), queues 0 and 1;
  thread 1001 "main", ProfilerStep#0 and #1 (annotations), per step:
    aten::to      -> clEnqueueWriteBuffer   -> "Memcpy HtoD" 1 MiB (queue 0)
    aten::matmul  -> clEnqueueNDRangeKernel -> "matmul" 100 us (queue 0)
    aten::relu    -> clEnqueueNDRangeKernel -> "relu" 30 us (queue 1)
    aten::item    -> clEnqueueReadBuffer    -> "Memcpy DtoH" 4 KiB (queue 0),
                     clFinish (launches nothing)
    MPI_Allreduce 4 KiB on MPI_COMM_WORLD (ranks 0, 1; seq = step),
    MPI_Send 1 KiB to rank 1, tag 7;
  a 1 MiB buffer allocated before the steps and freed after them, and one
  task whose end precedes its start (invalid: in no output but the
  summary's note and the run log, which count it).
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden_input import CHUNK_MAGIC, INFO, STRINGS, EVENTS, CLOCK, STATS, END, chunk  # noqa

assert CHUNK_MAGIC
R0 = 1_700_000_000_000_000_000
DEV_OFFSET = 1_000_000_000_000  # device clock = host ticks + 1000 s
PID, MAIN = 31338, 1001
NONE = 0xFFFFFFFF

NAMES = [
    b"ProfilerStep#0", b"ProfilerStep#1", b"aten::to", b"aten::matmul", b"aten::relu",
    b"aten::item", b"clEnqueueWriteBuffer", b"clEnqueueNDRangeKernel", b"clEnqueueReadBuffer",
    b"clFinish", b"Memcpy HtoD", b"matmul", b"relu", b"Memcpy DtoH", b"Golden GPU",
    b"GoldenVendor", b"queue 0", b"queue 1", b"MPI_COMM_WORLD", b"MPI_Allreduce", b"MPI_Send",
    b"MPI_FLOAT", b"main", b"broken",
]
ID = {n: i + 1 for i, n in enumerate(NAMES)}


def strings():
    body = struct.pack("<II", 1, len(NAMES))
    for t in NAMES:
        body += struct.pack("<I", len(t)) + t
    return chunk(STRINGS, body)


def op(name, start, end):
    return struct.pack("<BBHIQQ", 6, 0, 24, ID[name], start, end)


def annotation(name, start, end):
    return struct.pack("<BBHIQQ", 1, 0, 24, ID[name], start, end)


def thread_name(name, ts):
    return struct.pack("<BBHIQ", 9, 0, 16, ID[name], ts)


def device():
    return struct.pack("<BBHIIIBBHI", 12, 0, 24, ID[b"Golden GPU"], 0, ID[b"GoldenVendor"],
                       2, 1, 0, 0)


def queue(qid):
    return struct.pack("<BBHIIIQ", 13, 0, 24, ID[b"queue %d" % qid], 0, qid, 0)


def task(name, qid, kind, direction, corr, start_us, dur_us, nbytes=0, glob=(0, 0, 0),
         loc=(0, 0, 0)):
    """Queued 2 us and submitted 1 us before it starts (flags 0x03: known)."""
    start = start_us * 1000 + DEV_OFFSET
    end = start + dur_us * 1000
    return struct.pack("<BBHIIIBBHIQQQQQQ3I3I", 14, 0x03, 96, ID[name], 0, qid, kind, direction,
                       0, 0, corr, start - 2000, start - 1000, start, end, nbytes, *glob, *loc)


def api(name, start, end, corr):
    return struct.pack("<BBHIQQQII", 15, 0, 40, ID[name], start, end, corr, 0, 0)


def dev_memory(ts, address, nbytes):
    return struct.pack("<BBHIQQqIB3x", 16, 0, 40, 0, ts, address, nbytes, 0, 0)


def dev_clock(ticks):
    return struct.pack("<BBHIQQQIB3x", 17, 0, 40, 0, ticks, ticks + DEV_OFFSET, 500, 0, 1)


def comm_group():
    return struct.pack("<BBHIIIII", 18, 0, 32, ID[b"MPI_COMM_WORLD"], 0, 2, 0, 2) + \
        struct.pack("<II", 0, 1)


def comm_op(name, start, end, nbytes, seq, count, kind, peer=NONE, tag=-1, group=0):
    return struct.pack("<BBHIQQQQQIIIIiBBH", 19, 0, 72, ID[name], start, end, nbytes, seq, count,
                       group, peer, NONE, ID[b"MPI_FLOAT"], tag, kind, 1, 0)


def step(s, corr):
    """One step's records from tick `b`; correlation ids from `corr`."""
    b = 10_000 + s * 390_000
    us = b // 1000
    r = [annotation(b"ProfilerStep#%d" % s, b, b + 380_000)]
    r += [op(b"aten::to", b + 1_000, b + 20_000),
          api(b"clEnqueueWriteBuffer", b + 2_000, b + 5_000, corr),
          task(b"Memcpy HtoD", 0, 2, 1, corr, us + 6, 10, nbytes=1 << 20)]
    r += [op(b"aten::matmul", b + 30_000, b + 60_000),
          api(b"clEnqueueNDRangeKernel", b + 31_000, b + 35_000, corr + 1),
          task(b"matmul", 0, 1, 0, corr + 1, us + 36, 100, glob=(1024, 1024, 1), loc=(16, 16, 1))]
    r += [op(b"aten::relu", b + 70_000, b + 90_000),
          api(b"clEnqueueNDRangeKernel", b + 71_000, b + 74_000, corr + 2),
          task(b"relu", 1, 1, 0, corr + 2, us + 140, 30, glob=(1 << 20, 1, 1), loc=(256, 1, 1))]
    r += [op(b"aten::item", b + 150_000, b + 200_000),
          api(b"clEnqueueReadBuffer", b + 151_000, b + 153_000, corr + 3),
          task(b"Memcpy DtoH", 0, 2, 2, corr + 3, us + 180, 4, nbytes=4096),
          api(b"clFinish", b + 154_000, b + 199_000, 0)]
    r += [comm_op(b"MPI_Allreduce", b + 210_000, b + 260_000, 4096, s, 1024, 1),
          comm_op(b"MPI_Send", b + 270_000, b + 280_000, 1024, 0, 256, 2, peer=1, tag=7)]
    return r


def main_thread():
    r = [thread_name(b"main", 0), device(), queue(0), queue(1), comm_group(), dev_clock(1_000),
         dev_memory(5_000, 0x5000, 1 << 20)]
    r += step(0, 1) + step(1, 5)
    # the end precedes the start: invalid, in no output
    r.append(struct.pack("<BBHIIIBBHIQQQQQQ3I3I", 14, 0, 96, ID[b"broken"], 0, 0, 1, 0, 0, 0,
                         0, 0, 0, DEV_OFFSET + 900_000, DEV_OFFSET + 899_000, 0, 0, 0, 0, 0, 0, 0))
    r += [dev_memory(790_000, 0x5000, -(1 << 20)), dev_clock(799_000)]
    return r


def raw_file():
    out = b"AIPRAW\r\n" + struct.pack("<HHI", 1, 7, 16)
    info = {"pid": PID, "hostname": "goldenhost", "program": "golden_device", "clock": "monotonic",
            "ticks_per_second": 1e9, "aiprof_version": "0.1.0"}
    out += chunk(INFO, json.dumps(info).encode())
    out += strings()
    out += chunk(CLOCK, struct.pack("<QQQ", 0, 0, R0))
    records = main_thread()
    out += chunk(EVENTS, b"".join(records), MAIN)
    out += chunk(STATS, struct.pack("<II", 1, 0) + struct.pack("<QQQ", MAIN, len(records), 0))
    out += chunk(CLOCK, struct.pack("<QQQ", 10**6, 10**6, R0 + 10**6))
    out += chunk(END)
    return out


PROFILER_INFO = {
    "config": {
        "common_config": {
            "activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
            "record_shapes": False, "profile_memory": True, "with_stack": False,
            "with_flops": False, "with_modules": False},
        "experimental_config": {
            "_profiler_level": "Level1", "_aic_metrics": "ACL_AICORE_PIPE_UTILIZATION",
            "_l2_cache": False, "_msprof_tx": False, "_mstx": False, "_data_simplification": True,
            "record_op_args": False, "_export_type": ["text", "db"], "_host_sys": [],
            "_op_attr": False, "_gc_detect_threshold": None, "_mstx_domain_include": [],
            "_mstx_domain_exclude": [], "_sys_io": False, "_sys_interconnection": False}},
    "start_info": {"syscnt_enable": False, "freq": 1000000000, "start_cnt": 0,
                   "start_monotonic": 0, "start_realtime": R0},
    "end_info": {"collectionTimeEnd": R0 + 10**6, "MonotonicTimeEnd": 10**6, "end_cnt": 10**6},
    "torch_npu_version": "", "cann_version": "", "rank_id": 0,
}


def main(out_dir):
    os.makedirs(os.path.join(out_dir, "FRAMEWORK"), exist_ok=True)
    with open(os.path.join(out_dir, "FRAMEWORK", f"aiprof_{PID}.raw"), "wb") as f:
        f.write(raw_file())
    with open(os.path.join(out_dir, "profiler_info_0.json"), "w") as f:
        json.dump(PROFILER_INFO, f, indent=4)
    with open(os.path.join(out_dir, "profiler_metadata.json"), "w") as f:
        json.dump({"ENV_VARIABLES": {}, "distributed_args": {"tp": 1, "pp": 1, "dp": 2,
                                                              "world_size": 2}}, f, indent=4)


if __name__ == "__main__":
    main(sys.argv[1])
