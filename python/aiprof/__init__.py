"""aiprof — a profiler for AI training, drop-in for torch_npu.profiler.

A script written for torch_npu.profiler runs by changing only the import:

    import aiprof as torch_npu
    torch_npu.profiler.profile(...), torch_npu.npu.mstx.mark(...),
    from aiprof.profiler.profiler import analyse

and one written for MindSpore 2.2's profiler the same way:

    import aiprof as mindspore
    profiler = mindspore.Profiler(output_path="./data"); ...; profiler.analyse()

Recording is done by libaiprof (C); PyTorch ops are captured by a small C++
adapter loaded once torch is imported.  See docs/PYTHON.md.
"""
import os as _os
import sys as _sys

# libaiprof (loaded by _C) defines the OpenCL entry points that record
# device activity (docs/OPENCL.md).  Loaded RTLD_GLOBAL, it comes before
# libOpenCL for every library loaded afterwards, so pyopencl imported after
# aiprof calls OpenCL through it.  pyopencl imported before is bound to
# libOpenCL already (BIND_NOW): its device activity needs `aiprof run`.
_flags = _sys.getdlopenflags()
_sys.setdlopenflags(_flags | _os.RTLD_GLOBAL)
try:
    from . import _C
finally:
    _sys.setdlopenflags(_flags)
if "pyopencl._cl" in _sys.modules:
    import warnings as _warnings
    _warnings.warn("pyopencl was imported before aiprof: its OpenCL calls are not profiled; "
                   "import aiprof first, or run the script with `aiprof run`",
                   RuntimeWarning, stacklevel=2)

# Traces show this process as "Python", as torch's do.
_C.set_process_name("Python")

from . import mstx, npu, profiler  # noqa: E402  (after the process name)
from . import mindspore  # noqa: E402
from .mindspore import Profiler  # noqa: E402  (mindspore.Profiler by import swap)

__version__ = _C.version()
__all__ = ["profiler", "mstx", "npu", "mindspore", "Profiler", "__version__"]
