"""_ExperimentalConfig and its value classes, as torch_npu.profiler spells them.

Every parameter of the seed is accepted and recorded (profiler_info.json
shows it).  Most of them steer Ascend device collection (AI Core metrics,
L2 cache, op attributes, NIC/PCIe counters); this machine has no such
device, so they change nothing in the data — profile() says so once when
a trace starts, rather than pretending.

torch.profiler's own _ExperimentalConfig (Kineto's options) is accepted
too, so a torch.profiler script runs unchanged: from_torch_config() maps
the fields aiprof has a meaning for and names the others in one warning.
"""
import numbers
import warnings

from .. import _C
from ._validate import check_bool, check_str_list

__all__ = ["_ExperimentalConfig", "ExportType", "ProfilerLevel", "AiCMetrics", "HostSystem",
           "supported_profiler_level", "supported_ai_core_metrics", "supported_export_type"]


class ExportType:
    Text = "text"
    Db = "db"


class ProfilerLevel:
    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class AiCMetrics:
    AiCoreNone = "ACL_AICORE_NONE"
    PipeUtilization = "ACL_AICORE_PIPE_UTILIZATION"
    ArithmeticUtilization = "ACL_AICORE_ARITHMETIC_UTILIZATION"
    Memory = "ACL_AICORE_MEMORY_BANDWIDTH"
    MemoryL0 = "ACL_AICORE_L0B_AND_WIDTH"
    ResourceConflictRatio = "ACL_AICORE_RESOURCE_CONFLICT_RATIO"
    MemoryUB = "ACL_AICORE_MEMORY_UB"
    L2Cache = "ACL_AICORE_L2_CACHE"
    MemoryAccess = "ACL_AICORE_MEMORY_ACCESS"


class HostSystem:
    CPU = "cpu"
    MEM = "mem"
    DISK = "disk"
    NETWORK = "network"
    OSRT = "osrt"


# The numbering of aiprof.h (aip_profiler_level, aip_aic_metrics, bit flags),
# from the headers through _C (python/_C/constants.c).
_LEVEL_CODE = {ProfilerLevel.Level_none: _C.LEVEL_NONE, ProfilerLevel.Level0: _C.LEVEL0,
               ProfilerLevel.Level1: _C.LEVEL1, ProfilerLevel.Level2: _C.LEVEL2}
_AIC_CODE = {AiCMetrics.AiCoreNone: _C.AIC_NONE, AiCMetrics.PipeUtilization: _C.AIC_PIPE_UTILIZATION,
             AiCMetrics.ArithmeticUtilization: _C.AIC_ARITHMETIC_UTILIZATION,
             AiCMetrics.Memory: _C.AIC_MEMORY, AiCMetrics.MemoryL0: _C.AIC_MEMORY_L0,
             AiCMetrics.ResourceConflictRatio: _C.AIC_RESOURCE_CONFLICT_RATIO,
             AiCMetrics.MemoryUB: _C.AIC_MEMORY_UB, AiCMetrics.L2Cache: _C.AIC_L2_CACHE,
             AiCMetrics.MemoryAccess: _C.AIC_MEMORY_ACCESS}
_EXPORT_BIT = {ExportType.Text: _C.EXPORT_TEXT, ExportType.Db: _C.EXPORT_DB}
_HOST_BIT = {HostSystem.CPU: _C.HOST_SYS_CPU, HostSystem.MEM: _C.HOST_SYS_MEM,
             HostSystem.DISK: _C.HOST_SYS_DISK, HostSystem.NETWORK: _C.HOST_SYS_NETWORK,
             HostSystem.OSRT: _C.HOST_SYS_OSRT}


# aip_config_init's values of the fields _session_kwargs sets (aic_metrics
# has none: Python always names one, the C default AIP_AIC_DEFAULT means
# "by level").
_C_DEFAULTS = {"export_type": _C.EXPORT_TEXT, "profiler_level": _C.LEVEL0, "l2_cache": False, "op_attr": False,
               "data_simplification": True, "record_op_args": False, "mstx": False,
               "gc_detect_threshold_ms": -1.0, "host_sys": 0, "mstx_domain_include": None,
               "mstx_domain_exclude": None, "sys_io": False, "sys_interconnection": False}


