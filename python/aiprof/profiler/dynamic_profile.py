"""dynamic_profile: start collections while training runs, by editing
profiler_config.json (torch_npu.profiler.dynamic_profile).

    from aiprof.profiler import dynamic_profile as dp
    dp.init("profiler_config_path")     # creates profiler_config.json
    for step in steps:
        train_one_step()
        dp.step()

libaiprof watches the file, applies start_step / warmup / active / analyse
and the collection switches, and logs to <config dir>/log/.  This module
adds the collectors that live in Python: ATen ops (when torch is imported),
call stacks, module paths and GC passes, switched on for each collection.
The PROF_CONFIG_PATH environment-variable mode (no code changes: each
optimizer.step() is a dp.step()) is started by build/python/sitecustomize.py,
see aiprof/_autoprofile.py.
"""
import atexit
import warnings

from .. import _C
from . import _distributed
from ._collectors import Collectors
from ._validate import check_path

__all__ = ["init", "step", "start"]

_collectors = None
# init() found the shared segment unusable (another user's, open to others,
# not ours): dynamic profiling is off and step()/start() do nothing, so
# that whoever planted it cannot stop the training.
_off = False


def _hook(starting, options):
    """Called by libaiprof when a collection starts (before its first step)
    and when it ends.  At a start it returns the metadata the collection's
    profiler_metadata.json gets from here: torch.distributed's
    parallel_group_info, as a profile started in code writes it (a
    "metadata" entry of the config file wins)."""
    global _collectors
    if _collectors is not None:
        _collectors.stop()
        _collectors = None
    if starting:
        gc_ms = options["gc_detect_threshold_ms"]
        _collectors = Collectors(options["cpu"], options["record_shapes"],
                                 options["profile_memory"], options["with_stack"],
                                 options["with_modules"], gc_ms >= 0,
                                 options["with_flops"], options.get("mstx", False),
                                 labels_follow_core=True)
        # The library's session decides what records; the hooks check it
        # on every event, so they are simply on for the whole collection.
        _collectors.set_recording(True)
        groups = _distributed.prepare()  # None without torch.distributed
        if groups is not None:
            return {"parallel_group_info": groups}
    return None


def init(path):
    """Watch `path`/profiler_config.json (created with defaults if missing).
    A shared-memory segment of the directory that is not this user's own
    is refused: a RuntimeWarning says why, and training goes on without
    dynamic profiling."""
    global _off
    path = check_path("path", path)
    _C.dynamic_set_hook(_hook)
    try:
        _C.dynamic_init(path)
    except OSError as e:
        if "shared memory" not in str(e):
            raise
        _off = True
        warnings.warn(f"aiprof: {e}", RuntimeWarning, stacklevel=2)
        return
    _off = False


def _before_init(what):
    # The library's message names its C function; the user called ours.
    if _C.dynamic_state() == _C.DYN_UNINITIALIZED:
        raise RuntimeError(f"dynamic_profile.{what}() called before dynamic_profile.init(path)")


def step():
    """Mark the end of a training step; starts, steps and ends collections."""
    if _off:
        return
    try:
        _C.dynamic_step()
    except RuntimeError:  # checked only on failure: step() runs every step
        _before_init("step")
        raise
    if _collectors is not None:
        _collectors.sync_labels()  # a collection's warmup may just have ended


def start(config_path=None):
    """Collect once now with `config_path` (a profiler_config.json; None or
    an invalid file: the one of init())."""
    if config_path is not None:
        config_path = check_path("config_path", config_path)
    if _off:
        return
    _before_init("start")
    _C.dynamic_start(config_path)
    if _collectors is not None:
        _collectors.sync_labels()  # the hook ran before the library recorded


def _shutdown():
    # Before the interpreter goes: the library's own exit handler would
    # save a running collection too, but could no longer run the hook.
    if _C.dynamic_state() != _C.DYN_UNINITIALIZED:
        _C.dynamic_shutdown()
    _C.dynamic_set_hook(None)


atexit.register(_shutdown)
