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
    __slots__ = ("name", "args")

    def __init__(self, name, args=None):
        self.name = check_c_str("name", name)
        if args is not None and not isinstance(args, str):
            raise TypeError(f"args must be a str or None, got {type(args).__name__}")
        self.args = args

    def __enter__(self):
        _C.annotation_push(self.name)
        return self

    def __exit__(self, exc_type, exc, tb):
        _C.annotation_pop()
        return False
