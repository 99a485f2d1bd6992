"""ProfilerActivity and supported_activities()."""
from enum import Enum

__all__ = ["ProfilerActivity", "supported_activities"]


class ProfilerActivity(Enum):
    """What to record: CPU (framework ops, annotations, memory, Python
    stacks) and the device kinds.  NPU, CUDA, XPU and MTIA are accepted so
    scripts written for torch_npu or torch run unchanged; this machine has
    no device back end, which supported_activities() tells."""
    CPU = "CPU"
    NPU = "NPU"
    CUDA = "CUDA"
    XPU = "XPU"
    MTIA = "MTIA"


# aiprof.h aip_activity bits; XPU and MTIA have none in libaiprof (the
# bits above C_BITS stay in Python, for the warning).
_BITS = {ProfilerActivity.CPU: 1, ProfilerActivity.NPU: 2, ProfilerActivity.CUDA: 4,
         ProfilerActivity.XPU: 8, ProfilerActivity.MTIA: 16}
C_BITS = 7


def supported_activities():
    """The activities this machine really records: CPU only (no NPU, CUDA,
    XPU or MTIA back end is built into aiprof yet)."""
    return {ProfilerActivity.CPU}


def device_names(bits):
    """The device kinds in `bits`, in ProfilerActivity order."""
    return [a.name for a, b in _BITS.items() if b & bits and a is not ProfilerActivity.CPU]


def activity_bits(activities):
    """Activity bits for `activities` (an iterable of ProfilerActivity, or
    of torch.profiler.ProfilerActivity members, matched by name); `& C_BITS`
    gives libaiprof's aip_activity bits."""
    if activities is None:
        return _BITS[ProfilerActivity.CPU] | _BITS[ProfilerActivity.NPU]
    if isinstance(activities, (str, bytes)) or not hasattr(activities, "__iter__"):
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
        bits |= _BITS[a]
    if not bits:
        raise ValueError("activities must name at least one ProfilerActivity")
    return bits
