#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_dyn_shared (tests/fuzz/corpus_fuzz_dyn_shared/).

Usage: make_corpus_dyn_shared.py [OUT_DIR]
Contents of dynamic profiling's shared segment (struct aip__dyn_shared of
src/dynamic/dyn_watch.c, version 1: magic, version, watcher pid, poll
period, heartbeat, generation, seqlock, verdict, length, clients, the
watcher's message, the config text) as the watcher publishes them: valid
edits (the profiler_config.json seeds of fuzz_profiler_config), refused
ones with their message, and what another process could leave there: a
length past the text or past the segment's 1 MiB, a message without its
NUL, a text with NULs, a segment shorter than its header.
libFuzzer's finds are merged into the same directory (-merge=1).
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAX = 1024 * 1024
CLIENTS = 256


def segment(text=b"", valid=1, length=None, error=b"", generation=1, seq=2, magic=0x44504941,
            version=1, clients=(1234,)):
    length = len(text) if length is None else length
    head = struct.pack("<IIIIQQIiII", magic, version, 4321, 2000, 123456789, generation, seq,
                       valid, length & 0xFFFFFFFF, 1)
    cl = list(clients) + [0] * (CLIENTS - len(clients))
    head += struct.pack("<%dI" % CLIENTS, *cl)
    err = error[:512].ljust(512, b"\0") if len(error) < 512 else error[:512]
    return head + err + text


def configs():
    d = os.path.join(HERE, "corpus_fuzz_profiler_config")
    names = ["default.json", "default_compact.json", "bad_malformed.json", "bad_level.json",
             "big_numbers.json", "deep_nesting.json"]
    for n in names:
        p = os.path.join(d, n)
        if os.path.exists(p):
            with open(p, "rb") as f:
                yield n, f.read()


def cases():
    for name, text in configs():
        yield "valid_" + name[:-5], segment(text)
    yield "refused", segment(b"{ not json", valid=0,
                             error=b"profiler_config.json line 1: '[' or '{' expected")
    yield "refused_no_text", segment(valid=0, error=b"file removed")
    yield "length_past_text", segment(b'{"start_step": 1}', length=4096)
    yield "length_past_max", segment(b'{"start_step": 1}', length=MAX + 1)
    yield "length_max", segment(b'{"start_step": 1}', length=MAX)
    yield "length_all_ones", segment(b"{}", length=0xFFFFFFFF)
    yield "error_no_nul", segment(b"{}", valid=0, error=b"E" * 512)
    yield "text_with_nul", segment(b'{"prof_dir": "a\0b", "start_step": 1}')
    yield "valid_negative", segment(b'{"start_step": 1}', valid=-7)
    yield "odd_seq", segment(b'{"start_step": 1}', seq=3)
    yield "wrong_magic", segment(b'{"start_step": 1}', magic=0, version=99)
    yield "short_header", segment(b"")[:40]
    yield "empty", b""


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus_fuzz_dyn_shared")
    os.makedirs(out, exist_ok=True)
    for name, data in cases():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
