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
from . import _C

# Traces show this process as "Python", as torch's do.
_C.set_process_name("Python")

from . import mstx, npu, profiler  # noqa: E402  (after the process name)
from . import mindspore  # noqa: E402
from .mindspore import Profiler  # noqa: E402  (mindspore.Profiler by import swap)

__version__ = _C.version()
__all__ = ["profiler", "mstx", "npu", "mindspore", "Profiler", "__version__"]
