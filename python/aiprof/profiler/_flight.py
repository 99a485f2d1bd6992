"""The flight recorder (docs/FLIGHT_RECORDER.md) from Python.

profile(flight_recorder=60) arms it: the profile records from start() to
stop() into a bounded ring and writes a result directory only when a
trigger asks: SIGUSR2, flight_dump(), a slow step or a hang (the options
below), or an exception that ends the profile's block or the program.
"""
import math
import sys

from .. import _C

_OPTIONS = {"seconds": "flight_recorder_seconds", "ring_bytes": "flight_ring_bytes",
            "ring_dir": "flight_ring_dir", "slow_step": "flight_slow_step",
            "hang_seconds": "flight_hang_seconds", "signal": "flight_signal"}


def flight_options(value):
    """The session keywords of profile()'s flight_recorder: None (off), a
    number of seconds, or a dict of seconds, ring_bytes, ring_dir,
    slow_step, hang_seconds, signal."""
    if value is None:
        return {}
    if isinstance(value, bool):
        raise TypeError("flight_recorder must be a number of seconds or a dict, not a bool")
    if isinstance(value, (int, float)):
        value = {"seconds": value}
    if not isinstance(value, dict):
        raise TypeError("flight_recorder must be a number of seconds, a dict or None, got "
                        f"{type(value).__name__}")
    unknown = sorted(set(value) - set(_OPTIONS))
    if unknown:
        raise ValueError(f"flight_recorder: unknown option(s) {', '.join(unknown)}; known: "
                         f"{', '.join(_OPTIONS)}")
    seconds = value.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or \
            not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"flight_recorder: seconds must be a number > 0, got {seconds!r}")
    kw = {}
    for key, name in _OPTIONS.items():
        if key in value and value[key] is not None:
            v = value[key]
            if key == "ring_dir":
                v = str(v)
            elif key in ("ring_bytes", "signal"):
                v = int(v)
            else:
                v = float(v)
            kw[name] = v
    return kw


def flight_dump(reason=None):
    """Dump the armed flight recorder now; @return the dump's result
    directory.  RuntimeError when none is armed."""
    return _C.flight_dump(reason)


def flight_salvage(ring_dir, out_dir):
    """The ring a killed process left (ring_dir) as a result directory
    under out_dir; @return its path."""
    return _C.flight_salvage(str(ring_dir), str(out_dir))


class ExceptHook:
    """sys.excepthook while a flight recorder is armed: an exception that
    ends the program dumps first, then the previous hook runs."""

    def __init__(self):
        self.previous = sys.excepthook
        sys.excepthook = self

    def __call__(self, exc_type, exc, tb):
        try:
            _C.flight_dump("exception")
        except Exception:  # noqa: BLE001 - nothing armed any more: nothing to dump
            pass
        self.previous(exc_type, exc, tb)

    def remove(self):
        if sys.excepthook is self:
            sys.excepthook = self.previous
