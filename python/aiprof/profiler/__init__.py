"""aiprof.profiler: torch_npu.profiler's API (and torch.profiler's) on libaiprof.

    import aiprof as torch_npu
    with torch_npu.profiler.profile(
            schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./result")) as prof:
        for step in range(steps):
            train_one_step()
            prof.step()
"""
from . import dynamic_profile, itt
from ._activity import ProfilerActivity, supported_activities
from ._events import EventList, FunctionEvent, FunctionEventAvg
from ._flight import flight_dump, flight_salvage
from ._record_function import record_function
from .experimental_config import (AiCMetrics, ExportType, HostSystem, ProfilerLevel,
                                  _ExperimentalConfig, supported_ai_core_metrics,
                                  supported_export_type, supported_profiler_level)
from .profiler import _KinetoProfile, analyse, profile, tensorboard_trace_handler
from .scheduler import ProfilerAction, schedule

__all__ = [
    "profile", "_KinetoProfile", "ProfilerActivity", "ProfilerAction", "schedule",
    "tensorboard_trace_handler", "_ExperimentalConfig", "ExportType", "ProfilerLevel",
    "AiCMetrics", "HostSystem", "supported_activities", "supported_profiler_level",
    "supported_ai_core_metrics", "supported_export_type", "record_function", "itt",
    "analyse", "dynamic_profile", "EventList", "FunctionEvent", "FunctionEventAvg",
    "flight_dump", "flight_salvage",
]
