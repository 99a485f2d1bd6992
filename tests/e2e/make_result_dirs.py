#!/usr/bin/env python3
"""Writes result directories with hand-made raw files (docs/RAW_FORMAT.md),
independent of the recording core, for test_cli_analyse.sh.

Usage: make_result_dirs.py OUT_DIR
Creates OUT_DIR/{hostile,plain,cut}_ascend_pt (valid, the last truncated)
and OUT_DIR/junk_ascend_pt (FRAMEWORK/ holds a file that is not raw data).
"""
import json
import os
import struct
import sys
import zlib

CHUNK_MAGIC = 0x4B4E4843
INFO, STRINGS, EVENTS, CLOCK, STATS, END = 1, 2, 3, 4, 5, 6
R0 = 1_700_000_000_000_000_000


def chunk(ctype, payload=b"", tid=0):
    head = struct.pack("<IHHI", CHUNK_MAGIC, ctype, 0, len(payload))
    tail = struct.pack("<Q", tid)
    crc = zlib.crc32(payload, zlib.crc32(tail, zlib.crc32(head)))
    pad = b"\0" * ((8 - len(payload) % 8) % 8)
    return head + struct.pack("<I", crc) + tail + payload + pad


def strings(first, texts):
    body = struct.pack("<II", first, len(texts))
    for t in texts:
        body += struct.pack("<I", len(t)) + t
    return chunk(STRINGS, body)


def op(name, start, end, seq=None, fwd=None):
    flags, extra = 0, b""
    if seq is not None:
        flags |= 1
        extra += struct.pack("<q", seq)
    if fwd is not None:
        flags |= 2
        extra += struct.pack("<Q", fwd)
    return struct.pack("<BBHIQQ", 6, flags, 24 + len(extra), name, start, end) + extra


def annotation(name, start, end):
    return struct.pack("<BBHIQQ", 1, 0, 24, name, start, end)


def raw_file(pid, names, per_thread, steps):
    out = b"AIPRAW\r\n" + struct.pack("<HHI", 1, 0, 16)
    info = {"pid": pid, "hostname": "e2ehost", "program": "Python", "clock": "monotonic",
            "ticks_per_second": 1e9, "aiprof_version": "0.1.0"}
    out += chunk(INFO, json.dumps(info).encode())
    out += strings(1, names)
    out += chunk(CLOCK, struct.pack("<QQQ", 0, 0, R0))
    for tid, recs in per_thread.items():
        out += chunk(EVENTS, b"".join(recs), tid)
    out += chunk(EVENTS, b"".join(steps), pid)
    out += chunk(STATS, struct.pack("<II", 1, 0) + struct.pack("<QQQ", pid, 10, 2))
    out += chunk(CLOCK, struct.pack("<QQQ", 10**9, 10**9, R0 + 10**9))
    out += chunk(END)
    return out


HOSTILE = [b"quote\"name", b"new\nline", b"</script><b>", b"bad\xff\xfeutf8",
           b"=cmd|' /C calc'!A0", b"comma,name", b"tab\tand\x01ctl", b"ok \xe6\x97\xa5"]


def make(out_dir, name, data, info=True):
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "FRAMEWORK"), exist_ok=True)
    with open(os.path.join(d, "FRAMEWORK", "aiprof_4242.raw"), "wb") as f:
        f.write(data)
    if info:
        cfg = {"config": {"common_config": {"record_shapes": False},
                          "experimental_config": {"_export_type": ["text"]}}, "rank_id": -1}
        with open(os.path.join(d, "profiler_info.json"), "w") as f:
            json.dump(cfg, f)


def main(out_dir):
    names = HOSTILE + [b"ProfilerStep#0", b"ProfilerStep#1", b"aten::mm", b"Backward"]
    n_hostile = len(HOSTILE)
    step0, step1, mm, bwd = n_hostile + 1, n_hostile + 2, n_hostile + 3, n_hostile + 4
    main_recs, other = [], []
    t = 1000
    for s in range(2):
        for i, _ in enumerate(HOSTILE):
            main_recs.append(op(i + 1, t, t + 400))
            t += 500
        main_recs.append(op(mm, t, t + 1000, seq=7 + s))
        other.append(op(bwd, t + 2000, t + 2500, seq=7 + s, fwd=4242))
        t += 5000
    steps = [annotation(step0, 500, 5000 + 9000), annotation(step1, 14000, 30000)]
    data = raw_file(4242, names, {4242: main_recs, 4243: other}, steps)
    make(out_dir, "hostile_ascend_pt", data)
    plain = raw_file(4242, [b"a", b"b"], {7: [op(1, 100, 200), op(2, 300, 400)]}, [])
    make(out_dir, "plain_ascend_pt", plain, info=False)
    make(out_dir, "cut_ascend_pt", data[: len(data) - 45])
    make(out_dir, "junk_ascend_pt", b"this is not raw data\n" * 4)


if __name__ == "__main__":
    main(sys.argv[1])
