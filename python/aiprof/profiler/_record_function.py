"""record_function: a named range in the trace (category user_annotation).

Works as a context manager and as a decorator, on any thread, with or
without torch.  The range goes straight to libaiprof, so it costs one
C call when nothing records.
"""
from contextlib import ContextDecorator

from .. import _C
from ._validate import check_c_str

__all__ = ["record_function"]


class record_function(ContextDecorator):
    """record_function(name, args=None)

    `args` is accepted for torch compatibility; aiprof does not record it.
    """
    __slots__ = ("name", "args", "_gen")

    def __init__(self, name, args=None):
        self.name = check_c_str("name", name)
        if args is not None and not isinstance(args, str):
            raise TypeError(f"args must be a str or None, got {type(args).__name__}")
        self.args = args
        self._gen = 0

    def _recreate_cm(self):
        # As a decorator: one object per call, so that each call's _gen is its own
        # (recursion, threads).
        return record_function(self.name, self.args)

    def __enter__(self):
        # The trace the range went to: a range opened before a trace starts (or
        # in the previous of two back-to-back traces) is not closed in it.
        self._gen = _C.annotation_push(self.name)
        return self

    def __exit__(self, exc_type, exc, tb):
        _C.annotation_pop(self._gen)
        return False
