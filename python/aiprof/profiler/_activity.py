"""ProfilerActivity and supported_activities()."""
from enum import Enum

__all__ = ["ProfilerActivity", "supported_activities"]


class ProfilerActivity(Enum):
    """What to record: CPU (framework ops, annotations, memory, Python
    stacks) and the device kinds.  NPU and CUDA are accepted so scripts
    written for torch_npu or torch run unchanged; this machine has no device
    back end, which supported_activities() tells."""
    CPU = "CPU"
    NPU = "NPU"
    CUDA = "CUDA"


# aiprof.h aip_activity bits.
_BITS = {ProfilerActivity.CPU: 1, ProfilerActivity.NPU: 2, ProfilerActivity.CUDA: 4}


def supported_activities():
    """The activities this machine really records: CPU only (no NPU or CUDA
    back end is built into aiprof yet)."""
    return {ProfilerActivity.CPU}


def activity_bits(activities):
    """aip_activity bits for `activities` (an iterable of ProfilerActivity,
    or of torch.profiler.ProfilerActivity members, matched by name)."""
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
                raise ValueError(f"activities: {a!r} is not a ProfilerActivity (CPU, NPU, CUDA)")
            a = ProfilerActivity[name]
        bits |= _BITS[a]
    if not bits:
        raise ValueError("activities must name at least one ProfilerActivity")
    return bits
