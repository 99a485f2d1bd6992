from enum import Enum
from types import TracebackType
from typing import (Any, Callable, ContextManager, Dict, Iterable, List, Optional, Set, Type,
                    TypeVar, Union)

from . import dynamic_profile as dynamic_profile, itt as itt

_F = TypeVar("_F", bound=Callable[..., Any])

class ProfilerActivity(Enum):
    CPU: str
    NPU: str
    CUDA: str
    XPU: str
    MTIA: str

class ProfilerAction(Enum):
    NONE: int
    WARMUP: int
    RECORD: int
    RECORD_AND_SAVE: int
    DEVICE_STOPPED: int

class schedule:
    wait: int
    active: int
    warmup: int
    repeat: int
    skip_first: int
    def __init__(self, wait: int, active: int, warmup: int = ..., repeat: int = ...,
                 skip_first: int = ...) -> None: ...
    def __call__(self, step: int) -> ProfilerAction: ...

class ExportType:
    Text: str
    Db: str

class ProfilerLevel:
    Level_none: str
    Level0: str
    Level1: str
    Level2: str

class AiCMetrics:
    AiCoreNone: str
    PipeUtilization: str
    ArithmeticUtilization: str
    Memory: str
    MemoryL0: str
    ResourceConflictRatio: str
    MemoryUB: str
    L2Cache: str
    MemoryAccess: str

class HostSystem:
    CPU: str
    MEM: str
    DISK: str
    NETWORK: str
    OSRT: str

class _ExperimentalConfig:
    record_op_args: bool
    def __init__(self, export_type: Union[str, List[str], None] = ..., profiler_level: str = ...,
                 msprof_tx: bool = ..., aic_metrics: Optional[str] = ..., l2_cache: bool = ...,
                 op_attr: bool = ..., data_simplification: bool = ..., record_op_args: bool = ...,
                 gc_detect_threshold: Optional[float] = ..., *, mstx: bool = ...,
                 mstx_domain_include: Optional[List[str]] = ...,
                 mstx_domain_exclude: Optional[List[str]] = ...,
                 host_sys: Optional[List[str]] = ..., sys_io: bool = ...,
                 sys_interconnection: bool = ...) -> None: ...
    @property
    def export_type(self) -> List[str]: ...
    @property
    def profiler_level(self) -> str: ...
    @property
    def aic_metrics(self) -> str: ...
    @property
    def mstx(self) -> bool: ...
    @property
    def msprof_tx(self) -> bool: ...
    @property
    def with_gc(self) -> bool: ...
    @property
    def gc_detect_threshold(self) -> Optional[float]: ...
    @property
    def host_sys(self) -> List[str]: ...

def supported_activities() -> Set[ProfilerActivity]: ...
def supported_profiler_level() -> Set[str]: ...
def supported_ai_core_metrics() -> Set[str]: ...
def supported_export_type() -> Set[str]: ...

class Interval:
    start: float
    end: float
    def elapsed_us(self) -> float: ...

class FunctionEvent:
    id: int
    name: str
    key: str
    thread: int
    time_range: Interval
    input_shapes: Any
    stack: List[str]
    module_hierarchy: Optional[str]
    sequence_nr: int
    fwd_thread: int
    cpu_parent: Optional[FunctionEvent]
    cpu_children: List[FunctionEvent]
    cpu_memory_usage: int
    count: int
    @property
    def cpu_time_total(self) -> float: ...
    @property
    def self_cpu_time_total(self) -> float: ...
    @property
    def self_cpu_memory_usage(self) -> int: ...

class FunctionEventAvg:
    key: str
    count: int
    cpu_time_total: float
    self_cpu_time_total: float
    cpu_memory_usage: int
    self_cpu_memory_usage: int
    input_shapes: Any
    stack: List[str]
    @property
    def cpu_time(self) -> float: ...

