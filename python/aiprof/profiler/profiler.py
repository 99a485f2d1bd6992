"""profile and _KinetoProfile: torch_npu.profiler's API on libaiprof.

A profile owns one C session (aiprof._C.Session).  The session follows the
schedule, opens and saves the result directories
({worker}_{timestamp}_ascend_pt) and calls back when a trace is saved; the
profile then runs on_trace_ready(prof).  Results (events, key_averages,
export_chrome_trace, export_stacks) come from the last saved trace, through
the C analyser's trace_view.json.

Rules kept from torch / torch_npu: one profile runs at a time in a process;
leaving a `with` block — even by an exception or Ctrl-C — stops the profile
and saves the trace; a profile still running at interpreter exit is
stopped and saved.
"""
import atexit
import os
import shutil
import sys
import tempfile
import threading
import warnings

from .. import _C
from . import _distributed, _flight, _memory_timeline, _output, _torch_bridge
from ._activity import (C_BITS, DEVICE_BITS, activity_bits, cuda_driver_note, device_names,
                        device_status)
from ._analyse import analyse, analyse_in_background, analyse_now, export_trace, gzip_trace
from ._collectors import Collectors
from ._events import EventList
from ._profiler_path_creator import ProfPathCreator
from ._results import TraceResult, empty_events
from ._trace_handler import _TensorboardTraceHandler, tensorboard_trace_handler
from ._validate import (check_bool, check_c_str, check_callable, check_optional_bool, check_path,
                        check_trace_format)
from .experimental_config import (ExportType, _ExperimentalConfig, from_torch_config,
                                  is_torch_config)
from .scheduler import ProfilerAction, _CallableSchedule, as_schedule

__all__ = ["profile", "_KinetoProfile", "tensorboard_trace_handler", "analyse"]

_active = None                  # the profile running in this process
_active_lock = threading.Lock()
_warned = set()

_STACK_METRICS = ("self_cpu_time_total", "self_npu_time_total", "self_cuda_time_total",
                  "self_device_time_total")


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_stacklevel():
    """The stacklevel, for a warnings.warn() in _warn_once, of the first frame
    outside the aiprof package: the warning names the user's line (the
    `with profile(...)` or the call), however deep inside aiprof it is made."""
    f, level = sys._getframe(2), 2  # _warn_once's caller is its level 2
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f, level = f.f_back, level + 1
    return level if f is not None else 2


def _warn_once(key, msg, stacklevel=None):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"aiprof: {msg}", RuntimeWarning,
                      stacklevel=_user_stacklevel() if stacklevel is None else stacklevel)


# The session keywords of profile()'s boolean options, in _options()' order.
_OPTION_NAMES = ("record_shapes", "profile_memory", "with_stack", "with_modules", "with_flops")


class _ProfInterface:
    """prof.prof_if — the object torch_npu's custom handlers use."""

    def __init__(self, prof):
        self._prof = prof

    def analyse(self, async_mode=False, use_gzip=False, trace_format="torch_npu", **_ignored):
        """Analyse the trace just saved (in a background process if async);
        use_gzip also writes trace_view.json.gz; trace_format "torch_npu",
        "kineto" or "perfetto" (tensorboard_trace_handler says what each is)."""
        self._prof._analyse_last(check_bool("async_mode", async_mode),
                                 check_bool("use_gzip", use_gzip),
                                 check_trace_format("trace_format", trace_format))


