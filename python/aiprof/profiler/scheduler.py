"""ProfilerAction and schedule(), torch.profiler / torch_npu.profiler style.

The step → action rule lives in libaiprof (aip_schedule_action); a
schedule object only carries the five numbers, which the C session uses to
drive traces, and asks the library when called like torch's schedule
function.  Any other callable step -> ProfilerAction (torch.profiler
accepts one) is asked by the session itself at every step.
"""
from enum import Enum

from .. import _C
from ._validate import INT64_MAX, check_int

__all__ = ["ProfilerAction", "schedule"]


class ProfilerAction(Enum):
    """What the profiler does during a step.  DEVICE_STOPPED is torch 2.x's
    action for device collection stopping early (a CUPTI buffer overflow);
    no schedule may return it.  aiprof never enters it: its collectors do
    not stop, they count what they drop (docs/PYTHON.md)."""
    NONE = _C.ACTION_NONE
    WARMUP = _C.ACTION_WARMUP
    RECORD = _C.ACTION_RECORD
    RECORD_AND_SAVE = _C.ACTION_RECORD_AND_SAVE
    DEVICE_STOPPED = 4  # torch's number; libaiprof has no such action


# The actions a schedule may return: aip_action's, never DEVICE_STOPPED.
_C_ACTIONS = frozenset((_C.ACTION_NONE, _C.ACTION_WARMUP, _C.ACTION_RECORD,
                        _C.ACTION_RECORD_AND_SAVE))


class schedule:
    """schedule(wait, active, warmup=0, repeat=0, skip_first=0)

    Skip `skip_first` steps once, then cycle: `wait` idle steps, `warmup`
    steps, `active` recorded steps (the trace is saved after the last one);
    `repeat` cycles, 0 meaning until the profile stops.  Calling the object
    with a step number returns that step's ProfilerAction.
    """
    __slots__ = ("wait", "active", "warmup", "repeat", "skip_first")

    def __init__(self, wait, active, warmup=0, repeat=0, skip_first=0):
        self.wait = check_int("wait", wait, 0, INT64_MAX)
        self.active = check_int("active", active, 1, INT64_MAX)
        self.warmup = check_int("warmup", warmup, 0, INT64_MAX)
        self.repeat = check_int("repeat", repeat, 0, INT64_MAX)
        self.skip_first = check_int("skip_first", skip_first, 0, INT64_MAX)
        _C.schedule_validate(*self._fields())

    def _fields(self):
        return (self.skip_first, self.wait, self.warmup, self.active, self.repeat)

    def _session_kwargs(self):
        return {"schedule": self._fields()}

    def __call__(self, step):
        step = check_int("step", step, 0, INT64_MAX)
        return ProfilerAction(_C.schedule_action(*self._fields(), step))

    def __repr__(self):
        return (f"schedule(wait={self.wait}, active={self.active}, warmup={self.warmup}, "
                f"repeat={self.repeat}, skip_first={self.skip_first})")

    def __eq__(self, other):
        return isinstance(other, schedule) and self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())


class _CallableSchedule:
    """A user's own schedule function, as torch.profiler allows: the C
    session asks it for every step's action (a ProfilerAction of ours or
    torch's, or its int value).  What it raises, or a result that is no
    action, is kept (that step's action is NONE) and raised by the profile
    after the start()/step() that asked, like an on_trace_ready error."""
    __slots__ = ("fn", "error")

    def __init__(self, fn):
        self.fn = fn
        self.error = None

    def __call__(self, step):
        return self.fn(step)

    def _ask(self, step):
        try:
            action = self.fn(step)
            value = getattr(action, "value", action)
            if value == ProfilerAction.DEVICE_STOPPED.value and not isinstance(value, bool):
                raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the "
                                 "profiler and must not be returned by a user-provided schedule")
            if isinstance(value, bool) or not isinstance(value, int) or value not in _C_ACTIONS:
                raise TypeError(f"schedule({step}) returned {action!r}, not a ProfilerAction")
            return value
        except BaseException as e:
            if self.error is None:
                self.error = e
            return _C.ACTION_NONE

    def _take_error(self):
        e, self.error = self.error, None
        return e

    def _session_kwargs(self):
        return {"schedule_fn": self._ask}

    def __repr__(self):
        return f"schedule function {self.fn!r}"


_FIELDS = ("wait", "active", "warmup", "repeat", "skip_first")


def as_schedule(value):
    """The schedule a profile runs: ours, an equivalent of torch's, or any
    callable step -> ProfilerAction.

    torch.profiler.schedule() returns a closure and torch_npu's an object
    with the same five numbers; both are converted, so the C session
    follows the numbers without calling Python at each step.
    """
    if value is None or isinstance(value, schedule):
        return value
    if not callable(value):
        raise TypeError(f"schedule must be aiprof.profiler.schedule(...), a callable "
                        f"step -> ProfilerAction, or None; got {type(value).__name__}")
    found = {}
    code, cells = getattr(value, "__code__", None), getattr(value, "__closure__", None)
    if code is not None and cells:
        found = {n: c.cell_contents for n, c in zip(code.co_freevars, cells)
                 if n in _FIELDS or n == "skip_first_wait"}
    else:
        found = {n: getattr(value, n) for n in _FIELDS + ("skip_first_wait",) if hasattr(value, n)}
    if all(n in found for n in _FIELDS) and not found.get("skip_first_wait"):
        try:
            return schedule(**{n: found[n] for n in _FIELDS})
        except (TypeError, ValueError):
            pass  # numbers of another kind: ask the function itself
    return _CallableSchedule(value)
