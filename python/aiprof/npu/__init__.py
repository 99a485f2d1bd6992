"""aiprof.npu: the torch_npu.npu names the profiler seeds use.

mstx, and current_stream() for the seed's "range on the compute stream"
example.  Device management (set_device, real streams, ...) is
torch_npu's runtime, not a profiler's, and is not provided: this machine
has no NPU.
"""
from .. import mstx

__all__ = ["mstx", "current_stream"]


class _NoDeviceStream:
    """What current_stream() returns.  There is no NPU here, so there is
    no device stream: mstx accepts this as its `stream` argument, warns
    once that it is ignored, and records the host-side range or mark."""
    __slots__ = ()

    def __repr__(self):
        return "<aiprof.npu stream: none (no NPU; mstx records host-side ranges only)>"


_STREAM = _NoDeviceStream()


def current_stream(device=None):
    """torch_npu.npu.current_stream(): a placeholder for mstx's `stream`
    argument (`device` is accepted and ignored)."""
    return _STREAM
