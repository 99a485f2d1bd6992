#!/usr/bin/env python3
"""Checks that a PNG screenshot shows something: decodes it (8-bit RGB or
RGBA, non-interlaced, as Chromium writes them) with the standard library
only, and requires at least MIN_INK of the pixels to be non-white and at
least MIN_COLOURS distinct colours (text, bars and the category areas).

Usage: check_png.py FILE.png [MIN_INK] [MIN_COLOURS]; exit 0 if it shows
something, 1 with a reason otherwise."""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG (depth {depth}, type {ctype})")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main(path, min_ink=0.01, min_colours=6):
    w, h, bpp, rows = pixels(path)
    ink, colours = 0, set()
    for line in rows[::2]:  # every other row is plenty
        for x in range(0, w * bpp, bpp * 2):
            px = line[x:x + 3]
            colours.add(px)
            if px != b"\xff\xff\xff":
                ink += 1
    total = (h + 1) // 2 * ((w + 1) // 2)
    share = ink / total
    if share < min_ink or len(colours) < min_colours:
        print(f"{path}: looks blank ({share:.3%} non-white, {len(colours)} colours)")
        return 1
    print(f"{path}: {w}x{h}, {share:.1%} non-white, {len(colours)} colours")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[0], *(float(a) for a in args[1:2]), *(int(a) for a in args[2:3])))
