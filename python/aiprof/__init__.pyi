from . import mstx as mstx, npu as npu, profiler as profiler

__version__: str
