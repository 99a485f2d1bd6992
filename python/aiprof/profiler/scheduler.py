"""ProfilerAction and schedule(), torch.profiler / torch_npu.profiler style.

The step → action rule lives in libaiprof (aip_schedule_action); a
schedule object only carries the five numbers, which the C session uses to
drive traces, and asks the library when called like torch's schedule
function.
"""
from enum import Enum

from .. import _C
from ._validate import check_int

__all__ = ["ProfilerAction", "schedule"]


class ProfilerAction(Enum):
    """What the profiler does during a step."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class schedule:
    """schedule(wait, active, warmup=0, repeat=0, skip_first=0)

    Skip `skip_first` steps once, then cycle: `wait` idle steps, `warmup`
    steps, `active` recorded steps (the trace is saved after the last one);
    `repeat` cycles, 0 meaning until the profile stops.  Calling the object
    with a step number returns that step's ProfilerAction.
    """
    __slots__ = ("wait", "active", "warmup", "repeat", "skip_first")

    def __init__(self, wait, active, warmup=0, repeat=0, skip_first=0):
        self.wait = check_int("wait", wait, 0)
        self.active = check_int("active", active, 1)
        self.warmup = check_int("warmup", warmup, 0)
        self.repeat = check_int("repeat", repeat, 0)
        self.skip_first = check_int("skip_first", skip_first, 0)
        _C.schedule_validate(*self._fields())

    def _fields(self):
        return (self.skip_first, self.wait, self.warmup, self.active, self.repeat)

    def __call__(self, step):
        step = check_int("step", step, 0)
        return ProfilerAction(_C.schedule_action(*self._fields(), step))

    def __repr__(self):
        return (f"schedule(wait={self.wait}, active={self.active}, warmup={self.warmup}, "
                f"repeat={self.repeat}, skip_first={self.skip_first})")

    def __eq__(self, other):
        return isinstance(other, schedule) and self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())


_FIELDS = ("wait", "active", "warmup", "repeat", "skip_first")


def as_schedule(value):
    """The schedule a profile runs: ours, or an equivalent of torch's.

    torch.profiler.schedule() returns a closure and torch_npu's an object
    with the same five numbers; both are converted, since the C session
    drives traces from the numbers.  Any other callable cannot be followed
    by the session and is refused.
    """
    if value is None or isinstance(value, schedule):
        return value
    if not callable(value):
        raise TypeError(f"schedule must be aiprof.profiler.schedule(...) or None, "
                        f"got {type(value).__name__}")
    found = {}
    code, cells = getattr(value, "__code__", None), getattr(value, "__closure__", None)
    if code is not None and cells:
        found = {n: c.cell_contents for n, c in zip(code.co_freevars, cells)
                 if n in _FIELDS or n == "skip_first_wait"}
    else:
        found = {n: getattr(value, n) for n in _FIELDS + ("skip_first_wait",) if hasattr(value, n)}
    if all(n in found for n in _FIELDS) and not found.get("skip_first_wait"):
        return schedule(**{n: found[n] for n in _FIELDS})
    raise TypeError("schedule must be aiprof.profiler.schedule(wait, active, warmup, repeat, "
                    "skip_first) or torch.profiler.schedule(...); other callables are not "
                    "supported by the C session")