def supported_profiler_level():
    """The levels that mean something on this machine: every one.  Level0
    is the host data (and a device back end's kernels and copies);
    Level_none the same, turning mstx on, as in torch_npu; Level1 and
    Level2 add api_statistic.csv (the framework's ops and mstx ranges, and
    a device back end's runtime calls such as clEnqueueNDRangeKernel).  The
    Ascend layers those two levels also ask for (AscendCL, HCCL, AI Core
    metrics, AI CPU) need an Ascend device: a warning names them as not
    collected when a trace starts."""
    return {ProfilerLevel.Level_none, ProfilerLevel.Level0, ProfilerLevel.Level1,
            ProfilerLevel.Level2}


def supported_ai_core_metrics():
    """AI Core metrics need an Ascend NPU: none can be collected here."""
    return set()


def supported_export_type():
    """Formats the analyser writes: the text files (trace_view.json, CSVs;
    with the databases, as torch_npu's Text) and the databases alone (Db)."""
    return {ExportType.Text, ExportType.Db}


def _known_export_bits(value):
    """(aip_export_type bits of the valid entries of `value`, the invalid entries)."""
    items = value if isinstance(value, (list, tuple, set)) else [value]
    bits, invalid = 0, []
    for item in items:
        if isinstance(item, str) and item in _EXPORT_BIT:
            bits |= _EXPORT_BIT[item]
        else:
            invalid.append(item)
    return bits, invalid


def _export_bits(value):
    """Seed: an invalid export_type falls back to Text (with a warning)."""
    bits, invalid = _known_export_bits(value)
    for item in invalid:
        warnings.warn(f"export_type {item!r} is not ExportType.Text or ExportType.Db; "
                      "using ExportType.Text", stacklevel=3)
    return bits or _EXPORT_BIT[ExportType.Text]


_DEFAULT_STATE = {}  # _ExperimentalConfig()'s attributes, once one is made
_SHARED_DEFAULT = None  # _ExperimentalConfig._shared_default()


