"""aiprof.mindspore: MindSpore 2.2's `mindspore.Profiler` on libaiprof.

A script written for MindSpore's profiler runs on any Python program by
changing its import (docs/MINDSPORE.md):

    import aiprof as mindspore            # was: import mindspore
    profiler = mindspore.Profiler(output_path="./data")
    train()
    profiler.analyse()
    print(profiler.op_analyse(op_name="aten::addmm"))

The run is recorded by an aiprof profile (CPU activity, record_shapes: the
PyTorch ops when torch is used, record_function / mstx ranges always) whose
raw data goes to `{output_path}/profiler/aiprof/`.  analyse() runs the C
analyser on it and writes, beside it in `{output_path}/profiler/`, the files
MindSpore 2.2's CPU profiler writes (_layout.py, _host_info.py).  MindSpore
itself is not needed.
"""
import json
import logging
import os
import re
import time

from ..profiler import _output
from ..profiler._activity import ProfilerActivity
from ..profiler._analyse import EXPORT_TEXT, analyse_now, find_result_dirs
from ..profiler._validate import check_bool, check_path
from ..profiler.profiler import _KinetoProfile
from . import _host_info, _layout, _ops

__all__ = ["Profiler"]

log = logging.getLogger("aiprof.mindspore")

_DEFAULTS = {
    "output_path": "./data", "op_time": True, "profile_communication": False,
    "profile_memory": False, "parallel_strategy": True, "start_profile": True,
    "aicore_metrics": 0, "l2_cache": False, "sync_enable": True, "data_process": True,
    "timeline_limit": 500, "profile_framework": "all",
}
_BOOLS = ("op_time", "profile_communication", "profile_memory", "parallel_strategy",
          "start_profile", "l2_cache", "sync_enable", "data_process")
AICORE_METRICS = (-1, 0, 1, 2, 3, 4, 5)
PROFILE_FRAMEWORK = ("all", "time", "memory", None)
# MindSpore: "When using this parameter, op_time must be set to True"; it
# warns about these when op_time is False (ALWAYS_VALID_PARAM's complement,
# less profile_framework, whose host memory is recorded without ops).
_NEED_OP_TIME = ("profile_communication", "profile_memory", "aicore_metrics", "timeline_limit",
                 "sync_enable")
# What has no source on a host-only run (Ascend: CANN/device data; GPU:
# CUPTI; data_process: MindSpore's MindData pipeline).
_NOT_HERE = {"profile_communication": "Ascend", "profile_memory": "Ascend",
             "parallel_strategy": "Ascend", "aicore_metrics": "Ascend", "l2_cache": "Ascend",
             "sync_enable": "GPU", "data_process": "MindData"}
RAW_DIR = "aiprof"
RUN_FILE = "mindspore_run.json"


def _env_id(name):
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() else 0


def _now():
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())


class _RunProfile(_KinetoProfile):
    """The aiprof profile behind a Profiler: its raw data stays in the
    Profiler's output directory (not a temporary one)."""

    def __init__(self, raw_dir):
        super().__init__(activities=[ProfilerActivity.CPU], record_shapes=True)
        self._raw_dir = raw_dir

    def _result_location(self):
        return self._raw_dir, None


