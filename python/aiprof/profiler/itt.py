"""torch.profiler.itt's functions, recorded by aiprof.

There is no VTune here: range_push/range_pop/mark become mstx ranges and
marks in the domain "itt", recorded when the profile has mstx on, so
is_available() is True.  range_push and range_pop return the zero-based
depth of the range started or ended, as torch documents (range_pop
returns -1 when no range is open).
"""
from contextlib import contextmanager

from .. import _C
from ._validate import check_str

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]

_DOMAIN = "itt"


def is_available():
    return True


def range_push(msg):
    return _C.range_push(check_str("msg", msg), _DOMAIN)


def range_pop():
    return _C.range_pop()


def mark(msg):
    _C.mark(check_str("msg", msg), _DOMAIN)


@contextmanager
def range(msg, *args, **kwargs):
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