class EventList(list):
    def key_averages(self, group_by_input_shape: bool = ..., group_by_stack_n: int = ...) -> EventList: ...
    def table(self, sort_by: Optional[str] = ..., row_limit: int = ..., max_src_column_width: int = ...,
              max_name_column_width: int = ..., max_shapes_column_width: int = ...,
              header: Optional[str] = ..., top_level_events_only: bool = ...) -> str: ...
    def total_average(self) -> FunctionEventAvg: ...
    @property
    def self_cpu_time_total(self) -> float: ...

class _ProfInterface:
    def analyse(self, async_mode: bool = ..., use_gzip: bool = ...,
                trace_format: str = ...) -> None: ...

# aiprof's (torch_npu's) _ExperimentalConfig, or torch.profiler's (Kineto's),
# which the stubs cannot name without importing torch.
_AnyExperimentalConfig = Union[_ExperimentalConfig, Any]

class _KinetoProfile:
    record_shapes: bool
    profile_memory: bool
    with_stack: bool
    with_flops: bool
    with_modules: bool
    experimental_config: _ExperimentalConfig
    prof_if: _ProfInterface
    def __init__(self, activities: Optional[Iterable[Any]] = ..., record_shapes: bool = ...,
                 profile_memory: bool = ..., with_stack: bool = ..., with_flops: bool = ...,
                 with_modules: bool = ...,
                 experimental_config: Optional[_AnyExperimentalConfig] = ...) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def __enter__(self: _P) -> _P: ...
    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool: ...
    def add_metadata(self, key: str, value: str) -> None: ...
    def add_metadata_json(self, key: str, value: str) -> None: ...
    def events(self) -> EventList: ...
    def key_averages(self, group_by_input_shape: bool = ..., group_by_stack_n: int = ...) -> EventList: ...
    def export_chrome_trace(self, path: str, trace_format: str = ...) -> None: ...
    def export_stacks(self, path: str, metric: str = ...) -> None: ...
    def export_memory_timeline(self, output_path: Optional[str] = ..., device: Optional[str] = ..., *,
                               path: Optional[str] = ...) -> None: ...

_P = TypeVar("_P", bound=_KinetoProfile)

def flight_dump(reason: Optional[str] = ...) -> str: ...
def flight_salvage(ring_dir: str, out_dir: str) -> str: ...

class profile(_KinetoProfile):
    def __init__(self, activities: Optional[Iterable[Any]] = ..., schedule: Optional[Callable[[int], Any]] = ...,
                 on_trace_ready: Optional[Callable[[profile], Any]] = ..., record_shapes: bool = ...,
                 profile_memory: bool = ..., with_stack: bool = ..., with_flops: bool = ...,
                 with_modules: bool = ..., experimental_config: Optional[_AnyExperimentalConfig] = ...,
                 use_cuda: Optional[bool] = ...,
                 flight_recorder: Union[None, float, Dict[str, Any]] = ...) -> None: ...
    def step(self) -> None: ...
    @property
    def step_num(self) -> int: ...
    @property
    def current_action(self) -> ProfilerAction: ...
    @staticmethod
    def enable_profiler_in_child_thread(record_shapes: bool = ..., profile_memory: bool = ...,
                                        with_stack: bool = ..., with_flops: bool = ...,
                                        with_modules: bool = ...) -> None: ...
    @staticmethod
    def disable_profiler_in_child_thread() -> None: ...

def tensorboard_trace_handler(dir_name: Optional[str] = ..., worker_name: Optional[str] = ...,
                              analyse_flag: bool = ..., async_mode: bool = ...,
                              use_gzip: bool = ..., *,
                              trace_format: str = ...) -> Callable[[profile], None]: ...
def analyse(profiler_path: str, max_process_number: Optional[int] = ...,
            export_type: Union[str, List[str], None] = ..., *,
            trace_format: str = ...) -> None: ...

class record_function(ContextManager[record_function]):
    name: str
    args: Optional[str]
    def __init__(self, name: str, args: Optional[str] = ...) -> None: ...
    def __call__(self, func: _F) -> _F: ...
    def __enter__(self) -> record_function: ...
    def __exit__(self, *exc: Any) -> bool: ...
