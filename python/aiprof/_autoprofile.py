"""Profiling without code changes (started by build/python/sitecustomize.py).

Two ways in:

PROF_CONFIG_PATH=DIR  (torch_npu's environment-variable mode of
    dynamic_profile).  dynamic_profile.init(DIR) at start-up; each
    optimizer.step() then calls dynamic_profile.step().  Step 0 cannot be
    collected (the first step() ends it).  A bad DIR (characters other than
    letters, digits and _ - . /, a symbolic link, not writable) is reported
    on stderr and the program runs without profiling.

aiprof run  (libaiprof_preload.so records the process and holds external
    control, aip_external_control()).  This module records what only Python
    can: PyTorch ops through the adapter (with the shapes, stacks and memory
    `aiprof run` was asked for), and the steps: an aiprof session created
    here is adopted by the controller, so each of its step() calls, made at
    each optimizer.step(), becomes the controller's step — ProfilerStep#
    ranges in whole/window mode, aip_dynamic_step() in dynamic mode (--config),
    where the collectors follow the collections like dynamic_profile's.

Only the most recently constructed optimizer counts, so programs with
several optimizers (GAN, per-group optimizers) count each training step
once; a step() that calls another optimizer's step() (a subclass calling
super().step(), a wrapping optimizer) counts once.  Optimizers that do not
call torch.optim.Optimizer.__init__ are not seen (as with torch_npu).

Torch is not imported here: a meta-path finder waits for the program to
import torch.optim.optimizer (the optimizer patch) and torch (the adapter),
and acts when those modules have finished executing.
"""
import atexit
import functools
import os
import sys
import threading
import weakref

_PREFIX = "aiprof: "


