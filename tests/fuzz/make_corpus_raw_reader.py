#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_raw_reader (tests/fuzz/corpus_fuzz_raw_reader/).

Usage: make_corpus_raw_reader.py [OUT_DIR]
Small raw files (docs/RAW_FORMAT.md) covering every chunk type and record
kind, plus the damaged and foreign inputs the reader must survive.
Files named regress_*.raw are not written here: they are inputs libFuzzer
found (tests/fuzz/run_libfuzzer.sh's artifacts), kept as they were found as
regression cases of the bug their name says.
"""
import json
import os
import struct
import sys
import zlib

MAGIC = 0x4B4E4843
INFO, STRINGS, EVENTS, CLOCK, STATS, END = 1, 2, 3, 4, 5, 6


def header(major=1, minor=0, size=16):
    return b"AIPRAW\r\n" + struct.pack("<HHI", major, minor, size)


def chunk(ctype, payload=b"", tid=0, crc=None):
    head = struct.pack("<IHHI", MAGIC, ctype, 0, len(payload))
    tail = struct.pack("<Q", tid)
    if crc is None:
        crc = zlib.crc32(payload, zlib.crc32(tail, zlib.crc32(head)))
    return head + struct.pack("<I", crc) + tail + payload + b"\0" * ((8 - len(payload) % 8) % 8)


def info(pid=1234, program="Python"):
    return chunk(INFO, json.dumps({"pid": pid, "hostname": "fuzz", "program": program,
                                   "clock": "tsc", "ticks_per_second": 2e9,
                                   "aiprof_version": "0.1.0"}).encode())


def strings(first, texts):
    body = struct.pack("<II", first, len(texts))
    for t in texts:
        body += struct.pack("<I", len(t)) + t
    return chunk(STRINGS, body)


def clock(t, m, r):
    return chunk(CLOCK, struct.pack("<QQQ", t, m, r))


def span(kind, name, s, e, flags=0, extra=b""):
    return struct.pack("<BBHIQQ", kind, flags, 24 + len(extra), name, s, e) + extra


def op(name, s, e, seq=None, fwd=None, shapes=None, stack=None, backward=False, flops=None):
    flags, extra = 0, b""
    if seq is not None:
        flags |= 1
        extra += struct.pack("<q", seq)
    if fwd is not None:
        flags |= 2
        extra += struct.pack("<Q", fwd)
    if shapes is not None:
        flags |= 4
        extra += struct.pack("<II", *shapes)
    if stack is not None:
        flags |= 8
        extra += struct.pack("<II", *stack)
    if backward:
        flags |= 0x10
    if flops is not None:  # format 1.2
        flags |= 0x20
        extra += struct.pack("<Q", flops)
    return span(6, name, s, e, flags, extra)


def rng(name, dom, s, e):
    return struct.pack("<BBHIQQII", 2, 0, 32, name, s, e, dom, 0)


def rstart(name, dom, ts, rid):
    return struct.pack("<BBHIQQII", 3, 0, 32, name, ts, rid, dom, 0)


def rend(ts, rid):
    return struct.pack("<BBHIQQ", 4, 0, 24, 0, ts, rid)


def mark(name, dom, ts):
    return struct.pack("<BBHIQII", 5, 0, 24, name, ts, dom, 0)


def memory(ts, addr, nbytes, alloc, res, dtype=20, didx=0):
    return struct.pack("<BBHIQQqqqBb6x", 7, 0, 56, 0, ts, addr, nbytes, alloc, res, dtype, didx)


def tname(name, ts):
    return struct.pack("<BBHIQ", 9, 0, 16, name, ts)


# Format 1.4 device records (docs/RAW_FORMAT.md "Device records").
def device(dev, name, vendor, kind=2, backend=1):
    return struct.pack("<BBHIIIBBHI", 12, 0, 24, name, dev, vendor, kind, backend, 0, 0)


def dqueue(dev, q, label, native_id1=None, size=24):
    """A DEVICE_QUEUE: the 16-byte 1.4/1.5 layout without native_id1, else
    1.6's (size > 24: a later minor's trailing bytes)."""
    if native_id1 is None:
        return struct.pack("<BBHIII", 13, 0, 16, label, dev, q)
    return struct.pack("<BBHIIIQ", 13, 0, size, label, dev, q, native_id1) + b"\0" * (size - 24)


def dtask(name, dev, q, kind, s, e, corr=0, queued=0, submit=0, direction=0, nbytes=0,
          flags=3, gws=(64, 1, 1), lws=(8, 1, 1)):
    return (struct.pack("<BBHIIIBBHIQQQQQQ", 14, flags, 96, name, dev, q, kind, direction, 0, 0,
                        corr, queued, submit, s, e, nbytes) + struct.pack("<6I", *gws, *lws))


def dapi(name, s, e, corr, dev=0):
    return struct.pack("<BBHIQQQII", 15, 0, 40, name, s, e, corr, dev, 0)


def dmem(ts, addr, nbytes, dev=0, kind=0):
    return struct.pack("<BBHIQQqIB3x", 16, 0, 40, 0, ts, addr, nbytes, dev, kind)


def dclock(ticks, dev_ns, err, dev=0, method=1):
    return struct.pack("<BBHIQQQIB3x", 17, 0, 40, 0, ticks, dev_ns, err, dev, method)


def device_file():
    """A valid device profile: an op launching a kernel and a copy on two
    queues, clock samples at both ends, device memory."""
    names = [b"aten::mm", b"clEnqueueNDRangeKernel", b"matmul", b"Fake GPU", b"Acme",
             b"queue 0", b"queue 1", b"Memcpy HtoD", b"clEnqueueWriteBuffer"]
    host = (op(1, 100, 400) + dapi(2, 120, 130, 1) + dapi(9, 140, 150, 2) +
            dmem(110, 0x1000, 4096) + dmem(390, 0x1000, -4096))
    dev = (device(0, 4, 5) + dqueue(0, 0, 6) + dqueue(0, 1, 7) + dclock(100, 5_000_100, 2) +
           dtask(3, 0, 0, 1, 5_000_135, 5_000_300, corr=1, queued=5_000_131,
                 submit=5_000_133) +
           dtask(8, 0, 1, 2, 5_000_155, 5_000_170, corr=2, direction=1, nbytes=4096, flags=0) +
           dclock(400, 5_000_400, 2))
    return (header(1, 4) + info() + strings(1, names) + clock(0, 0, 1_700_000_000_000_000_000) +
            chunk(EVENTS, host, 1) + chunk(EVENTS, dev, 2) +
            clock(2_000_000, 1_000_000, 1_700_000_000_001_000_000) + chunk(END))


def device_cuda_file():
    """Format 1.6 queues with native ids (CUDA streams 7 and 13), one
    without (0), one of a later minor's size, and a 1.5 record beside them."""
    names = [b"kernel", b"cudaLaunchKernel", b"NVIDIA GPU", b"NVIDIA", b"stream 7",
             b"stream 13", b"queue 2"]
    host = op(1, 100, 400) + dapi(2, 120, 130, 1) + dapi(2, 140, 150, 2)
    dev = (device(0, 3, 4, backend=2) + dqueue(0, 0, 5, 7 + 1) + dqueue(0, 1, 6, 13 + 1, 32) +
           dqueue(0, 2, 7, 0) + dqueue(0, 3, 7) + dclock(100, 5_000_100, 2) +
           dtask(1, 0, 0, 1, 5_000_135, 5_000_300, corr=1) +
           dtask(1, 0, 1, 1, 5_000_155, 5_000_170, corr=2) +
           dtask(1, 0, 2, 1, 5_000_175, 5_000_180) + dtask(1, 0, 3, 1, 5_000_185, 5_000_190) +
           dclock(400, 5_000_400, 2))
    return (header(1, 6) + info() + strings(1, names) + clock(0, 0, 1_700_000_000_000_000_000) +
            chunk(EVENTS, host, 1) + chunk(EVENTS, dev, 2) +
            clock(2_000_000, 1_000_000, 1_700_000_000_001_000_000) + chunk(END))


