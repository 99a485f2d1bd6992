"""aiprof's start-up hook: profiling Python programs without code changes.

The build puts this file next to the aiprof package (build/python), so it
runs at interpreter start whenever that directory is on PYTHONPATH, which
`aiprof run` arranges.  It does nothing (a few dictionary look-ups) unless
one of these is in effect:

  PROF_CONFIG_PATH=DIR   dynamic_profile without code changes, as with
                         torch_npu: DIR/profiler_config.json starts and
                         stops collections; each optimizer.step() is a step;
  aiprof run             the preload library records the program; this hook
                         adds the PyTorch ops and turns optimizer.step()
                         into ProfilerStep# marks.

Torch is never imported here: the work happens when the program imports it
(aiprof/_autoprofile.py).  Another sitecustomize later on sys.path (Debian
ships one) is loaded too, so this file does not shadow it.
"""
import os
import sys


def _run_mode():
    """'whole', 'window' or 'dynamic' when `aiprof run` profiles this process."""
    env = os.environ
    if "AIPROF_RUN_MODE" not in env and "AIPROF_RUN_DIR" not in env:
        return None
    # The preload library removes AIPROF_RUN_MODE at load (so that the
    # program's children run unprofiled); the environment this process was
    # started with still has it.
    mode = env.get("AIPROF_RUN_MODE")
    if mode is None:
        try:
            with open("/proc/self/environ", "rb") as f:
                for item in f.read().split(b"\0"):
                    if item.startswith(b"AIPROF_RUN_MODE="):
                        mode = item[16:].decode("ascii", "replace")
        except OSError:
            return None
    if not mode:
        return None
    if mode == "whole" and (env.get("AIPROF_RUN_DELAY") or env.get("AIPROF_RUN_DURATION")):
        mode = "window"
    return mode


def _start():
    run_mode = _run_mode()
    config_path = os.environ.get("PROF_CONFIG_PATH") or None  # empty: unset
    if run_mode is None and config_path is None:
        return
    try:
        from aiprof import _autoprofile
    except Exception as e:  # a broken build must not stop the program
        sys.stderr.write(f"aiprof: warning: cannot load aiprof ({e}); the program runs "
                         "without profiling\n")
        return
    _autoprofile.start(run_mode, config_path)


def _chain():
    """Load the next sitecustomize on sys.path, which this one hides."""
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.realpath(__file__))
    rest = []
    seen = False
    for entry in sys.path:
        try:
            same = os.path.realpath(entry or os.curdir) == here
        except (TypeError, ValueError, OSError):
            same = False
        if same:
            seen = True
        elif seen:
            rest.append(entry)
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest) if seen else None
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


try:
    _start()
finally:
    try:
        _next = _chain()
    except Exception as _e:  # as site.py reports a failing sitecustomize
        sys.stderr.write(f"Error in sitecustomize (loaded after aiprof's); set PYTHONVERBOSE "
                         f"for traceback:\n{type(_e).__name__}: {_e}\n")
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