class _ExperimentalConfig:
    """torch_npu.profiler._ExperimentalConfig(export_type=[ExportType.Text],
    profiler_level=ProfilerLevel.Level0, msprof_tx=False,
    aic_metrics=AiCMetrics.AiCoreNone, l2_cache=False, op_attr=False,
    data_simplification=True, record_op_args=False, gc_detect_threshold=None,
    *, mstx=False, mstx_domain_include=None, mstx_domain_exclude=None,
    host_sys=None, sys_io=False, sys_interconnection=False)"""

    def __init__(self, export_type=None, profiler_level=ProfilerLevel.Level0, msprof_tx=False,
                 aic_metrics=None, l2_cache=False, op_attr=False, data_simplification=True,
                 record_op_args=False, gc_detect_threshold=None, *, mstx=False,
                 mstx_domain_include=None, mstx_domain_exclude=None, host_sys=None,
                 sys_io=False, sys_interconnection=False):
        if (export_type is None and profiler_level is ProfilerLevel.Level0
                and msprof_tx is False and aic_metrics is None and l2_cache is False
                and op_attr is False and data_simplification is True
                and record_op_args is False and gc_detect_threshold is None and mstx is False
                and mstx_domain_include is None and mstx_domain_exclude is None
                and host_sys is None and sys_io is False and sys_interconnection is False):
            # The default config: a copy of the first one's state (a short
            # profile's cost includes it).
            if _DEFAULT_STATE:
                self._copy_default()
                return
            remember = True
        else:
            remember = False
        self._export_bits = _export_bits(ExportType.Text if export_type is None else export_type)
        self._export_type = [t for t, b in _EXPORT_BIT.items() if self._export_bits & b]
        if profiler_level not in _LEVEL_CODE:
            raise ValueError(f"profiler_level must be one of ProfilerLevel.Level_none, Level0, "
                             f"Level1, Level2; got {profiler_level!r}")
        self._profiler_level = profiler_level
        if aic_metrics is None:
            aic_metrics = (AiCMetrics.PipeUtilization
                           if profiler_level in (ProfilerLevel.Level1, ProfilerLevel.Level2)
                           else AiCMetrics.AiCoreNone)
        elif aic_metrics not in _AIC_CODE:
            raise ValueError(f"aic_metrics must be an AiCMetrics value, got {aic_metrics!r}")
        elif (profiler_level in (ProfilerLevel.Level0, ProfilerLevel.Level_none)
              and aic_metrics != AiCMetrics.AiCoreNone):
            warnings.warn("aic_metrics needs profiler_level Level1 or Level2; "
                          "reset to AiCMetrics.AiCoreNone", stacklevel=2)
            aic_metrics = AiCMetrics.AiCoreNone
        self._aic_metrics = aic_metrics
        self._l2_cache = check_bool("l2_cache", l2_cache)
        self._op_attr = check_bool("op_attr", op_attr)
        self._data_simplification = check_bool("data_simplification", data_simplification)
        self.record_op_args = check_bool("record_op_args", record_op_args)
        # msprof_tx is the old name of mstx; either turns it on.
        self._mstx = check_bool("mstx", mstx) | check_bool("msprof_tx", msprof_tx)
        if profiler_level == ProfilerLevel.Level_none:
            self._mstx = True
        if gc_detect_threshold is not None:
            if isinstance(gc_detect_threshold, bool) or \
                    not isinstance(gc_detect_threshold, numbers.Real):
                raise TypeError("gc_detect_threshold must be a number (ms) or None, got "
                                f"{type(gc_detect_threshold).__name__}")
            if not gc_detect_threshold >= 0:
                raise ValueError(f"gc_detect_threshold must be >= 0 ms, got {gc_detect_threshold}")
            gc_detect_threshold = float(gc_detect_threshold)
        self._gc_detect_threshold = gc_detect_threshold
        self._mstx_domain_include = check_str_list("mstx_domain_include", mstx_domain_include)
        self._mstx_domain_exclude = check_str_list("mstx_domain_exclude", mstx_domain_exclude)
        if self._mstx_domain_include and self._mstx_domain_exclude:
            warnings.warn("mstx_domain_include and mstx_domain_exclude are both set; only "
                          "mstx_domain_include is used", stacklevel=2)
            self._mstx_domain_exclude = []
        if (self._mstx_domain_include or self._mstx_domain_exclude) and not self._mstx:
            # Seed: both need mstx=True.  Kept (profiler_info.json records them).
            which = "mstx_domain_include" if self._mstx_domain_include else "mstx_domain_exclude"
            warnings.warn(f"{which} has no effect without mstx=True: no mstx data is "
                          "recorded", stacklevel=2)
        hosts = check_str_list("host_sys", host_sys)
        for h in hosts:
            if h not in _HOST_BIT:
                raise ValueError(f"host_sys entries must be HostSystem values, got {h!r}")
        self._host_sys = hosts
        self._sys_io = check_bool("sys_io", sys_io)
        self._sys_interconnection = check_bool("sys_interconnection", sys_interconnection)
        # Made once: every start() hands them to the session, and says what
        # is not collected (these fields do not change after __init__).
        self._start_kwargs = {k: v for k, v in self._session_kwargs().items()
                              if k == "aic_metrics" or _C_DEFAULTS.get(k, v) != v}
        self._all_collected = not self._not_collected()
        if remember:
            _DEFAULT_STATE.update(self.__dict__)

    def _copy_default(self):
        """This config becomes a copy of the default one's state (its list
        and dict copied too: a profile may change its own)."""
        self.__dict__.update(_DEFAULT_STATE)
        self._export_type = list(self._export_type)
        self._start_kwargs = dict(self._start_kwargs)

    @classmethod
    def _default(cls):
        """_ExperimentalConfig() for a profile given none, without binding
        and comparing fifteen arguments once the default state is known."""
        if not _DEFAULT_STATE:
            return cls()
        self = cls.__new__(cls)
        self._copy_default()
        return self

    @classmethod
    def _shared_default(cls):
        """One default config, read (never changed) by every profile that
        was given none and whose own copy nobody asked for."""
        global _SHARED_DEFAULT
        if _SHARED_DEFAULT is None:
            _SHARED_DEFAULT = cls()
        return _SHARED_DEFAULT

    # torch_npu exposes these as properties.
    @property
    def export_type(self):
        return list(self._export_type)

    @property
    def profiler_level(self):
        return self._profiler_level

    @property
    def aic_metrics(self):
        return self._aic_metrics

    @property
    def mstx(self):
        return self._mstx

    msprof_tx = mstx

    @property
    def with_gc(self):
        return self._gc_detect_threshold is not None

    @property
    def gc_detect_threshold(self):
        return self._gc_detect_threshold

    @property
    def host_sys(self):
        return list(self._host_sys)

    def _session_kwargs(self):
        """The aip_config fields this config sets (aiprof._C.Session)."""
        host_bits = 0
        for h in self._host_sys:
            host_bits |= _HOST_BIT[h]
        return dict(
            export_type=self._export_bits,
            profiler_level=_LEVEL_CODE[self._profiler_level],
            aic_metrics=_AIC_CODE[self._aic_metrics],
            l2_cache=self._l2_cache, op_attr=self._op_attr,
            data_simplification=self._data_simplification,
            record_op_args=self.record_op_args, mstx=self._mstx,
            gc_detect_threshold_ms=(-1.0 if self._gc_detect_threshold is None
                                    else self._gc_detect_threshold),
            host_sys=host_bits,
            mstx_domain_include=self._mstx_domain_include or None,
            mstx_domain_exclude=self._mstx_domain_exclude or None,
            sys_io=self._sys_io, sys_interconnection=self._sys_interconnection)

    def _start_session_kwargs(self):
        """_session_kwargs() less what equals aip_config_init's defaults
        (fewer keywords for _C.Session to parse at start()); record_op_args
        is read now: it is a plain attribute a script may set."""
        if not self.record_op_args:
            return self._start_kwargs
        return {**self._start_kwargs, "record_op_args": True}

    def _not_collected(self):
        """Switches that ask for data this machine cannot give."""
        off = []
        if self._profiler_level in (ProfilerLevel.Level1, ProfilerLevel.Level2):
            off.append(f"profiler_level={self._profiler_level}'s Ascend layers (AscendCL, HCCL, "
                       "AI Core, AI CPU; its api_statistic.csv, communication.json and "
                       "communication_matrix.json are written)")
        if self._aic_metrics != AiCMetrics.AiCoreNone:
            off.append(f"aic_metrics={self._aic_metrics}")
        # record_op_args is not here: its directory is written, from host
        # data (_op_args_note says what it holds).
        # host_sys CPU/MEM/DISK/NETWORK and sys_io are sampled from /proc
        # and /sys (docs/HOST_SYS.md), OSRT intercepted (docs/OSRT.md).
        for name in ("l2_cache", "op_attr", "sys_interconnection"):
            if getattr(self, "_" + name):
                off.append(name)
        return off

    def _op_args_note(self, record_shapes):
        """What record_op_args gives here, or None when it is off.  torch_npu
        has ACL dump the arguments of the device ops for the AOE tuner; with no
        device, the analyser writes the host-side signature of every framework
        op instead (src/result/op_args.c)."""
        if not self.record_op_args:
            return None
        note = ("record_op_args: no Ascend device, so there is no ACL dump of device op "
                "arguments for AOE; {result_dir}_op_args/op_args.csv is written at analysis "
                "with each framework op's host-side Name, Input Shapes, Input Data Types "
                "and Count")
        if not record_shapes:
            note += "; with record_shapes=False its Input Shapes and Input Data Types " \
                    "cells are empty"
        return note

    def __repr__(self):
        return (f"_ExperimentalConfig(export_type={self._export_type}, "
                f"profiler_level={self._profiler_level!r}, aic_metrics={self._aic_metrics!r}, "
                f"mstx={self._mstx}, gc_detect_threshold={self._gc_detect_threshold})")