def device_hostile():
    """Device records a forged file may hold: ids beyond the tables, tasks
    ending before they start or at 0, undescribed devices and queues,
    duplicate and colliding correlation ids, clocks near 2^63, samples
    with huge error bounds."""
    recs = [device(63, 1, 2**32 - 1), device(64, 1, 1), device(2**32 - 1, 0, 0),
            dqueue(0, 4095, 1), dqueue(0, 4096, 1), dqueue(70, 1, 1),
            dqueue(0, 5, 1, 2**64 - 1), dqueue(0, 4096, 1, 8), dqueue(0, 6, 1, 1, 48),
            dtask(1, 0, 0, 1, 0, 5), dtask(1, 0, 0, 1, 9, 3), dtask(1, 64, 0, 1, 1, 2),
            dtask(1, 5, 2**32 - 1, 1, 1, 2**63 - 1, corr=7),
            dtask(1, 0, 9, 99, 2**63 - 2, 2**63 - 1, corr=7, queued=2**63, submit=1),
            dtask(1, 63, 4095, 3, 10, 20, corr=2**64 - 1, flags=0xff),
            dapi(1, 50, 40, 7), dapi(1, 1, 2**63, 7), dapi(1, 3, 4, 7, dev=2**32 - 1),
            dmem(5, 0, -2**63, dev=64), dmem(6, 0, 2**63 - 1, dev=0, kind=200),
            dclock(2**64 - 1, 2**63 + 5, 2**63), dclock(0, 0, 2**64 - 1, dev=63),
            dclock(5, 10, 0), dclock(5, 10, 0), dclock(7, 2**63 - 1, 3, dev=5, method=9)]
    return (header(1, 4) + strings(1, [b"x", b"y"]) + clock(0, 0, 1) +
            chunk(EVENTS, b"".join(recs), 1) +
            # a DEVICE_TASK cut short: the chunk is inconsistent and skipped
            chunk(EVENTS, dtask(1, 0, 0, 1, 1, 2)[:-8].replace(b"\x60\x00", b"\x58\x00", 1), 2) +
            chunk(END))


