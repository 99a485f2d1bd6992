"""Argument checks shared by the public API.

Every public entry point checks its arguments here so that a wrong type
raises TypeError and a wrong value ValueError, both naming the parameter —
before anything is started, so a bad call never leaves a half-made session.
"""
import numbers
import os
import string

from .. import _C

# torch_npu accepts result paths made of letters, digits, '_', '-', '.', '/'
# (the C core enforces the same set; checking here gives a Python error
# before a directory is touched).  Tested with str.strip: a path is good
# when stripping these characters leaves nothing.  (A regular expression
# cost a new path ~5 us on a cold cache, and its `$` let a final newline
# through.)
_PATH_CHARS = string.ascii_letters + string.digits + "_./-"
_WORKER_CHARS = string.ascii_letters + string.digits + "_.-"


def check_bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


def check_optional_bool(name, value):
    return None if value is None else check_bool(name, value)


INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


def check_int(name, value, minimum=None, maximum=None):
    """`maximum`: the largest value the C type behind it holds, so that a
    huge int is a ValueError naming `name`, not OverflowError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_str(name, value, allow_empty=False):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not allow_empty and not value:
        raise ValueError(f"{name} must not be empty")
    return value


def check_c_str(name, value, allow_empty=False):
    """A str that reaches the C core whole: no NUL, valid UTF-8."""
    check_str(name, value, allow_empty)
    if "\0" in value:
        raise ValueError(f"{name} must not contain a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"{name} is not valid UTF-8 text: {e.reason} at position "
                         f"{e.start}") from None
    return value


def check_callable(name, value):
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be callable or None, got {type(value).__name__}")
    return value


_good_paths = {}  # str paths already accepted, without '~' (which $HOME may change)


def check_path(name, value):
    """A path parameter: str or os.PathLike.  A leading ~ or ~user is
    expanded here, as users expect (the C core takes no '~'); the result
    may only hold the characters torch_npu and the C core accept."""
    if type(value) is str:
        if value in _good_paths:
            return value  # a loop making a handler per profile checks it once
    elif isinstance(value, os.PathLike):
        value = os.fspath(value)
    check_str(name, value)
    expanded = os.path.expanduser(value) if value.startswith("~") else value
    if expanded.strip(_PATH_CHARS):
        shown = repr(value) if expanded == value else f"{value!r} (expanded to {expanded!r})"
        raise ValueError(f"{name} {shown} may only contain letters, digits and '_-./' "
                         "(a leading '~' is expanded)")
    if expanded is value and len(_good_paths) < 256:
        _good_paths[value] = True
    return expanded


def check_worker_name(name, value):
    check_str(name, value)
    if value.strip(_WORKER_CHARS):
        raise ValueError(f"{name} {value!r} may only contain letters, digits and '_-.'")
    if len(value) >= 226:
        raise ValueError(f"{name} must be shorter than 226 characters")
    return value


def check_str_list(name, value):
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)):
        raise TypeError(f"{name} must be a list of str, got {type(value).__name__}")
    out = []
    for item in value:
        if not isinstance(item, str):
            raise TypeError(f"{name} must be a list of str, found {type(item).__name__}")
        if not item:
            raise ValueError(f"{name} must not contain an empty name")
        out.append(item)
    return out


# The timeline's forms (aip_trace_format): torch_npu's array (the default),
# torch.profiler/Kineto's object, and "perfetto": torch_npu's trace_view.json
# plus trace.perfetto-trace, Perfetto's protobuf trace (docs/RESULT_LAYOUT.md).
TRACE_FORMATS = {"torch_npu": _C.TRACE_TORCH_NPU, "kineto": _C.TRACE_KINETO,
                 "perfetto": _C.TRACE_PERFETTO}


def check_trace_format(name, value):
    """A trace form by name ("torch_npu", "kineto" or "perfetto") → the C
    core's number."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str (\"torch_npu\", \"kineto\" or \"perfetto\"), "
                        f"got {type(value).__name__}")
    if value not in TRACE_FORMATS:
        raise ValueError(f"{name} must be \"torch_npu\", \"kineto\" or \"perfetto\", "
                         f"got {value!r}")
    return TRACE_FORMATS[value]