# torch.profiler._ExperimentalConfig's pickled state, by position: torch
# 1.13 has the first three, torch 2.13 all fourteen (torch/csrc/profiler/
# python/init.cpp; newer fields are appended).  Its fields are not readable
# as attributes, so __getstate__ is the one portable way to see them.
_TORCH_FIELDS = ("profiler_metrics", "profiler_measure_per_kernel", "verbose",
                 "performance_events", "enable_cuda_sync_events", "adjust_profiler_step",
                 "disable_external_correlation", "profile_all_threads",
                 "capture_overload_names", "record_python_gc_info",
                 "expose_kineto_event_metadata", "custom_profiler_config",
                 "adjust_timestamps", "trace_only")

# Fields whose every value aiprof already does, so never named:
# disable_external_correlation — aiprof never pushes external correlation
# ids to CUPTI (the CUDA back end links a kernel to its op through the
# launching call, docs/CUDA.md); profile_all_threads — aiprof's
# RecordFunction callback is global, so threads started before the
# profiler are recorded too; trace_only — export_chrome_trace() works,
# and events() still does.
_HONOURED = {"disable_external_correlation", "profile_all_threads", "trace_only"}

# Why each field aiprof cannot honour is ignored (the warning says it).
_WHY = {"profiler_metrics": "CUPTI profiler metrics are not collected",
        "profiler_measure_per_kernel": "CUPTI profiler metrics are not collected",
        "performance_events": "no per-op CPU performance counters",
        "enable_cuda_sync_events": "CUDA synchronisation records are not collected",
        "adjust_profiler_step": "ProfilerStep#N ranges keep their recorded times",
        "capture_overload_names": "op names are recorded without the overload",
        "expose_kineto_event_metadata": "events() has no Kineto metadata_json",
        "custom_profiler_config": "no PrivateUse1/custom profiler back end",
        "adjust_timestamps": "no Vulkan events"}