def cgroup(gid, name, my_rank, n_ranks, ranks, flags=0, listed=None):
    listed = len(ranks) if listed is None else listed
    body = struct.pack("<IIII", gid, n_ranks, my_rank, listed) + struct.pack(f"<{len(ranks)}I", *ranks)
    body += b"\0" * ((8 - (8 + len(body)) % 8) % 8)
    return struct.pack("<BBHI", 18, flags, 8 + len(body), name) + body


def cop(name, s, e, gid, kind=1, peer=2**32 - 1, nbytes=4096, seq=0, count=1024, dtype=0,
        tag=-1, root=2**32 - 1, lib=1, flags=0):
    return struct.pack("<BBHIQQQQQIIIIiBBH", 19, flags, 72, name, s, e, nbytes, seq, count, gid,
                       peer, root, dtype, tag, kind, lib, 0)


def comm_file():
    """Communication: a world group and a pair, collectives and p2p, and
    hostile records (listed > size, ids beyond the table, inverted times)."""
    names = [b"MPI_COMM_WORLD", b"MPI_Allreduce", b"MPI_Send", b"MPI_DOUBLE", b"pair"]
    recs = [cgroup(0, 1, 1, 4, [0, 1, 2, 3]), cgroup(1, 5, 0, 2, [1, 3]),
            cop(2, 100, 200, 0, dtype=4), cop(2, 210, 300, 0, seq=1),
            cop(3, 310, 320, 1, kind=2, peer=3, tag=9, flags=1),
            cgroup(2**16, 1, 0, 1, [0]), cgroup(3, 1, 0, 1, [0, 1]),
            cgroup(4, 1, 0, 9, [0, 1], listed=2**31), cgroup(5, 1, 0, 2**32 - 1, []),
            cop(2, 50, 40, 0), cop(2, 1, 2**64 - 1, 2**32 - 1, kind=250, lib=250, tag=2**31 - 1),
            cop(2, 5, 6, 7, seq=2**64 - 1, nbytes=2**64 - 1)]
    return (header(1, 4) + info() + strings(1, names) + clock(0, 0, 1_700_000_000_000_000_000) +
            chunk(EVENTS, b"".join(recs), 1) + chunk(END))


def hs(what, ts, v, index=0, name=0, flags=0):
    v = list(v) + [0] * (8 - len(v))
    return struct.pack("<BBHIQB3xI8Q", 20, flags, 88, name, ts, what, index, *v)