class Profiler:
    """Profiler(output_path="./data", op_time=True, profile_communication=False,
    profile_memory=False, parallel_strategy=True, start_profile=True,
    aicore_metrics=0, l2_cache=False, sync_enable=True, data_process=True,
    timeline_limit=500, profile_framework="all")

    MindSpore 2.2's profiler, keyword arguments only.  A wrong type is a
    TypeError and a wrong value a ValueError naming the parameter, raised
    before anything starts; an unknown keyword is logged and ignored, as
    MindSpore does.  Ascend/GPU/MindData switches are checked, and logged as
    not collected here when given.
    """

    def __init__(self, **kwargs):
        for key in kwargs:
            if key not in _DEFAULTS:
                log.warning("%s is an invalid param which doesn't work.", key)
        given = {k: v for k, v in kwargs.items() if k in _DEFAULTS}
        opts = dict(_DEFAULTS, **given)
        for name in _BOOLS:
            check_bool(name, opts[name])
        metrics = opts["aicore_metrics"]
        if isinstance(metrics, bool) or not isinstance(metrics, int):
            raise TypeError(f"aicore_metrics must be an int, got {type(metrics).__name__}")
        if metrics not in AICORE_METRICS:
            raise ValueError(f"aicore_metrics must be in [-1, 0, 1, 2, 3, 4, 5], got {metrics}")
        limit = opts["timeline_limit"]
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"timeline_limit must be an int (MB), got {type(limit).__name__}")
        if limit <= 0:
            raise ValueError(f"timeline_limit must be greater than 0 (MB), got {limit}")
        framework = opts["profile_framework"]
        if framework is not None and not isinstance(framework, str):
            raise TypeError("profile_framework must be a str or None, got "
                            f"{type(framework).__name__}")
        if framework not in PROFILE_FRAMEWORK:
            raise ValueError("profile_framework must be one of ['all', 'time', 'memory', None], "
                             f"got {framework!r}")
        output_path = check_path("output_path", opts["output_path"])
        if not opts["op_time"]:
            for name in _NEED_OP_TIME:
                if name in given:
                    log.warning("When op_time is set to False, the parameter '%s' setting is "
                                "invalid.", name)
        # MindSpore's CPU profiler logs every such parameter it is given.
        absent = [f"{name} ({_NOT_HERE[name]})" for name in _NOT_HERE if name in given]
        if absent:
            log.warning("[Profiler]not collected on this machine (a host CPU run: no Ascend "
                        "device, no GPU, no MindData pipeline): %s", ", ".join(absent))
        self._opts = opts
        self.start_profile = opts["start_profile"]
        self._rank_id = _env_id("RANK_ID")
        self._device_id = _env_id("DEVICE_ID")
        self._output_dir = os.path.join(os.path.abspath(output_path), "profiler")
        self._raw_dir = os.path.join(self._output_dir, RAW_DIR)
        self._prof = None
        self._sampler = None
        self._started = False
        self._has_started = False   # MindSpore allows one start/stop per Profiler
        self._trace_dir = None
        self._run = None
        if self.start_profile:
            self.start()

    # ---- collection -----------------------------------------------------
    def start(self):
        """Start collecting.  RuntimeError: already started (start_profile
        True starts at construction), or started and stopped before."""
        if self._started:
            raise RuntimeError("The profiler has already started. Use profiler.start() only "
                               "when start_profile value is set to False.")
        if self._has_started:
            raise RuntimeError("MindSpore Profiling has finished, repeated start and stop "
                               "actions are not supported.")
        if os.path.isdir(self._output_dir):
            log.warning("The target dir already exists. There may be some old profiling data, "
                        "and they will be rewritten in the end.")
        _output.make_dirs(self._raw_dir)
        framework = self._opts["profile_framework"]
        prof = None
        if self._opts["op_time"]:
            prof = _RunProfile(self._raw_dir)
            prof.start()  # a profile already running in the process: RuntimeError
        self._prof = prof
        self._run = {"pid": os.getpid(), "ppid": os.getppid(), "rank_id": self._rank_id,
                     "device_id": self._device_id, "start_time": _now(),
                     "options": {k: v for k, v in self._opts.items() if k != "output_path"}}
        self._save_run()
        if framework is not None and _host_info.wants_memory(framework):
            csv_path = os.path.join(self._output_dir, "host_info",
                                    f"host_info_{self._rank_id}.csv")
            if os.path.exists(csv_path):  # an older run's rows: this run starts its own
                os.unlink(csv_path)
            sampler = _host_info.MemorySampler(csv_path)
            try:
                sampler.start()
                self._sampler = sampler
            except OSError as e:  # the profile goes on without host memory
                log.warning("[Profiler]profile_framework: cannot write %s (%s); host memory is "
                            "not recorded", csv_path, e)
        self._started = True
        self._has_started = True

    def stop(self):
        """Stop collecting.  RuntimeError: not started."""
        if not self._started:
            raise RuntimeError("The profiler has not started, so can not stop. Please call the "
                               "start() method before calling the stop() method.")
        self._started = False
        try:
            if self._prof is not None:
                self._prof.stop()
                self._trace_dir = self._prof._trace_dir
                if self._trace_dir is None:  # saving failed: already warned by the profile
                    log.warning("[Profiler]no trace was saved (%s); analyse() will write no op "
                                "files", self._prof._session_error or "unknown reason")
        finally:
            sampler, self._sampler = self._sampler, None
            if sampler is not None:
                sampler.stop()
            self._run["stop_time"] = _now()
            if self._trace_dir:
                self._run["result_dir"] = os.path.basename(self._trace_dir)
            self._save_run()

    def _save_run(self):
        with _output.open_output(os.path.join(self._raw_dir, RUN_FILE), "w") as f:
            json.dump(self._run, f, indent=1)

    # ---- analysis ---------------------------------------------------------
    def analyse(self, offline_path=None, pretty=False):
        """Stop collecting if running, analyse, and write MindSpore's files
        into {output_path}/profiler/.  offline_path: the output_path of an
        earlier run (e.g. one that exited abnormally) to analyse instead;
        pretty: indent the JSON files."""
        check_bool("pretty", pretty)
        if offline_path is not None:
            out_dir = self._offline_dir(check_path("offline_path", offline_path))
            run = _load_run(out_dir)
            result_dir = _newest_result(out_dir, run)
            _analyse_into(out_dir, result_dir, run, pretty)
            return
        if self._started:
            self.stop()
        if not self._has_started:
            log.warning("[Profiler]analyse(): the profiler was never started "
                        "(start_profile=False and no start()); there is nothing to analyse")
            return
        _analyse_into(self._output_dir, self._trace_dir, self._run, pretty)

    @staticmethod
    def _offline_dir(path):
        for candidate in (os.path.join(path, "profiler"), path):
            if os.path.isdir(os.path.join(candidate, RAW_DIR)):
                return os.path.abspath(candidate)
        raise ValueError(f"offline_path {path!r} holds no aiprof MindSpore data: neither "
                         f"{os.path.join(path, 'profiler', RAW_DIR)} nor "
                         f"{os.path.join(path, RAW_DIR)} exists")

    def op_analyse(self, op_name, device_id=None):
        """Per-op performance data of the op type(s) `op_name` (str or list
        of str) as MindSpore's JSON text: {name: [{op_side, input_shape,
        op_occurrences, op_total_time(us), op_avg_time(us)}, ...],
        "device_id": id}.  Reads the files analyse() wrote (it runs analyse()
        first if this Profiler has stopped and not analysed)."""
        if device_id is not None and (isinstance(device_id, bool)
                                      or not isinstance(device_id, int)):
            raise TypeError("For 'Profiler.op_analyse()', the parameter device_id must be int, "
                            f"but got type {type(device_id)}")
        if not isinstance(op_name, (str, list)):
            raise TypeError("For 'Profiler.op_analyse()', the parameter op_name must be str or "
                            f"list, but got type {type(op_name)}")
        if not op_name:
            raise TypeError("For 'Profiler.op_analyse()', the parameter op_name cannot be \"\", "
                            "'' or [].")
        names = [op_name] if isinstance(op_name, str) else op_name
        for name in names:
            if not isinstance(name, str) or not name:
                raise TypeError("For 'Profiler.op_analyse()', every op_name in the list must be "
                                f"a non-empty str, got {name!r}")
        if self._started:
            raise RuntimeError("Profiler.op_analyse(): the profiler is still collecting; call "
                               "stop() or analyse() first")
        if self._trace_dir and not _analysed(self._output_dir, self._device_id):
            self.analyse()
        dev = self._device_id if device_id is None else device_id
        return _ops.op_analyse(self._output_dir, dev, names,
                               str(dev) if device_id is None else device_id)


