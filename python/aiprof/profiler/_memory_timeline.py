"""export_memory_timeline(): memory use over time, in torch's file formats.

libaiprof's aip_export_memory_timeline() (through aiprof._C) writes the
timeline with bytes sorted into torch's categories: it pairs allocations
with frees and the ops around them, and applies the framework's labels
(parameters, gradients, optimizer state: _memory_labels.py); docs/MEMORY.md.
Only if the extension lacks that call (a stale build) does this module write
the same formats from trace_view.json, with every byte in the "unknown"
category (torch's own bucket for bytes it cannot place):

  .json / .json.gz   [times_us, sizes] — sizes[i] has 9 slots, slot 0 the
                     baseline, slot 8 the unknown category
  .raw.json.gz       [[time_ns, action, bytes, category], ...] with action
                     2 (CREATE) or 4 (DESTROY) and category 7 (unknown)
  .html              a self-contained page with an SVG plot (no matplotlib)
"""
import gzip
import json
import os
import re
from decimal import Decimal

from .. import _C
from . import _output

_CREATE, _DESTROY = 2, 4
_UNKNOWN_RAW = 7
_DEVICE_TYPES = {"cpu": 0, "cuda": 1, "npu": 20}


def parse_device(device):
    """(device_type, index) for "cpu", "npu:0", "cuda:1" ...; index None = any."""
    if device is None:
        return 0, None
    if not isinstance(device, str):
        raise TypeError(f"device must be a str such as 'cpu' or 'npu:0', got "
                        f"{type(device).__name__}")
    m = re.fullmatch(r"(cpu|cuda|npu)(?::(\d+))?", device)
    if not m:
        raise ValueError(f"device must look like 'cpu', 'npu:0' or 'cuda:0', got {device!r}")
    return _DEVICE_TYPES[m.group(1)], None if m.group(2) is None else int(m.group(2))


def memory_points(trace, device_type, device_index):
    """[(time_ns, bytes)] of the [memory] instants for one device, in order.
    `trace` in either form: torch_npu's array with string ts of absolute
    µs, or Kineto's object with ts relative to baseTimeNanoseconds."""
    if isinstance(trace, dict):
        base, events = int(trace.get("baseTimeNanoseconds", 0)), trace.get("traceEvents", ())
    else:
        base, events = 0, trace
    points = []
    for ev in events:
        if ev.get("ph") != "i" or ev.get("name") != "[memory]":
            continue
        args = ev.get("args") or {}
        if args.get("Device Type") != device_type:
            continue
        if device_index is not None and device_type != 0 and args.get("Device Id") != device_index:
            continue
        points.append((base + int(Decimal(str(ev["ts"])) * 1000), int(args.get("Bytes", 0))))
    points.sort()
    return points


def _coalesced(points):
    times, sizes, total = [], [], 0
    for t, b in points:
        total += b
        times.append(t / 1000.0)
        sizes.append([0] * 8 + [total])
    return [times, sizes]


def _raw(points):
    return [[t, _CREATE if b >= 0 else _DESTROY, abs(b), _UNKNOWN_RAW] for t, b in points]


def _svg(points, width=900, height=320):
    if not points:
        return "<p>No memory events were recorded for this device.</p>"
    t0 = points[0][0]
    xs, ys, total = [], [], 0
    for t, b in points:
        total += b
        xs.append((t - t0) / 1e6)  # ms
        ys.append(total / 2**20)   # MiB
    xmax = max(xs[-1], 1e-9)
    ymax = max(max(ys), 1e-9)
    lo = min(0.0, min(ys))
    pad = 40

    def sx(x):
        return pad + (width - 2 * pad) * x / xmax

    def sy(y):
        return height - pad - (height - 2 * pad) * (y - lo) / (ymax - lo)
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(xs, ys))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">'
            f'<polyline fill="none" stroke="grey" stroke-width="1.5" points="{path}"/>'
            f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
            f'stroke="black"/><line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" '
            f'stroke="black"/>'
            f'<text x="{width / 2}" y="{height - 8}" text-anchor="middle">Time (ms), '
            f'0 to {xmax:.3f}</text>'
            f'<text x="8" y="{pad - 12}">Memory (MiB), peak {ymax:.3f}</text></svg>')


def write_native(result_dir, path, device):
    """The number of `device`'s memory records after libaiprof wrote
    `path`, or None when the extension has no export_memory_timeline."""
    export = getattr(_C, "export_memory_timeline", None)
    if export is None:
        return None
    _output.make_dirs(os.path.dirname(os.path.abspath(path)))
    return export(result_dir, path, device)


def write(path, trace, device):
    device_type, index = parse_device(device)
    points = memory_points(trace, device_type, index)
    if path.endswith(".html"):
        with _output.open_output(path, "w") as f:
            f.write('<html><head><meta charset="utf-8" /><title>Memory Timeline HTML</title>'
                    f'</head><body><h3>Memory timeline ({device or "cpu"}), all bytes in the '
                    f'unknown category</h3>{_svg(points)}</body></html>')
    elif path.endswith(".json.gz"):
        data = _raw(points) if path.endswith("raw.json.gz") else _coalesced(points)
        with _output.open_output(path) as raw, gzip.open(raw, "wt") as f:
            json.dump(data, f)
    elif path.endswith(".json"):
        with _output.open_output(path, "w") as f:
            json.dump(_coalesced(points), f)
    else:
        raise ValueError(f"output_path must end in .html, .json, .json.gz or .raw.json.gz, "
                         f"got {path!r}")
    return len(points)