def host_file():
    """Host samples (format 1.5): every kind over three instants, then
    hostile ones (unknown kinds, counters going backwards, a core number
    past any table, a time that does not advance, an undefined name)."""
    names = [b"eth0", b"lo", b"mlx5_0/1"]
    recs = []
    for i, ts in enumerate((1000, 21000, 41000)):
        recs += [hs(1, ts, [i * 10**7, i * 10**6, i * 11 * 10**6, 3, 8], flags=8),
                 hs(2, ts, [i * 10**7, 0, i % 2, i * 11 * 10**6], index=77, flags=8),
                 hs(2, ts, [i * 10**6, 0, 5000], index=78),
                 hs(3, ts, [2**20 * (i + 1), 2**22, 4096, 100 * i, i, 2**33]),
                 hs(4, ts, [4096 * i, 8192 * i, 1, 2, 3, 4, 0, 10**6 * i], flags=4),
                 hs(5, ts, [1000 * i, 10 * i, i, 0, 2000 * i, 20 * i, 0, i], 1000, 1, 3),
                 hs(5, ts, [500 * i, 5 * i, 0, 0, 500 * i, 5 * i, 0, 0], 2**32 - 1, 2, 3),
                 hs(6, ts, [4000 * i, 40 * i, 0, 0, 4000 * i, 40 * i, 0, 0], 100000, 3, 2)]
    recs += [hs(0, 50000, []), hs(99, 50000, [1]), hs(1, 41000, [0, 0, 0, 0, 0]),
             hs(5, 60000, [0] * 8, 1000, 1, 3), hs(5, 60000, [2**64 - 1] * 8, 7, 999, 2),
             hs(3, 70000, [2**64 - 1] * 6), hs(4, 70000, [2**64 - 1] * 8, flags=4),
             hs(7, 80000, [3, 1, 5 * 10**7, 10**5, 2**8 | 2**6, 2 * 10**7])]
    return (header(1, 5) + info() + strings(1, names) + clock(0, 0, 1_700_000_000_000_000_000) +
            chunk(EVENTS, b"".join(recs), 9) + chunk(END))


def osrt(name, s, e, result=0, err=0, flags=None, size=40):
    flags = (1 if err else 0) if flags is None else flags
    return struct.pack("<BBHIQQqiI", 21, flags, size, name, s, e, result, err, 0)[:size]


def osrt_file():
    """OS runtime calls (format 1.5): good and failed calls on two threads,
    and hostile ones (inverted times, extreme values, unknown flags, a
    name id beyond the strings); a record too short for its kind spoils its
    chunk only."""
    names = [b"read", b"pthread_mutex_lock", b"nanosleep"]
    recs = [osrt(3, 100, 20_000_100), osrt(1, 5, 7, -1, 9), osrt(2, 50, 40),
            osrt(1, 0, 2**64 - 1, -2**63, -2**31, flags=0xff), osrt(2**32 - 1, 1, 2)]
    return (header(1, 5) + info() + strings(1, names) + clock(0, 0, 1_700_000_000_000_000_000) +
            chunk(EVENTS, b"".join(recs), 1) + chunk(EVENTS, osrt(2, 10, 50_000_010), 2) +
            chunk(EVENTS, osrt(1, 1, 2)[:32].replace(b"\x28\x00", b"\x20\x00", 1), 3) +
            chunk(END))


def stats(entries):
    return chunk(STATS, struct.pack("<II", len(entries), 0) +
                 b"".join(struct.pack("<QQQ", *e) for e in entries))


NAMES = [b"ProfilerStep#1", b"aten::mm", b"[[2, 3], [3]]", b"[float]", b"a.py(1): f",
         b"nn.Module: M_0", b"dom", b"msg", b"worker", b"bad\xff\"<name>\n"]


def full_file():
    ev1 = b"".join([tname(9, 10), op(2, 110, 120, seq=3, shapes=(3, 4), stack=(5, 6)),
                    rng(8, 7, 125, 130), mark(8, 0, 131), rstart(8, 7, 132, 42),
                    memory(133, 0x1000, 512, 512, 4096), span(8, 0, 134, 140),
                    op(10, 141, 150), span(1, 1, 100, 200)])
    ev2 = b"".join([op(2, 300, 310, seq=3, fwd=1, backward=True), rend(305, 42), rend(306, 7)])
    return (header() + info() + strings(1, NAMES) + clock(0, 0, 1_700_000_000_000_000_000) +
            chunk(EVENTS, ev1, 1) + chunk(EVENTS, ev2, 2) + stats([(1, 9, 1), (2, 3, 0)]) +
            clock(2_000_000, 1_000_000, 1_700_000_000_001_000_000) + chunk(END))