class _KinetoProfile:
    """_KinetoProfile(activities=None, record_shapes=False, profile_memory=False,
    with_stack=False, with_flops=False, with_modules=False,
    experimental_config=None)

    start()/stop() around the code to profile, then export_chrome_trace(),
    key_averages() or events().  No schedule, no step(), no on_trace_ready:
    raw data goes to a temporary directory that is removed with the object.
    """

    _schedule = None
    _on_trace_ready = None
    _use_cuda = False

    def __init__(self, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None):
        self._activities = activity_bits(activities)
        self.record_shapes = check_bool("record_shapes", record_shapes)
        self.profile_memory = check_bool("profile_memory", profile_memory)
        self.with_stack = check_bool("with_stack", with_stack)
        self.with_flops = check_bool("with_flops", with_flops)
        self.with_modules = check_bool("with_modules", with_modules)
        if experimental_config is None:
            pass  # the shared default until someone asks (experimental_config)
        elif is_torch_config(experimental_config):
            # torch.profiler's Kineto options: a torch.profiler script runs
            # unchanged; what cannot be honoured here is named once.
            experimental_config, unsupported = from_torch_config(experimental_config,
                                                                 self.with_stack)
            if unsupported:
                _warn_once(("torch-config",) + tuple(unsupported),
                           "torch.profiler._ExperimentalConfig: not supported by aiprof and "
                           "ignored: " + ", ".join(unsupported))
        elif not isinstance(experimental_config, _ExperimentalConfig):
            raise TypeError("experimental_config must be aiprof.profiler._ExperimentalConfig, "
                            "torch.profiler._ExperimentalConfig or None, got "
                            f"{type(experimental_config).__name__}")
        self._experimental_config = experimental_config
        # What start() and the results read: the profile's own config, else
        # the shared default (never changed; see experimental_config).
        self._cfg = _ExperimentalConfig._shared_default() if experimental_config is None \
            else experimental_config
        self.prof_if = _ProfInterface(self)
        self._session = None
        self._collectors = None
        self._running = False
        self._trace_dir = None      # last saved trace
        self._result = None
        self._metadata = []         # added before start
        self._handler_error = None
        self._session_error = None  # why the last start/step/stop failed, if it did
        self._in_handler = False    # on_trace_ready is running
        self._has_run = False       # started at least once
        self._used_path_creator = False
        self._export_dir = None
        # The collectors of the first start, made now: profile() is where
        # torch.profiler builds its state too, and start() is what a short
        # profile waits for (some 10 us of Python objects, on caches a
        # training loop left cold).  Made again at a start whose options
        # were changed meanwhile, and at every later start.
        self._made_collectors = (self._collectors_key(self._options()), self._new_collectors())

    @property
    def experimental_config(self):
        """The profile's _ExperimentalConfig: one of its own, made when first
        asked for if none was given (profile() does not pay for a copy of the
        default that nobody reads)."""
        cfg = self._experimental_config
        if cfg is None:
            cfg = self._experimental_config = self._cfg = _ExperimentalConfig._default()
        return cfg

    @experimental_config.setter
    def experimental_config(self, value):
        self._experimental_config = self._cfg = value

    def _options(self):
        return (self.record_shapes, self.profile_memory, self.with_stack, self.with_modules,
                self.with_flops)

    def _collectors_key(self, options):
        return options, self._activities & 1, self._experimental_config

    def _new_collectors(self):
        cfg = self._cfg
        return Collectors(bool(self._activities & 1), self.record_shapes, self.profile_memory,
                          self.with_stack, self.with_modules, cfg.with_gc, self.with_flops,
                          cfg.mstx, defer_labels=True)

    # ---- lifecycle -----------------------------------------------------
    def start(self):
        global _active
        if self._running:
            raise RuntimeError(f"{type(self).__name__}.start(): the profile is already started")
        with _active_lock:
            if _active is not None:
                raise RuntimeError("an aiprof profile is already running in this process; "
                                   "profiles cannot be nested — stop the running one first")
            _active = self
        try:
            self._begin()
        except BaseException:
            self._teardown()
            raise

    def _begin(self):
        # The common case checked here, not in a call: each Python call
        # costs start() ~1-2 us on the caches a training loop leaves cold.
        cfg = self._cfg
        if not (self._activities == 1 and cfg._all_collected and not cfg.record_op_args):
            self._warn_unsupported()
        dir_name, worker_name = self._result_location()
        groups = _distributed.prepare()  # the rank first: it names profiler_info_{rank}.json
        dist_info = _distributed.distributed_info()
        # Only what differs from aip_config_init's defaults: the session
        # parses fewer keywords (python/_C/session.c orders them).
        kw = {"activities": self._activities & C_BITS, "on_trace_ready": self._c_trace_ready}
        if dir_name is not None:
            kw["dir_name"] = dir_name
        if worker_name is not None:
            kw["worker_name"] = worker_name
        kw.update(self._cfg._start_session_kwargs())
        sched = self._schedule
        if sched is not None:
            kw.update(sched._session_kwargs())
        options = self._options()
        if any(options):
            for name, on in zip(_OPTION_NAMES, options):
                if on:
                    kw[name] = True
        if self._use_cuda:
            kw["use_cuda"] = True
        flight = getattr(self, "_flight", None)
        if flight:
            kw.update(flight)
        self._session = _C.Session(**kw)
        if flight:
            self._except_hook = _flight.ExceptHook()
        if groups is not None and not any(k == "parallel_group_info" for k, _, _ in
                                          self._metadata):
            self._session.add_metadata_json("parallel_group_info", groups)
        if dist_info is not None and not any(k == "distributedInfo" for k, _, _ in
                                             self._metadata):
            self._session.add_metadata_json("distributedInfo", dist_info)
        for key, value, as_json in self._metadata:
            (self._session.add_metadata_json if as_json else self._session.add_metadata)(
                key, value)
        self._metadata = []
        made, self._made_collectors = self._made_collectors, None
        self._collectors = made[1] if made is not None and \
            made[0] == self._collectors_key(options) else self._new_collectors()
        self._handler_error = None
        self._session_error = None
        self._call_session(self._session.start)
        self._running = True
        self._has_run = True
        self._sync()
        if self._handler_error is not None or self._schedule is not None:
            self._raise_handler_error()  # the schedule's, for step 0

    def stop(self):
        self._refuse_in_handler("stop")
        if not self._running:
            if self._has_run:
                raise RuntimeError(f"{type(self).__name__}.stop(): the profile is already "
                                   "stopped")
            raise RuntimeError(f"{type(self).__name__}.stop() called before start()")
        try:
            if self._collectors is not None:
                self._collectors.before_boundary()
            self._call_session(self._session.stop)
        finally:
            self._teardown()
        self._raise_handler_error()

    def _teardown(self):
        # Whatever fails here, the profile must end up stopped and no longer
        # the process's running profile, or no profile could start again.
        global _active
        self._running = False
        try:
            try:
                collectors, self._collectors = self._collectors, None
                if collectors is not None:
                    collectors.stop()
            finally:
                hook = getattr(self, "_except_hook", None)
                if hook is not None:
                    self._except_hook = None
                    hook.remove()
                session, self._session = self._session, None
                if session is not None:
                    session.close()
        finally:
            if self._used_path_creator:
                ProfPathCreator().reset()
                self._used_path_creator = False
            with _active_lock:
                if _active is self:
                    _active = None

    def _refuse_in_handler(self, what):
        # on_trace_ready runs inside the step() or stop() that saved the
        # trace; stopping or stepping from there would pull the session out
        # from under that call.  Refused before anything changes.
        if self._in_handler:
            raise RuntimeError(
                f"{type(self).__name__}.{what}() cannot be called from inside on_trace_ready: "
                "the handler runs inside the step() or stop() that saved the trace; the "
                f"profile keeps running, call {what}() after that call returns")

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self._running:
            return False
        if exc_type is None:
            self.stop()
            return False
        if getattr(self, "_flight", None) and exc_type is not None:
            try:  # the block ended in an exception: what led to it is dumped
                _flight.flight_dump("exception")
            except Exception as e:  # noqa: BLE001 - the block's exception wins
                warnings.warn(f"aiprof: flight recorder dump after an exception failed: {e}",
                              RuntimeWarning, stacklevel=2)
        try:  # the block's exception wins; the trace is still saved
            self.stop()
        except Exception as e:
            warnings.warn(f"aiprof: stopping the profile after an exception failed: {e}",
                          RuntimeWarning, stacklevel=2)
        return False

    def __del__(self):
        d = getattr(self, "_export_dir", None)
        if d:
            shutil.rmtree(d, ignore_errors=True)

    # ---- C session plumbing ------------------------------------------------
    def _result_location(self):
        """(dir_name, worker_name) of this profile's result directories."""
        if self._export_dir is None:
            self._export_dir = tempfile.mkdtemp(prefix="aiprof_export_")
        return self._export_dir, None

    def _call_session(self, fn):
        """Saving or opening a trace can fail on the file system; like
        torch_npu, that is reported and the program goes on."""
        try:
            fn()
        except (OSError, ValueError) as e:
            self._session_error = str(e)  # the reason an export gives later
            warnings.warn(f"aiprof: {e}", RuntimeWarning, stacklevel=3)

    def _sync(self):
        if self._collectors is not None:
            self._collectors.set_recording(_C.is_recording())
            # The step the session just opened begins once the collectors
            # are on: their set-up (the adapter's first load, profile_memory's
            # labels of known tensors) is not the user's step time.
            self._session.step_started()

    def _c_trace_ready(self, result_dir):
        """Called by the C session once a trace is on disk (GIL held)."""
        self._trace_dir = result_dir
        self._result = None
        if self._on_trace_ready is None:
            return
        self._in_handler = True
        try:
            self._on_trace_ready(self)
        except BaseException as e:  # raised again from step()/stop()
            if self._handler_error is None:
                self._handler_error = e
        finally:
            self._in_handler = False

    def _raise_handler_error(self):
        e, self._handler_error = self._handler_error, None
        if e is None and isinstance(self._schedule, _CallableSchedule):
            e = self._schedule._take_error()
        if e is not None:
            raise e

    def _analyse_last(self, async_mode, use_gzip=False, trace_format=0):
        if self._trace_dir is None:
            raise RuntimeError("no trace has been saved yet")
        bits = self._cfg._export_bits
        if async_mode:
            analyse_in_background(self._trace_dir, bits, use_gzip, trace_format)
            return
        try:
            analyse_now(self._trace_dir, bits, trace_format)
            if use_gzip and not gzip_trace(self._trace_dir):
                _warn_once("gzip-db", "use_gzip: the analysis wrote no trace_view.json "
                           "(export_type Db), so there is nothing to gzip")
        except (OSError, RuntimeError, ValueError) as e:
            warnings.warn(f"aiprof: analysis of {self._trace_dir} failed: {e}",
                          RuntimeWarning, stacklevel=3)
        except KeyboardInterrupt:
            # The raw data is complete: say how to finish the job.
            warnings.warn(f"aiprof: analysis of {self._trace_dir} interrupted; its raw data "
                          f"is complete: run `aiprof analyse {self._trace_dir}`",
                          RuntimeWarning, stacklevel=3)
            raise

    def _warn_unsupported(self):
        """What start() says is not collected; not called for CPU alone with
        a config this machine fully collects (nothing to say then)."""
        bits = self._activities  # use_cuda has set CUDA's bit
        cfg = self._cfg
        cpu = bool(bits & 1)
        device_ok = False
        # Once the device warning was given, only a profile without CPU
        # activity still needs the answer (start() stays cheap).
        if bits & DEVICE_BITS and (("device",) not in _warned or not cpu):
            supported, why = device_status()
            device_ok = bool(supported & 2)  # NPU: some back end finds a device
            if not device_ok:
                # Once per process, whatever the activities: the reason does
                # not change (libaiprof logs it once in the trace's log too).
                names = "/".join(device_names(bits & DEVICE_BITS))
                # Asked for CUDA by name on a machine with no driver: say that
                # first, before the back ends' per-process details.
                note = cuda_driver_note() if bits & 4 else ""
                _warn_once(("device",), (note + ". " if note else "")
                           + f"{names} activity requested, but no device data can "
                           f"be collected on this machine ({why}); "
                           + ("CPU activity is recorded" if cpu else "nothing else is")
                           + " (see supported_activities())")
        other = device_names(bits & ~C_BITS)
        if other:
            names = "/".join(other)
            _warn_once(("no-backend",) + tuple(other),
                       f"no {names} back end in aiprof: {names} activity is not recorded")
        if not cpu and not device_ok:
            _warn_once(("no-cpu",), "CPU is not in activities, so this profile records no "
                       "operators, stacks, memory or GC (only mstx marks, with mstx=True); add "
                       "ProfilerActivity.CPU")
        off = self._cfg._not_collected()
        if off:
            _warn_once(("config",) + tuple(off), "not collected on this machine (no Ascend "
                       "device or not implemented): " + ", ".join(off))
        note = self._cfg._op_args_note(self.record_shapes)
        if note:
            _warn_once(("op_args", self.record_shapes), note)

    # ---- metadata --------------------------------------------------------
    def add_metadata(self, key, value):
        """A string entry in the result's profiler_metadata.json."""
        self._add_metadata(check_c_str("key", key), check_c_str("value", value, True), False)

    def add_metadata_json(self, key, value):
        """An entry whose value is JSON text (e.g. json.dumps(...))."""
        self._add_metadata(check_c_str("key", key), check_c_str("value", value), True)

    def _add_metadata(self, key, value, as_json):
        if self._session is not None:
            (self._session.add_metadata_json if as_json else self._session.add_metadata)(
                key, value)
        elif self._trace_dir is None:
            if as_json:  # validate now rather than at start
                import json
                try:
                    json.loads(value)
                except ValueError as e:
                    raise ValueError(f"add_metadata_json: value for {key!r} is not valid "
                                     f"JSON: {e}") from None
            self._metadata.append((key, value, as_json))
        else:
            _warn_once("late-metadata", "add_metadata after stop(): the trace is already "
                       "saved; the entry is not written")

    # ---- results -----------------------------------------------------------
    def _trace_result(self):
        if self._trace_dir is None:
            return None
        if self._result is None:
            self._result = TraceResult(self._trace_dir, self.profile_memory, self.with_stack,
                                       self.with_flops)
        return self._result

    def events(self):
        """The events of the last saved trace (an EventList of FunctionEvent)."""
        r = self._trace_result()
        return r.events() if r is not None else empty_events(self.profile_memory,
                                                             self.with_stack, self.with_flops)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """Events grouped by name (and input shapes / top stack frames)."""
        r = self._trace_result()
        if r is None:
            return self.events().key_averages(group_by_input_shape, group_by_stack_n)
        return r.key_averages(group_by_input_shape, group_by_stack_n)

    def _saved_trace(self, what):
        r = self._trace_result()
        if r is None:
            why = (f"opening or saving it failed: {self._session_error}" if self._session_error
                   else "the schedule has not finished a RECORD phase, or the profile is still "
                   "running")
            raise RuntimeError(f"{what}(): no trace has been saved yet ({why})")
        return r

    def export_chrome_trace(self, path, trace_format="torch_npu"):
        """Write the last trace as Chrome trace JSON (gzip if `path` ends in
        .gz): trace_format "torch_npu" (default) as torch_npu writes it, a
        JSON array with string ts; "kineto" as torch.profiler does, an object
        with numeric ts relative to baseTimeNanoseconds and add_metadata
        entries as top-level keys (for speedscope, the old chrome://tracing);
        "perfetto": Perfetto's protobuf trace instead of JSON (for
        ui.perfetto.dev; name it .perfetto-trace)."""
        path = check_path("path", path)
        form = check_trace_format("trace_format", trace_format)
        r = self._saved_trace("export_chrome_trace")
        export_trace(r.result_dir, path, form)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """FlameGraph collapsed stacks: one line per distinct Python stack
        and op, "outer;...;inner;op <self time in us>"."""
        path = check_path("path", path)
        if metric not in _STACK_METRICS:
            raise ValueError(f"metric must be one of {', '.join(_STACK_METRICS)}; "
                             f"got {metric!r}")
        events = self._saved_trace("export_stacks").events()
        if not self.with_stack:
            _warn_once("stacks", "export_stacks(): the profile ran with with_stack=False, "
                       "so there are no stacks to write")
        elif metric != "self_cpu_time_total" and not any(getattr(e, metric) for e in events):
            # Every call, not once: each one writes a file the user will read.
            warnings.warn(f"aiprof: export_stacks(metric={metric!r}): the trace has no device "
                          "data (no device activity was recorded), so every device time "
                          f"is 0 and {path} is written empty; metric='self_cpu_time_total' "
                          "gives the host times", RuntimeWarning, stacklevel=2)
        totals = {}
        for e in events:
            if not e.stack:
                continue
            key = ";".join(_stack_frame(f) for f in reversed(e.stack)) + ";" + \
                _stack_frame(e.name)
            totals[key] = totals.get(key, 0.0) + getattr(e, metric)
        with _output.open_output(path, "w") as f:
            for key, value in totals.items():
                if int(value) > 0:
                    f.write(f"{key} {int(value)}\n")

    def export_memory_timeline(self, output_path=None, device=None, *, path=None):
        """Memory over time for `device` ("cpu", "npu:0", ...), written as
        .html, .json, .json.gz or .raw.json.gz in torch's layouts, bytes by
        torch's categories (see _memory_timeline.py)."""
        output_path = check_path("output_path", output_path if path is None else path)
        if not self.profile_memory:
            _warn_once("memtl", "export_memory_timeline(): profile_memory=False, so no "
                       "memory events were recorded")
        r = self._saved_trace("export_memory_timeline")
        device_type, _ = _memory_timeline.parse_device(device)
        if not any(output_path.endswith(s) for s in (".html", ".json", ".json.gz")):
            raise ValueError("output_path must end in .html, .json, .json.gz or .raw.json.gz, "
                             f"got {output_path!r}")
        records = _memory_timeline.write(r.result_dir, output_path, device)
        if device_type != 0 and records == 0:
            _warn_once("memtl-dev", f"export_memory_timeline(): no memory events for "
                       f"{device} in this trace (no device allocation was recorded)")


