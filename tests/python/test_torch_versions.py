"""The package with a torch it cannot fully use (issue: torch 2.x, bad input).

Each case runs in a fresh interpreter: the package must import, profile what
it can (record_function ranges, Python-level events) and say once, as one
RuntimeWarning, what it cannot — never crash at import or at start.
  - no torch at all (the interpreter started with -S: no site-packages);
  - a torch other than the one the adapter was built for (its version
    reported differently before the adapter loads);
  - a torch without torch.distributed (is_available() False);
and, with the torch the adapter was built for, the adapter's version check
names that torch's major.minor (what `make test` builds for each venv).
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import needs_torch

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__import__("aiprof").__file__)))

# Profiles one record_function range (and, when torch is there, an op); prints
# what it recorded and every warning aiprof raised, as JSON.
_BODY = r'''
import json, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import aiprof
    from aiprof import profiler as P
    with P.profile(activities=[P.ProfilerActivity.CPU]) as prof:
        with P.record_function("user_range"):
            if TORCH is not None:
                TORCH.ones(4).add(1)
names = sorted({e.name for e in prof.events()})
print(json.dumps({"names": names,
                  "warnings": [str(w.message) for w in caught if "aiprof" in str(w.message)]}))
'''


def _run(prelude, *flags):
    code = prelude + _BODY
    env = dict(os.environ, PYTHONPATH=PYDIR, AIPROF_QUIET="1")
    p = subprocess.run([sys.executable, *flags, "-c", code], env=env, capture_output=True,
                       text=True, timeout=240)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_no_torch_profiles_ranges():
    # -S: no site-packages, so no torch (the package itself comes from PYTHONPATH)
    got = _run("TORCH = None\n", "-S")
    assert "user_range" in got["names"], got
    assert got["warnings"] == [], got     # nothing to warn: torch is simply not used


@needs_torch
def test_other_torch_version_warns_once_and_profiles_ranges():
    got = _run("import torch\ntorch.__version__ = '0.1.0'\nTORCH = torch\n")
    assert "user_range" in got["names"], got
    assert not any(n.startswith("aten::") for n in got["names"]), got
    adapter = [w for w in got["warnings"] if "built for torch" in w]
    assert len(adapter) == 1 and "0.1.0" in adapter[0], got


@needs_torch
def test_torch_without_distributed():
    got = _run("import torch, torch.distributed\n"
               "torch.distributed.is_available = lambda: False\nTORCH = torch\n")
    assert "user_range" in got["names"] and "aten::add" in got["names"], got
    assert got["warnings"] == [], got


@needs_torch
def test_adapter_is_built_for_this_torch():
    import ctypes
    import torch
    lib = ctypes.CDLL(os.path.join(PYDIR, "aiprof", "libaiprof_torch.so"))
    lib.aiprof_torch_built_for.restype = ctypes.c_char_p
    built = lib.aiprof_torch_built_for().decode()
    assert built == ".".join(torch.__version__.split(".")[:2]), (built, torch.__version__)
