"""torch.profiler.itt's functions, recorded by aiprof.

There is no VTune here: range_push/range_pop/mark become mstx ranges and
marks in the domain "itt", recorded when the profile has mstx on, so
is_available() is True.  range_push and range_pop return the zero-based
depth of the range started or ended, as torch documents (range_pop
returns -1 when no range is open).  The depths are counted here, per
thread, so that while a profile runs with mstx off at Level_none (see
aiprof.mstx) a range can be left out of the library and still nest.
"""
import threading
from contextlib import contextmanager

from .. import _C, mstx
from ._validate import check_str

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]

_DOMAIN = "itt"
_thread = threading.local()   # .open: per open range, innermost last: did the library get it


def _open_ranges():
    try:
        return _thread.open
    except AttributeError:
        _thread.open = []
        return _thread.open


def is_available():
    return True


def range_push(msg):
    msg = check_str("msg", msg)
    ranges = _open_ranges()
    passed = not mstx._off
    if passed:
        _C.range_push(msg, _DOMAIN)
    ranges.append(passed)
    return len(ranges) - 1


def range_pop():
    ranges = _open_ranges()
    if not ranges:
        return -1
    if ranges.pop():
        _C.range_pop()
    return len(ranges)


def mark(msg):
    msg = check_str("msg", msg)
    if not mstx._off:
        _C.mark(msg, _DOMAIN)


@contextmanager
def range(msg, *args, **kwargs):
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
