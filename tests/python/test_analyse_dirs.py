"""aiprof.profiler.analyse() on many result directories, through the
library's aip_analyse_dirs() (docs/ANALYSIS.md "Many directories"): a
directory that fails is one warning naming it and the others are
analysed; one worker and several give the same bytes; Ctrl-C starts no
further directory, leaves none half-written and raises KeyboardInterrupt."""
import glob
import os
import shutil
import sys
import textwrap
import warnings

import pytest

from conftest import run_python

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
import make_golden_input as golden  # noqa: E402

OUT = "ASCEND_PROFILER_OUTPUT"


def make_dirs(root, n, bad=()):
    """n copies of the golden result directory under root; those in `bad`
    hold a raw file that is not raw data."""
    first = os.path.join(root, "worker000_20250101000000000_ascend_pt")
    golden.main(first)
    dirs = [first]
    for i in range(1, n):
        d = os.path.join(root, f"worker{i:03d}_20250101000000000_ascend_pt")
        shutil.copytree(first, d)
        dirs.append(d)
    for i in bad:
        raw = glob.glob(os.path.join(dirs[i], "FRAMEWORK", "*.raw"))[0]
        with open(raw, "wb") as f:
            f.write(b"this is not aiprof raw data\n" * 10)
    return dirs


def outputs(d):
    base = os.path.join(d, OUT)
    return {name: open(os.path.join(base, name), "rb").read() for name in sorted(os.listdir(base))}


@pytest.mark.parametrize("workers", [1, 3])
def test_one_failure_among_many(tmp_path, workers):
    from aiprof.profiler.profiler import analyse
    dirs = make_dirs(str(tmp_path), 6, bad=(2,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        analyse(str(tmp_path), max_process_number=workers)
    failures = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)
                and "aiprof analyse:" in str(w.message)]
    assert len(failures) == 1, failures
    assert failures[0].startswith(f"aiprof analyse: {dirs[2]}: analyse: "), failures
    assert "not aiprof raw data" in failures[0]
    assert not os.path.exists(os.path.join(dirs[2], OUT))
    ref = outputs(dirs[0])
    assert "trace_view.json" in ref and "step_trace_time.csv" in ref
    for i in (1, 3, 4, 5):
        assert outputs(dirs[i]) == ref, dirs[i]


def test_ctrl_c_stops_starting_directories(tmp_path):
    """SIGINT while directories are being analysed on threads: those being
    analysed finish, no other starts, KeyboardInterrupt comes out of
    analyse() (as it did from Python's own thread pool)."""
    n = 200  # ~10 ms each here: the interrupt comes long before the end
    make_dirs(str(tmp_path), n)
    code = textwrap.dedent(f"""
        import os, signal, threading, time
        from aiprof.profiler.profiler import analyse
        first = os.path.join({str(tmp_path)!r}, "worker000_20250101000000000_ascend_pt",
                             "ASCEND_PROFILER_OUTPUT", "trace_view.json")
        def interrupt():
            while not os.path.exists(first):
                time.sleep(0.001)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt, daemon=True).start()
        try:
            analyse({str(tmp_path)!r}, max_process_number=4)
        except KeyboardInterrupt:
            print("interrupted")
    """)
    proc = run_python(code, timeout=120)
    assert proc.stdout.strip() == "interrupted", (proc.stdout, proc.stderr)
    done = [d for d in sorted(glob.glob(os.path.join(str(tmp_path), "*_ascend_pt")))
            if os.path.exists(os.path.join(d, OUT))]
    assert 1 <= len(done) < n, len(done)
    print(f"{len(done)} of {n} analysed before the interrupt took effect")
    ref = outputs(done[0])
    for d in done:  # each one started was finished, none half-written
        assert outputs(d) == ref, d
        assert not [f for f in os.listdir(os.path.join(d, OUT)) if ".tmp" in f]