def _warn(msg):
    sys.stderr.write(f"{_PREFIX}warning: {msg}\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------
# Running code when a module has been imported, without importing it.

class _ImportWatcher:
    """A meta-path finder that runs callbacks after a watched module's code
    has run.  It finds nothing itself: it asks the finders after it for the
    spec and wraps the spec's loader.exec_module for that one import."""

    def __init__(self):
        self.callbacks = {}     # module name -> [fn(module)]
        self._busy = threading.local()

    def watch(self, name, fn):
        module = sys.modules.get(name)
        if module is not None and getattr(getattr(module, "__spec__", None), "_initializing",
                                          False) is False:
            _safe_call(fn, module)  # already imported
            return
        self.callbacks.setdefault(name, []).append(fn)
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def find_spec(self, name, path, target=None):
        fns = self.callbacks.get(name)
        if not fns or getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            spec = None
            for finder in list(sys.meta_path):
                if finder is self:
                    continue
                find = getattr(finder, "find_spec", None)
                if find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
        finally:
            self._busy.on = False
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        del self.callbacks[name]
        if not self.callbacks:
            self._remove()
        original = loader.exec_module

        def exec_module(module):
            try:
                del loader.exec_module  # back to the loader's own method
            except AttributeError:
                pass
            original(module)
            for fn in fns:
                _safe_call(fn, module)

        try:
            loader.exec_module = exec_module
        except (AttributeError, TypeError):
            _warn(f"cannot watch the import of {name}; PyTorch is not profiled")
        return spec

    def _remove(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


def _safe_call(fn, *args):
    """Our hooks must never break the program."""
    try:
        fn(*args)
    except Exception as e:
        _warn(f"{getattr(fn, '__name__', fn)}: {type(e).__name__}: {e}")


_watcher = _ImportWatcher()


# ---------------------------------------------------------------------------
# optimizer.step() as the training step.

_state = threading.local()
_last_optimizer = None     # weakref (or a strong reference) to the newest optimizer
_on_step = None            # fn() called once per training step


def _is_last(opt):
    last = _last_optimizer
    if last is None:
        return False
    if isinstance(last, weakref.ref):
        last = last()
    return last is opt


def _wrap_step(step):
    @functools.wraps(step)
    def step_wrapper(self, *args, **kwargs):
        depth = getattr(_state, "depth", 0)
        if depth == 0:
            _state.pending = False
        _state.depth = depth + 1
        try:
            out = step(self, *args, **kwargs)
            if _is_last(self):
                _state.pending = True
        finally:
            _state.depth = depth
        if depth == 0 and _state.pending:
            _state.pending = False
            fn = _on_step
            if fn is not None:
                _safe_call(fn)
        return out

    step_wrapper._aiprof_step = True
    return step_wrapper


def _hook_class(cls):
    """Wrap the step() the class uses, once (where it is defined)."""
    for klass in cls.__mro__:
        fn = klass.__dict__.get("step")
        if fn is None:
            continue
        if not getattr(fn, "_aiprof_step", False) and callable(fn):
            setattr(klass, "step", _wrap_step(fn))
        return


def _patch_optimizer(module):
    optimizer = getattr(module, "Optimizer", None)
    if optimizer is None or getattr(optimizer, "_aiprof_patched", False):
        return
    original_init = optimizer.__init__

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        global _last_optimizer
        original_init(self, *args, **kwargs)
        try:
            _hook_class(type(self))
            try:
                _last_optimizer = weakref.ref(self)
            except TypeError:  # __slots__ without __weakref__
                _last_optimizer = self
        except Exception as e:
            _warn(f"optimizer step hook: {type(e).__name__}: {e}")

    optimizer.__init__ = __init__
    optimizer._aiprof_patched = True


def _watch_optimizers(on_step):
    global _on_step
    _on_step = on_step
    _watcher.watch("torch.optim.optimizer", _patch_optimizer)


# ---------------------------------------------------------------------------
# PROF_CONFIG_PATH

def _config_path_problem(path):
    if not path:
        return "it is empty"
    if len(path) >= 4096:
        return "it is too long"
    bad = [c for c in path if not (c.isascii() and (c.isalnum() or c in "_-./"))]
    if bad:
        return (f"it contains {bad[0]!r}; only letters, digits and _ - . / are allowed")
    probe = path.rstrip("/") or "/"
    while probe and probe not in ("/", "."):
        if os.path.islink(probe):
            return f"{probe} is a symbolic link"
        if os.path.exists(probe):
            break
        probe = os.path.dirname(probe)
    if os.path.exists(path):
        if not os.path.isdir(path):
            return "it is not a directory"
        if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
            return "the directory is not readable and writable"
    return None


def _start_config_path(path):
    problem = _config_path_problem(path)
    if problem is not None:
        _warn(f"PROF_CONFIG_PATH={path!r} is not usable: {problem}; the program runs "
              "without profiling")
        return
    try:
        from .profiler import dynamic_profile as dp
        dp.init(path)
    except Exception as e:
        _warn(f"PROF_CONFIG_PATH={path!r}: dynamic profiling not started: {e}; the program "
              "runs without profiling")
        return
    _watch_optimizers(dp.step)


# ---------------------------------------------------------------------------
# aiprof run

_run = {}


def _mapped_libraries():
    """(the preload library is loaded, {real paths of libaiprof.so copies})."""
    preload, copies = False, set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rstrip("\n").split(None, 5)[-1] if line.count(" ") >= 5 else ""
                name = os.path.basename(path)
                if name.startswith("libaiprof_preload"):
                    preload = True
                elif name.startswith("libaiprof.so"):
                    copies.add(os.path.realpath(path))
    except OSError:
        pass
    return preload, copies


def _env_flag(name):
    return os.environ.get(name, "") in ("1", "true")


def _run_step():
    prof = sys.modules.get("aiprof.profiler.profiler")
    if prof is not None and getattr(prof, "_active", None) is not None:
        return  # the program marks its own steps with an aiprof profile
    _run["session"].step()
    _run_group_info()
    collectors = _run.get("collectors")
    if collectors is not None:
        collectors.set_recording(bool(_run["C"].is_recording()))


def _run_group_info():
    """Whole/window mode: parallel_group_info (and the rank) once
    torch.distributed is initialised, again when its groups change; the
    adopted session hands it to the controller's, whose trace is saved
    (dynamic mode: the collection-start hook does it)."""
    if _run["mode"] == "dynamic" or "torch.distributed" not in sys.modules:
        return
    from .profiler import _distributed
    groups = _distributed.prepare()
    if groups is not None and groups != _run.get("groups"):
        try:
            _run["session"].add_metadata_json("parallel_group_info", groups)
            _run["groups"] = groups
        except Exception as e:  # over the metadata limit: said once, the run goes on
            _run["groups"] = groups
            _warn(f"parallel_group_info not written: {e}")


def _run_torch_imported(module):
    """Whole/window mode: ops from now on, while the controller records."""
    from .profiler._collectors import Collectors
    collectors = Collectors(True, _env_flag("AIPROF_RUN_RECORD_SHAPES"),
                            _env_flag("AIPROF_RUN_PROFILE_MEMORY"),
                            _env_flag("AIPROF_RUN_WITH_STACK"),
                            _env_flag("AIPROF_RUN_WITH_MODULES"), False,
                            _env_flag("AIPROF_RUN_WITH_FLOPS"), _env_flag("AIPROF_RUN_MSTX"))
    _run["collectors"] = collectors
    collectors.set_recording(True if _run["mode"] == "whole" else bool(_run["C"].is_recording()))
    # The controller saves the trace after the interpreter is gone: the
    # Python-side hooks end with the interpreter.
    atexit.register(_run_exit)


def _run_exit():
    collectors = _run.pop("collectors", None)
    if collectors is not None:
        collectors.stop()


def _start_run(mode):
    from . import _C
    preload, copies = _mapped_libraries()
    if not preload:
        return  # AIPROF_RUN_* without the preload library: nobody to report to
    if len(copies) > 1:
        # This package's libaiprof is not the preload's: its sessions would
        # not be under the controller.
        _warn("the aiprof package on PYTHONPATH is from another build than aiprof run ("
              + ", ".join(sorted(copies)) + "); PyTorch ops and optimizer steps are not "
              "recorded")
        return
    if mode == "dynamic":
        if _C.dynamic_state() == _C.DYN_UNINITIALIZED:
            return  # the preload could not start dynamic profiling (it said why)
    elif mode in ("whole", "window"):
        if mode == "whole" and not _C.is_recording():
            return  # the preload could not start (it said why)
    else:
        return
    # The session that marks steps: adopted by the controller, it records
    # nothing; the library's note about adoption is for program sessions.
    quiet = "AIPROF_QUIET" in os.environ
    if not quiet:
        os.environ["AIPROF_QUIET"] = "1"
    try:
        session = _C.Session(activities=1)
        session.start()
    finally:
        if not quiet:
            os.environ.pop("AIPROF_QUIET", None)
    _run.update(C=_C, mode=mode, session=session)
    _C.set_process_name("Python")
    if mode == "dynamic":
        from .profiler import dynamic_profile as dp
        _C.dynamic_set_hook(dp._hook)
    else:
        _watcher.watch("torch", _run_torch_imported)
    _watch_optimizers(_run_step)


def start(run_mode, config_path):
    """From sitecustomize: never raises."""
    try:
        if run_mode is not None:
            if config_path is not None:
                _warn("PROF_CONFIG_PATH is ignored under aiprof run (use aiprof run --config)")
            _start_run(run_mode)
        elif config_path is not None:
            _start_config_path(config_path)
    except Exception as e:
        _warn(f"profiling without code changes not started: {type(e).__name__}: {e}")
