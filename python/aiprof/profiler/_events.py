"""FunctionEvent, FunctionEventAvg and EventList — torch's result objects.

Times are in microseconds, as in torch.autograd.profiler_util.  Events come
from a finished trace (_results.py); there is no device time on this
machine, so every device field is 0.
"""
from collections import defaultdict

from ._table import build_table, format_time

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList", "Interval"]

# Names torch leaves out of its results (profiler_util._filter_name): the
# record_function plumbing and tiny bookkeeping ops.
FILTERED_NAMES = frozenset((
    "[OutOfMemory]", "profiler::_record_function_enter", "profiler::_record_function_enter_new",
    "profiler::_record_function_exit", "aten::is_leaf", "aten::output_nr", "aten::_version"))

MEMORY_EVENT_NAME = "[memory]"


def rewrite_name(name):
    """The key torch groups by: every ProfilerStep#N counts as ProfilerStep*."""
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


class Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start}, end={self.end})"


class _TimeStrings:
    """The *_str properties torch's objects have."""
    @property
    def cpu_time_str(self):
        return format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return format_time(self.self_cpu_time_total)

    @property
    def cuda_time_str(self):
        return format_time(0.0)

    cuda_time_total_str = self_cuda_time_total_str = cuda_time_str
    device_time_str = device_time_total_str = self_device_time_total_str = cuda_time_str

    # No device: these are 0, as in torch for CPU-only traces.
    cuda_time = cuda_time_total = self_cuda_time_total = 0.0
    device_time = device_time_total = self_device_time_total = 0.0
    npu_time = npu_time_total = self_npu_time_total = 0.0
    cuda_memory_usage = self_cuda_memory_usage = 0
    flops = 0
    node_id = -1
    is_legacy = False


class FunctionEvent(_TimeStrings):
    """One op or annotation of a trace."""

    def __init__(self, id, name, thread, start_us, end_us, category="cpu_op", input_shapes=None,
                 input_types=None, stack=None, module_hierarchy=None, sequence_nr=-1,
                 fwd_thread=0, cpu_memory_usage=0, flops=0):
        self.id = id
        self.name = name
        self.trace_name = name
        self.key = rewrite_name(name)
        self.category = category
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_types = input_types
        self.stack = stack if stack is not None else []
        self.module_hierarchy = module_hierarchy
        self.sequence_nr = sequence_nr
        self.fwd_thread = fwd_thread
        self.cpu_memory_usage = cpu_memory_usage
        self.flops = flops
        self.cpu_parent = None
        self.cpu_children = []
        self.is_async = False
        self.is_remote = False
        self.count = 1
        self.scope = 7 if category == "user_annotation" else 0  # RecordScope numbers
        self.device_type = "CPU"
        self.device_index = 0
        self.kernels = []
        self._self_us = None    # set by the trace reader, else derived
        self._self_mem = None

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def self_cpu_time_total(self):
        if self._self_us is not None:
            return self._self_us
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        if self._self_mem is not None:
            return self._self_mem
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes} stack={self.stack[:1]}>")


class FunctionEventAvg(_TimeStrings):
    """Events of one key, summed."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.flops = 0
        self.input_shapes = None
        self.stack = None
        self.scope = None
        self.cpu_parent = None
        self.is_async = False
        self.is_remote = False
        self.device_type = "CPU"

    def add(self, evt):
        if self.key is None:
            self.key = evt.key
            self.input_shapes = evt.input_shapes
            self.stack = evt.stack
            self.scope = evt.scope
            self.cpu_parent = evt.cpu_parent
        self.count += evt.count
        self.cpu_time_total += evt.cpu_time_total
        self.self_cpu_time_total += evt.self_cpu_time_total
        self.cpu_memory_usage += evt.cpu_memory_usage
        self.self_cpu_memory_usage += evt.self_cpu_memory_usage
        self.flops += evt.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} count={self.count} "
                f"input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with torch's helpers."""

    def __init__(self, *args, profile_memory=False, with_stack=False, with_flops=False,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory
        self._with_stack = with_stack
        self._with_flops = with_flops

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        if not isinstance(group_by_input_shape, bool):
            raise TypeError("group_by_input_shape must be a bool")
        if isinstance(group_by_stack_n, bool) or not isinstance(group_by_stack_n, int):
            raise TypeError("group_by_stack_n must be an int")
        if group_by_stack_n < 0:
            raise ValueError("group_by_stack_n must be >= 0")
        groups = defaultdict(FunctionEventAvg)
        for e in self:
            key = [e.key]
            if group_by_input_shape:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key += e.stack[:group_by_stack_n]
            groups[tuple(key)].add(e)
        out = EventList(groups.values(), profile_memory=self._profile_memory,
                        with_stack=self._with_stack, with_flops=self._with_flops)
        for avg in out:
            avg.stack = avg.stack[:group_by_stack_n]
        if not group_by_input_shape:
            for avg in out:
                avg.input_shapes = []
        return out

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return build_table(self, sort_by=sort_by, row_limit=row_limit,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           profile_memory=self._profile_memory,
                           top_level_events_only=top_level_events_only,
                           with_flops=self._with_flops)

    def __str__(self):
        return self.table()
