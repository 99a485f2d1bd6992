"""Running the C analyser: in-process, in a background process, or offline
over many result directories (torch_npu.profiler.profiler.analyse).

_main() is the background worker tensorboard_trace_handler(async_mode=True)
starts, as `python -m aiprof.profiler._analyse_child DIR [EXPORT_BITS [gzip]
[kineto]]` (its own module: see there why).

trace_view.json comes in torch_npu's form (a JSON array; the default) or
Kineto's (an object; trace_format="kineto"): docs/RESULT_LAYOUT.md.
"""
import atexit
import gzip
import os
import shutil
import subprocess
import sys
import threading
import warnings

from .. import _C
from . import _output
from ._validate import TRACE_FORMATS, check_path, check_trace_format
from .experimental_config import _known_export_bits

OUTPUT_DIR = "ASCEND_PROFILER_OUTPUT"
TRACE_FILE = "trace_view.json"

_pending = {}            # result dir → Popen of its background analysis
_pending_lock = threading.Lock()


def trace_file(result_dir):
    return os.path.join(result_dir, OUTPUT_DIR, TRACE_FILE)


def analyse_now(result_dir, export_bits=0, trace_format=0):
    """Analyse one ..._ascend_pt directory here (the GIL is released).
    trace_format: the C core's number (check_trace_format)."""
    _C.analyse_dir(result_dir, export_bits, True, trace_format=trace_format)


def trace_format_of(path):
    """The form of the trace file at `path` (TRACE_FORMATS' number): an
    object is Kineto's, anything else torch_npu's array."""
    with open(path, "rb") as f:
        head = f.read(64).lstrip()
    return TRACE_FORMATS["kineto"] if head.startswith(b"{") else TRACE_FORMATS["torch_npu"]


def export_trace(result_dir, path, trace_format):
    """export_chrome_trace: the result's trace in `trace_format` at `path`
    (gzip if it ends in .gz), copied when trace_view.json already has that
    form, else written by the C exporter from the raw data straight to
    `path` (the result directory is unchanged: nothing else needs a
    trace_view.json since events() and key_averages() read the raw data).
    The C writer makes a temporary file beside `path` (0640, never through
    a link) and renames it into place; a link at `path` is refused first,
    as _output.open_output refuses it, and missing directories are made
    by _output as well."""
    wait_for(result_dir)
    src = trace_file(result_dir)
    if os.path.exists(src) and trace_format_of(src) == trace_format:
        if path.endswith(".gz"):
            gzip_file(src, path)
        else:
            with open(src, "rb") as fi, _output.open_output(path) as fo:
                shutil.copyfileobj(fi, fo, 1 << 20)
        return
    path = os.path.abspath(path)
    _output.refuse_links(path)
    _output.make_dirs(os.path.dirname(path))  # its errors name what is wrong
    if not path.endswith(".gz"):
        _C.export_trace(result_dir, path, trace_format)
        return
    tmp = f"{path[:-3]}.tmp{os.getpid()}"
    try:
        _C.export_trace(result_dir, tmp, trace_format)
        gzip_file(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def gzip_file(src, dst):
    """`dst` = gzip of `src`, written beside it and renamed into place, so
    that a reader never sees a partial file.  Level 1: traces are large.
    `dst` follows _output's rules (no symbolic link, 0640)."""
    dst = os.path.abspath(dst)
    _output.refuse_links(dst)
    tmp = f"{dst}.tmp{os.getpid()}"
    try:
        with open(src, "rb") as fi, _output.open_output(tmp) as raw, \
                gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as fo:
            shutil.copyfileobj(fi, fo, 1 << 20)
        os.replace(tmp, dst)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def gzip_trace(result_dir):
    """tensorboard_trace_handler(use_gzip=True): trace_view.json.gz beside
    trace_view.json (which the analysis and other tools keep reading).
    Returns False when the analysis wrote no trace (export_type Db)."""
    src = trace_file(result_dir)
    if not os.path.exists(src):
        return False
    gzip_file(src, src + ".gz")
    return True


def analyse_in_background(result_dir, export_bits=0, gzip_trace=False, trace_format=0):
    """Start the analysis of `result_dir` in another process and return."""
    pkg_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"]
                                      if env.get("PYTHONPATH") else "")
    argv = [sys.executable, "-m", "aiprof.profiler._analyse_child", result_dir, str(export_bits)]
    if gzip_trace:
        argv.append("gzip")
    for form, number in TRACE_FORMATS.items():
        if trace_format == number and number:
            argv.append(form)
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, start_new_session=True)
    with _pending_lock:
        _pending[os.path.abspath(result_dir)] = proc
    return proc


def _leave_running_analyses():
    """At exit: an analysis still running goes on after the program, in its
    own session, as meant.  subprocess would call each such child a leaked
    resource (a ResourceWarning per Popen still running when collected):
    the children are let go explicitly instead, left to init to reap."""
    with _pending_lock:
        procs = list(_pending.values())
        _pending.clear()
    for proc in procs:
        if proc.poll() is None:
            proc.returncode = 0  # what Popen.__del__ checks; nothing waits on it any more


