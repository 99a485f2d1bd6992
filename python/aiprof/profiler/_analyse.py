"""Running the C analyser: in-process, in a background process, or offline
over many result directories (torch_npu.profiler.profiler.analyse).

`python -m aiprof.profiler._analyse DIR [EXPORT_BITS]` is the background
worker tensorboard_trace_handler(async_mode=True) starts.
"""
import os
import subprocess
import sys
import threading
import warnings

from .. import _C

OUTPUT_DIR = "ASCEND_PROFILER_OUTPUT"
TRACE_FILE = "trace_view.json"

_pending = {}            # result dir → Popen of its background analysis
_pending_lock = threading.Lock()


def trace_file(result_dir):
    return os.path.join(result_dir, OUTPUT_DIR, TRACE_FILE)


def analyse_now(result_dir, export_bits=0):
    """Analyse one ..._ascend_pt directory here (the GIL is released)."""
    _C.analyse_dir(result_dir, export_bits, True)


def analyse_in_background(result_dir, export_bits=0):
    """Start the analysis of `result_dir` in another process and return."""
    pkg_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"]
                                      if env.get("PYTHONPATH") else "")
    proc = subprocess.Popen([sys.executable, "-m", "aiprof.profiler._analyse", result_dir,
                             str(export_bits)], env=env, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    with _pending_lock:
        _pending[os.path.abspath(result_dir)] = proc
    return proc


def wait_for(result_dir):
    """Wait for a background analysis of `result_dir`, if one runs."""
    with _pending_lock:
        proc = _pending.pop(os.path.abspath(result_dir), None)
    if proc is not None:
        proc.wait()


EXPORT_TEXT = 1  # aip_export_type: TEXT writes trace_view.json
OUTPUTS_TRACE_VIEW = 1  # aip_analyse_outputs: only trace_view.json


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
    if len(argv) < 2:
        print("usage: python -m aiprof.profiler._analyse RESULT_DIR [EXPORT_BITS]",
              file=sys.stderr)
        return 2
    try:
        _C.analyse_dir(argv[1], int(argv[2]) if len(argv) > 2 else 0, False)
    except Exception as e:  # reported in the directory's logs too
        print(f"aiprof analyse {argv[1]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    warnings.simplefilter("default")
    sys.exit(_main(sys.argv))
