"""ProfilerActivity and supported_activities()."""
from enum import Enum

from .. import _C

__all__ = ["ProfilerActivity", "supported_activities"]


class ProfilerActivity(Enum):
    """What to record: CPU (framework ops, annotations, memory, Python
    stacks) and the device kinds.  NPU, CUDA and XPU each select device
    collection (every device back end built into libaiprof: OpenCL, CUDA
    where its headers were found at build time); MTIA is
    accepted so scripts written for torch run unchanged, and records
    nothing.  supported_activities() tells what this machine really
    records."""
    CPU = "CPU"
    NPU = "NPU"
    CUDA = "CUDA"
    XPU = "XPU"
    MTIA = "MTIA"


# aiprof.h aip_activity bits (from _C); MTIA has none in libaiprof: its
# bit, above C_BITS, stays in Python, for the warning.
C_BITS = _C.ACTIVITY_CPU | _C.ACTIVITY_NPU | _C.ACTIVITY_CUDA | _C.ACTIVITY_XPU
_BITS = {ProfilerActivity.CPU: _C.ACTIVITY_CPU, ProfilerActivity.NPU: _C.ACTIVITY_NPU,
         ProfilerActivity.CUDA: _C.ACTIVITY_CUDA, ProfilerActivity.XPU: _C.ACTIVITY_XPU,
         ProfilerActivity.MTIA: (C_BITS + 1)}
# By identity: an Enum member hashes in Python (Enum.__hash__), and
# activity_bits runs in every profile(...).
_BIT_OF = {id(a): b for a, b in _BITS.items()}
DEVICE_BITS = _C.ACTIVITY_DEVICES  # NPU, CUDA, XPU


def device_status():
    """(activity bits this process records now, the device back ends' own
    words on why there is or is not device data): aip_device_status(),
    asked again at each call; it loads no device runtime, so a host-only
    program is not made to load OpenCL by profiling it."""
    return _C.device_status()


def supported_activities():
    """The activities this machine really records: CPU always; NPU when a
    device back end finds a device (CUDA as well when that back end is
    CUDA's), as torch_npu.profiler.supported_activities() reports NPU only
    where an NPU is.  The first call may load the device runtime (OpenCL)
    to ask it."""
    bits = _C.supported_activities()
    return {a for a, b in _BITS.items() if b & bits}


def cuda_driver_note():
    """For a CUDA request that gets nothing: a sentence when this machine
    has no CUDA driver at all, the usual reason on a machine without a GPU
    ("" when one is installed).  Asked of the loader's cache
    (ctypes.util.find_library, which runs ldconfig -p): nothing is loaded
    into this process."""
    import ctypes.util
    if ctypes.util.find_library("cuda"):
        return ""
    return ("this machine has no CUDA driver (libcuda.so.1 is not installed), so no GPU "
            "activity can be recorded here")


def device_names(bits):
    """The device kinds in `bits`, in ProfilerActivity order."""
    return [a.name for a, b in _BITS.items() if b & bits and a is not ProfilerActivity.CPU]


def activity_bits(activities):
    """Activity bits for `activities` (an iterable of ProfilerActivity, or
    of torch.profiler.ProfilerActivity members, matched by name); `& C_BITS`
    gives libaiprof's aip_activity bits."""
    if activities is None:
        return _BITS[ProfilerActivity.CPU] | _BITS[ProfilerActivity.NPU]
    if type(activities) is not list and (isinstance(activities, (str, bytes))
                                         or not hasattr(activities, "__iter__")):
        raise TypeError("activities must be a list of ProfilerActivity, got "
                        f"{type(activities).__name__}")
    bits = 0
    for a in activities:
        if not isinstance(a, ProfilerActivity):
            name = getattr(a, "name", None)
            if not isinstance(name, str) or name not in ProfilerActivity.__members__:
                raise ValueError(f"activities: {a!r} is not a ProfilerActivity "
                                 f"({', '.join(ProfilerActivity.__members__)})")
            a = ProfilerActivity[name]
        bits |= _BIT_OF[id(a)]
    if not bits:
        raise ValueError("activities must name at least one ProfilerActivity")
    return bits
