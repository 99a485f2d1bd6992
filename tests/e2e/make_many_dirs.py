#!/usr/bin/env python3
"""Writes N small result directories for the many-directories test of
`aiprof analyse`: each a copy of the golden input (tests/golden), with
these exceptions:
  dir_001: one chunk's CRC broken (salvaged: analysed with a warning)
  dir_002: the raw file cut in the middle of a chunk (salvaged)
  dir_003: FRAMEWORK holds a file that is not raw data (fails)
Usage: make_many_dirs.py OUT_DIR N"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import make_golden_input as golden  # noqa: E402


def main(out, n):
    for i in range(n):
        d = os.path.join(out, f"worker{i:03d}_20250101000000000_ascend_pt")
        golden.main(d)
        raw = os.path.join(d, "FRAMEWORK", f"aiprof_{golden.PID}.raw")
        data = bytearray(open(raw, "rb").read())
        if i == 1:
            data[200] ^= 0xFF  # inside the STRINGS chunk's payload
        elif i == 2:
            data = data[:len(data) - 100]
        elif i == 3:
            data = b"this is not aiprof raw data\n" * 10
        open(raw, "wb").write(bytes(data))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
