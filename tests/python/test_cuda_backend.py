"""The CUDA back end seen from Python (docs/CUDA.md): a process that has not
loaded CUDA is told so without aiprof loading any CUDA library into it;
activities=[ProfilerActivity.CUDA] in a process that has loaded the CUDA
runtime but has no GPU or driver (the build machines) gives a host-only
profile whose profiler_info.json and one warning say why; the machine's
answer (supported_activities) claims CUDA only where a driver is found.
Skipped when libaiprof was built without the CUPTI headers."""
import json
import os

import pytest

from aiprof import _C
from conftest import result_dirs, run_python

CUDART = "/usr/local/cuda/lib64/libcudart.so"

def _has_driver():
    """libcuda.so.1 loads (asked in a child: this process stays clean)."""
    return run_python("import ctypes; ctypes.CDLL('libcuda.so.1')", check=False).returncode == 0


pytestmark = pytest.mark.skipif("CUDA:" not in _C.device_status()[1],
                                reason="libaiprof built without the CUDA back end")


def test_status_does_not_load_cuda():
    out = run_python(
        "from aiprof import _C\n"
        "print(_C.device_status()[1])\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('cupti' in maps, 'libcuda.so' in maps, 'libcudart' in maps)\n").stdout
    why, loaded = out.splitlines()
    assert "CUDA: the program has not loaded CUDA" in why
    assert loaded == "False False False"


@pytest.mark.skipif(not os.path.exists(CUDART), reason="no CUDA runtime at " + CUDART)
def test_cuda_activity_without_gpu_gives_host_profile():
    if _has_driver():
        pytest.skip("a CUDA driver is installed: this is the no-GPU case")
    proc = run_python(
        "import ctypes, warnings\n"
        f"ctypes.CDLL({CUDART!r})\n"
        "import aiprof as torch_npu\n"
        "P = torch_npu.profiler\n"
        "for i in range(2):\n"
        "    with P.profile(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA],\n"
        "                   on_trace_ready=P.tensorboard_trace_handler('./r')):\n"
        "        with P.record_function('host_work'):\n"
        "            pass\n")
    # one warning for the process, however many profiles
    assert proc.stderr.count("no device data can be collected") == 1, proc.stderr
    assert "CUDA: " in proc.stderr
    dirs = result_dirs("./r")
    assert len(dirs) == 2
    for d in dirs:
        with open(os.path.join(d, "profiler_info.json")) as f:
            info = json.load(f)
        status = info["aiprof"]["device_status"]
        # the runtime is loaded: the reason is CUPTI's or the driver's, not "not loaded"
        assert "CUDA: " in status and "has not loaded CUDA" not in status, status
        assert not os.path.exists(os.path.join(d, "ASCEND_PROFILER_OUTPUT",
                                               "kernel_details.csv"))


def test_machine_answer_claims_cuda_only_with_a_driver():
    from aiprof import profiler as P
    if _has_driver():
        pytest.skip("a CUDA driver is installed: the answer depends on its GPU")
    assert P.ProfilerActivity.CUDA not in P.supported_activities()


def test_cuda_activity_without_driver_says_so_once():
    """activities=[CUDA] where no CUDA driver is installed at all (a pip
    torch without CUDA, a machine without a GPU): one warning, which says
    that first, whatever the number of profiles."""
    import ctypes.util
    if ctypes.util.find_library("cuda"):
        pytest.skip("a CUDA driver is installed: this is the no-driver case")
    proc = run_python(
        "import aiprof as torch_npu\n"
        "P = torch_npu.profiler\n"
        "for i in range(2):\n"
        "    with P.profile(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA],\n"
        "                   on_trace_ready=P.tensorboard_trace_handler('./r')):\n"
        "        with P.record_function('host_work'):\n"
        "            pass\n")
    assert proc.stderr.count("RuntimeWarning") == 1, proc.stderr
    assert proc.stderr.count("this machine has no CUDA driver (libcuda.so.1 is not "
                             "installed)") == 1, proc.stderr
    assert "CUDA activity requested, but no device data" in proc.stderr
    assert len(result_dirs("./r")) == 2
