"""export_memory_timeline(): memory use over time, in torch's file formats.

libaiprof's aip_export_memory_timeline() (through aiprof._C) writes the
timeline with bytes sorted into torch's categories: it pairs allocations
with frees and the ops around them, and applies the framework's labels
(parameters, gradients, optimizer state: _memory_labels.py); docs/MEMORY.md.
The formats follow the output path's ending: .html, .json, .json.gz,
.raw.json.gz.  This module only checks the device name and hands over; the
extension is built with the package, so there is no second writer here.
"""
import os
import re

from .. import _C
from . import _output

_DEVICE_TYPES = {"cpu": _C.DEVICE_CPU, "cuda": _C.DEVICE_CUDA, "npu": _C.DEVICE_NPU}


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


def write(result_dir, path, device):
    """The number of `device`'s memory records after libaiprof wrote `path`."""
    _output.make_dirs(os.path.dirname(os.path.abspath(path)))
    return _C.export_memory_timeline(result_dir, path, device)
