"""aiprof — a profiler for AI training, drop-in for torch_npu.profiler.

A script written for torch_npu.profiler runs by changing only the import:

    import aiprof as torch_npu
    torch_npu.profiler.profile(...), torch_npu.npu.mstx.mark(...),
    from aiprof.profiler.profiler import analyse

Recording is done by libaiprof (C); PyTorch ops are captured by a small C++
adapter loaded once torch is imported.  See docs/PYTHON.md.
"""
from . import _C

# Traces show this process as "Python", as torch's do.
_C.set_process_name("Python")

from . import mstx, npu, profiler  # noqa: E402  (after the process name)

__version__ = _C.version()
__all__ = ["profiler", "mstx", "npu", "__version__"]
