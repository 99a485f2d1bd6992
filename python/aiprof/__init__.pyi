from . import mindspore as mindspore, mstx as mstx, npu as npu, profiler as profiler
from .mindspore import Profiler as Profiler

__version__: str
