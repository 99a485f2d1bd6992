"""aiprof.npu: the torch_npu.npu names the profiler seeds use.

Only mstx lives here; device management (set_device, streams, ...) is
torch_npu's runtime, not a profiler's, and is not provided.
"""
from .. import mstx

__all__ = ["mstx"]