def _analysed(out_dir, device_id):
    return os.path.exists(os.path.join(out_dir, f"cpu_framework_{device_id}.txt"))


def _load_run(out_dir):
    path = os.path.join(out_dir, RAW_DIR, RUN_FILE)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        log.warning("[Profiler]%s unreadable (%s); using the defaults", path, e)
        return {"rank_id": 0, "device_id": 0, "options": dict(_DEFAULTS)}


def _newest_result(out_dir, run):
    raw = os.path.join(out_dir, RAW_DIR)
    named = run.get("result_dir")
    if named and os.path.isdir(os.path.join(raw, named)):
        return os.path.join(raw, named)
    dirs = find_result_dirs(raw)
    if not dirs:
        return None  # op_time=False, or a run killed before its first data
    if len(dirs) > 1:
        log.warning("[Profiler]%d aiprof runs under %s; analysing the newest", len(dirs), raw)
    return max(dirs, key=lambda d: (re.sub(r".*_(\d+)_ascend_pt$", r"\1", d), d))


def _analyse_into(out_dir, result_dir, run, pretty):
    """Analyse `result_dir` (None: no op data) and write MindSpore's files."""
    started = _now()
    opts = dict(_DEFAULTS, **run.get("options", {}))
    rank_id, device_id = run.get("rank_id", 0), run.get("device_id", 0)
    pid, ppid = run.get("pid", 0), run.get("ppid", 0)
    extra = {"result_dir": os.path.relpath(result_dir, out_dir) if result_dir else None}
    trace = None
    if result_dir is not None:
        analyse_now(result_dir, EXPORT_TEXT)  # the C analyser: ASCEND_PROFILER_OUTPUT/
        trace = _layout.load_trace(result_dir)
        _layout.write_op_files(trace, out_dir, device_id, pid)
        written, dropped = _layout.write_timeline(trace, out_dir, rank_id, device_id,
                                                  opts["timeline_limit"], pretty)
        _layout.write_summary(trace, out_dir, rank_id, pretty)
        extra.update(timeline_events=written, timeline_dropped_events=dropped,
                     time_base_ns=trace.base_ns)
    framework = opts["profile_framework"]
    if framework is not None:
        extra["host_info_rows"] = _host_info.write_host_info(trace, out_dir, rank_id, framework,
                                                             pid, ppid, pretty)
    _layout.write_profiler_info(out_dir, rank_id, run, started, pretty, extra)