def is_torch_config(value):
    """True for an instance of torch.profiler._ExperimentalConfig (checked by
    its type, so torch need not be imported here)."""
    t = type(value)
    return t.__name__ == "_ExperimentalConfig" and t.__module__.startswith("torch")


def from_torch_config(value, with_stack=False):
    """(the aiprof _ExperimentalConfig doing what `value` asks where this
    machine can, the names of the fields set that it cannot honour, each
    with the reason).

    What aiprof understands: profile_all_threads, disable_external_correlation
    and trace_only (what aiprof does anyway, _HONOURED), record_python_gc_info
    (GC passes, as gc_detect_threshold=0 records every one) and verbose=True
    (the trace has "Call stack" whenever with_stack=True).  A field left at
    torch's default asks for nothing and is not named."""
    try:
        state = tuple(value.__getstate__())
    except Exception as e:  # a torch whose config cannot be read: say so, run on
        return _ExperimentalConfig(), [f"(its fields could not be read: {e})"]
    unsupported = []
    gc_threshold = None
    for i, v in enumerate(state):
        name = _TORCH_FIELDS[i] if i < len(_TORCH_FIELDS) else f"field #{i} (newer torch)"
        if name == "verbose":
            # Kineto writes "Call stack" only with verbose; aiprof always does
            # with with_stack, so only verbose=False with with_stack differs.
            if not v and with_stack:
                unsupported.append("verbose=False (Call stack is still written)")
        elif name in _HONOURED:
            pass
        elif name == "record_python_gc_info":
            if v:
                gc_threshold = 0.0
        elif v:  # a non-default value: an empty list/string or False is torch's default
            why = _WHY.get(name)
            unsupported.append(f"{name}={_torch_value(v)}" + (f" ({why})" if why else ""))
    return _ExperimentalConfig(gc_detect_threshold=gc_threshold), unsupported


def _torch_value(v):
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)
                               for x in v) + "]"
    return repr(v)
