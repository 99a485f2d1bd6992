#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_cluster_wire (tests/fuzz/corpus_fuzz_cluster_wire/).

Usage: make_corpus_cluster_wire.py [OUT_DIR]
Messages of `aiprof cluster --mpi` in src/cluster/cluster_wire.c's layout
(wire_rank(): little-endian 8-byte integers, a text as its length + 1 and
its bytes with the NUL, JSON as tagged trees), written here from that
layout: a rank directory as the readers fill it (step_trace_time.csv's
columns and rows, communication.json, profiler_metadata.json, the host,
the devices), an empty one, and cut or damaged copies.  The first byte is
the target's mode: 0 one rank directory, 1 a process's share for a
cluster of three directories (process 1 of 2 sends directory 1,
job/b_2_ascend_pt).  libFuzzer's finds are merged into the same directory.
"""
import os
import struct
import sys

J_NONE, J_OBJECT, J_ARRAY, J_STRING, J_INTEGER, J_REAL, J_TRUE, J_FALSE, J_NULL = range(9)


def u64(v):
    return struct.pack("<Q", v & (2 ** 64 - 1))


def f64(v):
    return struct.pack("<d", v)


def text(s):
    if s is None:
        return u64(0)
    b = s.encode() + b"\0"
    return u64(len(b)) + b


def js(v):
    if v is None:
        return bytes([J_NONE])
    if isinstance(v, dict):
        out = bytes([J_OBJECT]) + u64(len(v))
        for k, x in v.items():
            kb = k.encode()
            out += u64(len(kb)) + kb + js(x)
        return out
    if isinstance(v, list):
        return bytes([J_ARRAY]) + u64(len(v)) + b"".join(js(x) for x in v)
    if isinstance(v, str):
        b = v.encode()
        return bytes([J_STRING]) + u64(len(b)) + b
    if v is True:
        return bytes([J_TRUE])
    if v is False:
        return bytes([J_FALSE])
    if isinstance(v, int):
        return bytes([J_INTEGER]) + u64(v)
    if isinstance(v, float):
        return bytes([J_REAL]) + f64(v)
    if v == "null":
        return bytes([J_NULL])
    raise TypeError(v)


def rank_dir(path="job/b_2_ascend_pt", rank=1, cols=("Computing", "Free"), rows=None,
             comm=None, matrix=None, meta=None, devices=(0, 1), problem=""):
    rows = rows if rows is not None else [("0", [500.0, 1000.0]), ("1", [510.5, 990.25])]
    out = text(path) + u64(rank) + u64(1700000000) + text(problem)
    out += u64(len(cols)) + b"".join(text(c) for c in cols)
    out += u64(len(rows))
    for step, v in rows:
        out += text(step) + b"".join(f64(x) for x in v)
    out += js(comm) + js(matrix) + f64(1.7e15) + f64(1.7e15 + 3e5) + u64(0)
    out += text("h0/uid0") + f64(float("nan")) + u64(0) + js(meta)
    out += text("uid0") + text("h0") + u64(len(devices)) + b"".join(u64(d) for d in devices)
    return out


COMM = {"step0": {"collective": {"hcom_allReduce__1_0_1@world": {
    "Communication Time Info": {"Start Timestamp(us)": 1.7e15, "Elapse Time(ms)": 5.5,
                                "Wait Time Ratio": 0}}, "Total Op Info": {}},
    "p2p": {"hcom_send__1_0_1@pair0": {}}}}
MATRIX = {"step0": {"collective": {"allReduce-top1@world": {
    "0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 1.5, "Bandwidth(GB/s)": 9.1}}}}}
META = {"distributed_args": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 2,
                             "data_parallel_size": 2, "world_size": 4, "rank": 1,
                             "sequence_parallel": False},
        "parallel_group_info": {"0": {"group_name": "dp", "group_rank": 0,
                                      "global_ranks": [1, 3]}},
        "nothing": None and None, "list": [1, -2, 3.25, "x\u00e9", True, False]}


def share(ranks, status=0, n=3, message=None):
    out = u64(status) + u64(n)
    if status:
        return out + text(message)
    out += u64(len(ranks))
    for at, r in ranks:
        out += u64(at) + r
    return out


def cases():
    full = rank_dir(comm=COMM, matrix=MATRIX, meta=META)
    yield "rank_full", b"\0" + full
    yield "rank_empty", b"\0" + rank_dir(path="", rank=-1, cols=(), rows=[], devices=())
    yield "rank_problem", b"\0" + rank_dir(problem="step_trace_time.csv is truncated")
    yield "rank_no_path", b"\0" + u64(0) + full[len(text("job/b_2_ascend_pt")):]
    yield "rank_cut_half", b"\0" + full[:len(full) // 2]
    yield "rank_cut_last", b"\0" + full[:-1]
    yield "rank_trailing", b"\0" + full + b"\x07\x07"
    yield "rank_json_deep", b"\0" + rank_dir(meta={"a": [[[[{"b": [[]]}]]]]})
    yield "rank_json_bad_tag", b"\0" + rank_dir(meta=None)[:-40] + b"\x09" * 40
    yield "rank_huge_count", b"\0" + text("p") + u64(0) + u64(0) + text("") + u64(2 ** 62)
    yield "rank_real_nan", b"\0" + rank_dir(meta={"x": float("nan"), "y": float("inf")})
    yield "share_one", b"\1" + share([(1, full)])
    yield "share_none", b"\1" + share([])
    yield "share_failed", b"\1" + share([], status=3, message="out of memory")
    yield "share_wrong_count", b"\1" + share([(1, full)], n=4)
    yield "share_wrong_index", b"\1" + share([(0, full)])
    yield "share_wrong_path", b"\1" + share([(1, rank_dir(path="job/c_3_ascend_pt"))])
    yield "share_cut", b"\1" + share([(1, full)])[:-3]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus_fuzz_cluster_wire")
    os.makedirs(out, exist_ok=True)
    for name, data in cases():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