def main(out):
    os.makedirs(out, exist_ok=True)
    full = full_file()
    files = {
        "full.raw": full,
        "minimal.raw": header() + chunk(END),
        "header_only.raw": header(),
        "empty.raw": b"",
        "truncated.raw": full[: len(full) - 61],
        "bad_crc.raw": header() + info() + chunk(EVENTS, op(1, 1, 2), 1, crc=1) + chunk(END),
        "garbage_between.raw": header() + clock(1, 2, 3) + b"\x43\x48\x4e\x4b" + b"z" * 28 +
        clock(4, 5, 6),
        "newer_minor.raw": header(1, 9) + strings(1, [b"x"]) + chunk(99, b"future stuff") +
        chunk(EVENTS, b"\xc8\x00\x10\x00\x00\x00\x00\x00" + b"\0" * 8 +
              span(6, 1, 5, 9, 0x41, struct.pack("<qQ", 1, 99))[:-8] +
              struct.pack("<q", 1) + b"\0" * 8, 3),
        "newer_major.raw": header(2, 0) + chunk(END),
        "bad_header_size.raw": header(1, 0, 4) + chunk(END),
        "not_raw.raw": b'{"traceEvents": []}\n',
        "string_gaps.raw": header() + strings(5, [b"five"]) + strings(1000, [b"k"]) +
        strings(0, [b"zero", b"one"]) + chunk(EVENTS, op(1000, 1, 2) + op(5, 3, 4) + op(77, 5, 6), 1),
        "inconsistent_records.raw": header() + chunk(EVENTS, b"\x06\x00\x00\x00" + b"\0" * 20, 1) +
        chunk(EVENTS, op(1, 1, 2), 1),
        "deep_nesting.raw": header() + strings(1, [b"n"]) +
        chunk(EVENTS, b"".join(op(1, i, 1000 - i) for i in range(200)), 5),
        "reversed.raw": header() + strings(1, [b"r"]) +
        chunk(EVENTS, b"".join(op(1, 10 * i, 10 * i + 5) for i in range(300, 0, -1)), 5),
        "bad_stats.raw": header() + stats([(1, 2, 3)])[:-8] + chunk(STATS, b"\xff\xff\xff\xff") +
        chunk(CLOCK, b"short"),
        "flops_ops.raw": header(1, 2) + strings(1, NAMES) +
        chunk(EVENTS, op(2, 1, 9, flops=48) + op(2, 10, 19, seq=1, fwd=2, shapes=(3, 4),
                                                 stack=(5, 6), backward=True, flops=2**64 - 1) +
              op(2, 20, 29, seq=2, flops=0), 1) +
        # a FLOPS flag whose field is missing: the chunk's sizes do not add up
        chunk(EVENTS, span(6, 2, 30, 39, 0x21, struct.pack("<q", 3)), 1) + chunk(END),
        # Spans of ~2^62 ns (the longest a wall time allows): their sums in
        # op statistics and self times overflow int64 unless saturated.
        "overflow_spans.raw": header(1, 2) + strings(1, [b"long"]) +
        chunk(EVENTS, b"".join(op(1, i, 2**62 - 16 + i) for i in range(1, 6)) +
              op(1, 0, 2**62 - 2), 7) + chunk(END),
        # The same on two threads, so that cross-thread totals overflow too.
        "overflow_threads.raw": header(1, 2) + strings(1, [b"long", b"step"]) +
        b"".join(chunk(EVENTS, op(1, 0, 2**62 - 2) + span(1, 2, 0, 2**62 - 2) +
                       rng(1, 2, 0, 2**62 - 2), tid) for tid in range(1, 5)) + chunk(END),
        # Format 1.3: a PAD chunk aligns the page-sized STATS slot, which a
        # later STATS supersedes; a killed run ends without END or final STATS.
        "stats_slot.raw": header(1, 3) + info() + clock(0, 0, 1) +
        chunk(7, b"\0" * 3800) + chunk(STATS, struct.pack("<II", 1, 0) +
                                        struct.pack("<QQQ", 1, 1, 5) + b"\0" * 4040) +
        strings(1, [b"s"]) + chunk(EVENTS, op(1, 1, 2), 1) + stats([(1, 1, 7), (2, 0, 3)]) +
        chunk(END),
        "stats_slot_killed.raw": header(1, 3) + chunk(7, b"") +
        chunk(STATS, struct.pack("<II", 2, 0) + struct.pack("<QQQ", 1, 1, 2**64 - 1) +
              struct.pack("<QQQ", 3, 0, 9)) + strings(1, [b"s"]) + chunk(EVENTS, op(1, 1, 2), 1),
        "device_full.raw": device_file(),
        "device_hostile.raw": device_hostile(),
        "device_cuda.raw": device_cuda_file(),
        "comm.raw": comm_file(),
        "host.raw": host_file(),


        "osrt.raw": osrt_file(),
        "clock_backwards.raw": header() + info() + clock(1000, 5000, 9000) + clock(10, 1, 2) +
        chunk(EVENTS, op(0, 2**63, 2**64 - 1) + op(0, 0, 1), 1),
    }
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_fuzz_raw_reader"))