def _stack_frame(text):
    for ch in " ;\t\n":
        text = text.replace(ch, "_")
    return text


class profile(_KinetoProfile):
    """profile(activities=None, schedule=None, on_trace_ready=None,
    record_shapes=False, profile_memory=False, with_stack=False,
    with_flops=False, with_modules=False, experimental_config=None,
    use_cuda=None)

    A context manager (or start()/stop()).  With a schedule, call step()
    after each training step; on_trace_ready(prof) runs after each saved
    trace, e.g. tensorboard_trace_handler("./result").
    """

    def __init__(self, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, use_cuda=None, flight_recorder=None):
        use_cuda = check_optional_bool("use_cuda", use_cuda)
        self._flight = _flight.flight_options(flight_recorder)
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config)
        self._schedule = as_schedule(schedule)
        self._on_trace_ready = check_callable("on_trace_ready", on_trace_ready)
        self._use_cuda = bool(use_cuda)
        if self._use_cuda:
            self._activities |= 4

    @property
    def schedule(self):
        return self._schedule

    @property
    def on_trace_ready(self):
        return self._on_trace_ready

    def _result_location(self):
        handler = self._on_trace_ready
        if isinstance(handler, _TensorboardTraceHandler):
            return handler.dir_name, handler.worker_name
        creator = ProfPathCreator()
        if creator.is_set():
            self._used_path_creator = True
            return creator.get()
        # No handler: raw data stays in $ASCEND_WORK_PATH/profiling_data or
        # the current directory, for offline analyse() (as in torch_npu).
        return None, None

    def step(self):
        """End the current step and begin the next (applies the schedule)."""
        self._refuse_in_handler("step")
        if not self._running:
            raise RuntimeError("profile.step(): the profile is not started (call start() "
                               "or use it in a with statement)")
        if self._collectors is not None:
            self._collectors.before_boundary()
        self._call_session(self._session.step)
        self._sync()
        if self._collectors is not None:
            self._collectors.stepped()
        self._raise_handler_error()

    @property
    def step_num(self):
        return self._session.step_num if self._session is not None else 0

    @property
    def current_action(self):
        if self._session is None:
            return ProfilerAction.NONE
        return ProfilerAction(self._session.current_action)

    @staticmethod
    def enable_profiler_in_child_thread(record_shapes=False, profile_memory=False,
                                        with_stack=False, with_flops=False, with_modules=False):
        """Record this thread's PyTorch ops (again).  aiprof's callbacks are
        global, so every thread is recorded without this call; it undoes
        disable_profiler_in_child_thread() on this thread.  record_shapes
        and with_flops apply to this thread's ops even when the running
        profile lacks them.  profile_memory, with_stack and with_modules are
        process-wide collectors: one asked for here that the profile does
        not have is not added (a warning says so)."""
        asked = {name: check_bool(name, value) for name, value in (
            ("record_shapes", record_shapes), ("profile_memory", profile_memory),
            ("with_stack", with_stack), ("with_flops", with_flops),
            ("with_modules", with_modules))}
        _torch_bridge.pause_thread(False)
        _torch_bridge.thread_options(asked["record_shapes"], asked["with_flops"])
        prof = _active
        if prof is not None:
            missing = [n for n in ("profile_memory", "with_stack", "with_modules")
                       if asked[n] and not getattr(prof, n)]
            if missing:
                _warn_once(("child-options",) + tuple(missing),
                           "enable_profiler_in_child_thread: " + ", ".join(missing) +
                           " cannot be turned on for one thread (process-wide collectors); "
                           "not added for this thread")

    @staticmethod
    def disable_profiler_in_child_thread():
        """This thread's PyTorch ops (and record_function ranges) are no
        longer recorded, until enable_profiler_in_child_thread() on it,
        which also sets its options anew."""
        _torch_bridge.pause_thread(True)
        _torch_bridge.thread_options(False, False)


# _KinetoProfile has no step(): say so clearly instead of a bare AttributeError.
def _no_step(self):
    raise AttributeError("_KinetoProfile has no step(); use aiprof.profiler.profile with a "
                         "schedule to profile step by step")


_KinetoProfile.step = property(_no_step)


def _stop_at_exit():
    prof = _active
    if prof is not None and prof._running:
        try:
            prof.stop()
        except BaseException as e:  # exiting: report, never raise
            warnings.warn(f"aiprof: stopping the running profile at exit failed: {e}")


atexit.register(_stop_at_exit)
