"""The OpenCL back end with pyopencl: a script unaware of aiprof under
`aiprof run`, and a script that imports aiprof before pyopencl and profiles
with ProfilerActivity.NPU (libaiprof is loaded RTLD_GLOBAL, so pyopencl
binds its OpenCL calls to aiprof's wrappers).  What was recorded is read
back with ocl_dump (tests/e2e/opencl): one task per enqueue, the kernel's
name and sizes, the launching calls' parent.  Skips without pyopencl or an
OpenCL device.  Every program runs as a subprocess."""
import os
import subprocess
import sys
import textwrap

import aiprof
import pytest

from conftest import result_dirs

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(aiprof.__file__)))
BIN = os.path.join(os.path.dirname(PYDIR), "bin")
CLI = os.path.join(BIN, "aiprof")
DUMP = os.path.join(BIN, "ocl_dump")


def _opencl_skip_reason():
    if not os.path.exists(DUMP):
        return "ocl_dump was not built (no OpenCL headers or libOpenCL)"
    probe = subprocess.run(
        [sys.executable, "-c", "import pyopencl as cl; "
         "print(sum(len(p.get_devices()) for p in cl.get_platforms()))"],
        capture_output=True, text=True)
    if probe.returncode != 0:
        return "pyopencl is missing or finds no platform: " + probe.stderr.strip()[-200:]
    if probe.stdout.strip() in ("", "0"):
        return "no OpenCL device"
    return None


_REASON = _opencl_skip_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")

KERNELS = 10
BODY = """
import numpy as np, pyopencl as cl
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
n = 4096
a = np.arange(n, dtype=np.float32)
mf = cl.mem_flags
a_g = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
r_g = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
prg = cl.Program(ctx, "__kernel void twice(__global const float *a, __global float *r)"
                      "{ int i = get_global_id(0); r[i] = 2 * a[i]; }").build()
k = prg.twice
def work():
    for i in range(%d):
        k(q, (n,), (64,), a_g, r_g)
    r = np.empty_like(a)
    cl.enqueue_copy(q, r, r_g)
    q.finish()
    return float(r.sum())
""" % KERNELS

RUN_SCRIPT = BODY + "print('sum', work())\n"

SESSION_SCRIPT = "import sys, aiprof\n" + BODY + textwrap.dedent("""
    from aiprof.profiler import profile, ProfilerActivity, tensorboard_trace_handler, record_function
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],
                 on_trace_ready=tensorboard_trace_handler(sys.argv[1])):
        with record_function("work"):
            s = work()
    print('sum', s)
""")


def dump(result_dir):
    out = subprocess.run([DUMP, result_dir], capture_output=True, text=True, check=True).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    return {kind: [r[1:] for r in rows if r[0] == kind]
            for kind in ("device", "call", "task", "memory", "align", "stats")}


def check_tasks(d):
    tasks = d["task"]
    kernels = [t for t in tasks if t[1] == "twice"]
    assert len(kernels) == KERNELS, tasks
    assert all(t[0] == "clEnqueueNDRangeKernel" and t[7] == "4096" and t[10] == "64"
               for t in kernels), kernels
    copies = [t for t in tasks if t[0] == "clEnqueueReadBuffer"]
    assert len(copies) == 1 and copies[0][1] == "Memcpy DtoH" and copies[0][6] == "16384"
    assert len(tasks) == KERNELS + 1
    n_tasks, with_call = int(d["stats"][0][0]), int(d["stats"][0][1])
    assert n_tasks == with_call == KERNELS + 1
    early, late, checked = (int(x) for x in d["align"][0])
    assert early == 0 and late == 0 and checked == n_tasks
    assert len(d["device"]) == 1 and 0 <= int(d["device"][0][5]) <= 5000


def plain_sum(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text(RUN_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True).stdout
    return [line for line in out.splitlines() if line.startswith("sum")]


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="`aiprof run` puts its libraries first in LD_PRELOAD, which ASan "
                           "refuses (tests/e2e/test_opencl.sh covers aiprof run)")
def test_pyopencl_under_aiprof_run(tmp_path):
    script = tmp_path / "kernels.py"
    script.write_text(RUN_SCRIPT)
    env = dict(os.environ, AIPROF_QUIET="1")
    out = subprocess.run([CLI, "run", "--dir", str(tmp_path / "run"), "--", sys.executable,
                          str(script)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert [line for line in out.stdout.splitlines() if line.startswith("sum")] == \
        plain_sum(tmp_path)
    (d,) = result_dirs(str(tmp_path / "run"))
    check_tasks(dump(d))


def test_pyopencl_imported_after_aiprof_profiles_without_aiprof_run(tmp_path):
    script = tmp_path / "session.py"
    script.write_text(SESSION_SCRIPT)
    out = subprocess.run([sys.executable, str(script), str(tmp_path / "prof")],
                         capture_output=True, text=True,
                         env=dict(os.environ, AIPROF_QUIET="1"))
    assert out.returncode == 0, out.stderr
    assert [line for line in out.stdout.splitlines() if line.startswith("sum")] == \
        plain_sum(tmp_path)
    (d,) = result_dirs(str(tmp_path / "prof"))
    got = dump(d)
    check_tasks(got)
    # The record_function open around the enqueues is their parent.
    launching = [c for c in got["call"] if c[3] != "0"]
    assert len(launching) == KERNELS + 1 and all(c[4] == "work" for c in launching), launching


def test_pyopencl_imported_before_aiprof_is_said(tmp_path):
    script = tmp_path / "late.py"
    script.write_text("import warnings, pyopencl\n"
                      "with warnings.catch_warnings(record=True) as w:\n"
                      "    warnings.simplefilter('always')\n"
                      "    import aiprof\n"
                      "print([str(x.message) for x in w])\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True)
    assert "pyopencl was imported before aiprof" in out.stdout
