"""mstx: custom marks and ranges (torch_npu.npu.mstx).

Recorded when the running profile has experimental_config mstx=True (or
profiler_level=Level_none), filtered by mstx_domain_include/_exclude.  The
default domain is "default".  A `stream` argument asks for a device-side
range as well; there is no NPU here, so only the host range is recorded
and a warning says so once.
"""
import functools
import warnings

from . import _C
from .profiler._validate import UINT64_MAX, check_c_str, check_int

__all__ = ["mark", "range_start", "range_end", "mstx_range"]

_warned_stream = False


def _check_stream(stream):
    global _warned_stream
    if stream is not None and not _warned_stream:
        _warned_stream = True
        warnings.warn("mstx: no NPU on this machine; the stream argument is ignored and only "
                      "the host-side range or mark is recorded", stacklevel=3)


def mark(message, stream=None, domain="default"):
    """An instant event named `message` in `domain`."""
    check_c_str("message", message)
    check_c_str("domain", domain)
    _check_stream(stream)
    _C.mark(message, domain)


def range_start(message, stream=None, domain="default"):
    """Start a range; returns its id for range_end() (0 when not recorded).
    The range may end on another thread."""
    check_c_str("message", message)
    check_c_str("domain", domain)
    _check_stream(stream)
    return _C.range_start(message, domain)


def range_end(range_id, domain="default"):
    """End the range `range_id` returned by range_start()."""
    check_int("range_id", range_id, 0, UINT64_MAX)
    check_c_str("domain", domain)
    _C.range_end(range_id)


def mstx_range(message, stream=None, domain="default"):
    """Decorator: the decorated function's calls are ranges named `message`."""
    check_c_str("message", message)
    check_c_str("domain", domain)

    def wrapper(func):
        @functools.wraps(func)
        def inner(*args, **kwargs):
            range_id = range_start(message, stream, domain)
            try:
                return func(*args, **kwargs)
            finally:
                range_end(range_id, domain)
        return inner
    return wrapper