atexit.register(_leave_running_analyses)


def wait_for(result_dir):
    """Wait for a background analysis of `result_dir`, if one runs."""
    with _pending_lock:
        proc = _pending.pop(os.path.abspath(result_dir), None)
    if proc is not None:
        proc.wait()


EXPORT_TEXT = _C.EXPORT_TEXT  # aip_export_type: TEXT writes trace_view.json
OUTPUTS_TRACE_VIEW = _C.OUTPUTS_TRACE_VIEW  # aip_analyse_outputs: only trace_view.json


def ensure_analysed(result_dir):
    """Make sure trace_view.json exists for `result_dir` (a trace recorded
    with export_type Db only has none until a text analysis is asked for)."""
    wait_for(result_dir)
    if not os.path.exists(trace_file(result_dir)):
        # Only the trace: export_chrome_trace/key_averages/events need
        # nothing else, and the CSVs and databases cost more than it.
        _C.analyse_dir(result_dir, EXPORT_TEXT, True, OUTPUTS_TRACE_VIEW)


def find_result_dirs(path):
    """`path` itself if it is a result directory, else the ones inside it."""
    if path.endswith("_ascend_pt") and os.path.isdir(os.path.join(path, "FRAMEWORK")):
        return [path]
    found = []
    for root, dirs, _ in os.walk(path):
        for d in sorted(dirs):
            if d.endswith("_ascend_pt"):
                found.append(os.path.join(root, d))
        dirs[:] = [d for d in dirs if not d.endswith("_ascend_pt")]
    return found


def _main(argv):
    named = [f for f in TRACE_FORMATS if f != "torch_npu"]
    allowed = [[], ["gzip"]] + [[f] for f in named] + [["gzip", f] for f in named]
    forms = [a for a in argv[3:] if a != "gzip"]
    if len(argv) < 2 or argv[3:] not in allowed:
        print("usage: python -m aiprof.profiler._analyse_child RESULT_DIR [EXPORT_BITS [gzip] "
              "[kineto|perfetto]]", file=sys.stderr)
        return 2
    try:
        _C.analyse_dir(argv[1], int(argv[2]) if len(argv) > 2 else 0, False,
                       trace_format=TRACE_FORMATS[forms[0] if forms else "torch_npu"])
        if "gzip" in argv[3:]:
            gzip_trace(argv[1])
    except Exception as e:  # the analysis's own errors are in the directory's logs too
        print(f"aiprof analyse {argv[1]}: {e}", file=sys.stderr)
        return 1
    return 0


def analyse(profiler_path, max_process_number=None, export_type=None, *,
            trace_format="torch_npu"):
    """Offline analysis of every ..._ascend_pt directory under profiler_path.

    max_process_number: 1..CPU count (more is clamped; an invalid value
    falls back to half the CPUs, as the seed documents).  export_type:
    "text", "db" or a list; None uses what each trace recorded.
    trace_format (aiprof's): "torch_npu" writes trace_view.json as
    torch_npu does, "kineto" as torch.profiler does, "perfetto" also
    trace.perfetto-trace (Perfetto's protobuf trace).
    """
    profiler_path = check_path("profiler_path", profiler_path)
    form = check_trace_format("trace_format", trace_format)
    if not os.path.isdir(profiler_path):
        raise ValueError(f"profiler_path {profiler_path!r} is not a directory")
    cpus = os.cpu_count() or 1
    default = max(1, cpus // 2)
    if max_process_number is None:
        workers = default
    elif isinstance(max_process_number, bool) or not isinstance(max_process_number, int) \
            or max_process_number < 1:
        warnings.warn(f"max_process_number {max_process_number!r} is invalid; using {default}",
                      stacklevel=2)
        workers = default
    else:
        workers = min(max_process_number, cpus)
    # Seed (offline analysis): an invalid or missing export_type means the
    # one each trace recorded in profiler_info.json (bits 0 to the analyser).
    bits = 0
    if export_type is not None:
        bits, invalid = _known_export_bits(export_type)
        for item in invalid:
            warnings.warn(f"analyse: export_type {item!r} is not ExportType.Text or "
                          "ExportType.Db; " + ("ignored" if bits else "using the export_type "
                                               "each trace recorded (profiler_info.json)"),
                          stacklevel=2)
    dirs = find_result_dirs(profiler_path)
    if not dirs:
        warnings.warn(f"no *_ascend_pt result directory under {profiler_path}", stacklevel=2)
        return
    # The library's aip_analyse_dirs(): threads of this process with the
    # GIL released, each directory's failure reported and the others
    # analysed; Ctrl-C lets those running finish and starts no more.
    outcomes = _C.analyse_dirs(dirs, bits, form, workers)
    for d, bad in zip(dirs, outcomes):
        if bad is not None:
            warnings.warn(f"aiprof analyse: {d}: analyse: {bad[1]}", RuntimeWarning,
                          stacklevel=2)
