"""Profiling a PyTorch script that does not import aiprof: the
PROF_CONFIG_PATH mode of dynamic_profile and `aiprof run`, both through
build/python/sitecustomize.py.  Every program runs as a subprocess.
AIPROF_DP_POLL_MS shortens the config watcher's 2 s poll for the tests."""
import collections
import json
import os
import subprocess
import sys
import textwrap
import time

import aiprof
import pytest

from conftest import needs_torch, result_dirs, trace_events, trace_of

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(aiprof.__file__)))
CLI = os.path.join(os.path.dirname(PYDIR), "bin", "aiprof")

pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(PYDIR, "sitecustomize.py")),
                                reason="no sitecustomize.py beside the aiprof package")

# Two optimizers, the discriminator's first: only the newest (Adam) counts
# the steps.  No aiprof import.  argv: steps, progress file, exit status.
SCRIPT = textwrap.dedent("""
    import os, sys, time
    import torch
    steps, progress, status = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    disc = torch.nn.Linear(2, 1)
    opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.randn(4, 8), torch.randn(4, 2)
    for step in range(steps):
        opt.zero_grad()
        opt_d.zero_grad()
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y) + disc(out).mean()
        loss.backward()
        opt_d.step()
        opt.step()
        with open(progress + ".tmp", "w") as f:
            f.write(str(step + 1))
        os.replace(progress + ".tmp", progress)
        time.sleep(0.03)
    print("trained", steps)
    sys.exit(status)
""")


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [PYDIR, env.get("PYTHONPATH")] if p)
    for k in ("PROF_CONFIG_PATH", "AIPROF_QUIET"):
        env.pop(k, None)
    env.update(extra)
    return env


def _script(tmp):
    path = os.path.join(tmp, "train.py")
    with open(path, "w") as f:
        f.write(SCRIPT)
    return path


def _wait_for(pred, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.005)
    raise AssertionError("timed out")


def _progress(path):
    try:
        with open(path) as f:
            return int(f.read() or 0)
    except (OSError, ValueError):
        return 0


def _edit_when_running(proc, cfg_dir, progress, **changes):
    """Once the script made 5 steps, ask for a collection 10 steps later."""
    cfg_file = os.path.join(cfg_dir, "profiler_config.json")
    _wait_for(lambda: os.path.exists(cfg_file) and _progress(progress) >= 5 or
              proc.poll() is not None)
    assert proc.poll() is None, proc.communicate()
    start = _progress(progress) + 10
    with open(cfg_file) as f:
        cfg = json.load(f)
    cfg.update(start_step=start, active=2, warmup=0, activities=["CPU"], **changes)
    with open(cfg_file + ".tmp", "w") as f:
        json.dump(cfg, f)
    os.replace(cfg_file + ".tmp", cfg_file)
    return start


def _names(trace):
    return collections.Counter(e["name"] for e in trace_events(trace) if e.get("ph") == "X")


def _steps(names):
    return sorted(int(n.split("#")[1]) for n in names if n.startswith("ProfilerStep#"))


@needs_torch
def test_prof_config_path_mode(tmp_path):
    cfg_dir, out, progress = str(tmp_path / "cfg"), str(tmp_path / "out"), str(tmp_path / "p")
    proc = subprocess.Popen([sys.executable, _script(str(tmp_path)), "40", progress, "0"],
                            env=_env(PROF_CONFIG_PATH=cfg_dir, AIPROF_DP_POLL_MS="100"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = _edit_when_running(proc, cfg_dir, progress, prof_dir=out, analyse=False,
                               record_shapes=True)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "trained 40" in stdout
    dirs = result_dirs(out)
    assert len(dirs) == 1, (os.listdir(out) if os.path.isdir(out) else None, stderr)
    subprocess.run([CLI, "analyse", dirs[0]], check=True, capture_output=True, timeout=60)
    names = _names(trace_of(dirs[0]))
    assert _steps(names) == [start, start + 1]
    assert names["aten::addmm"] >= 2 and names["aten::mse_loss"] == 2
    # Two optimizers, one count: each collected step holds one step() of each.
    assert names["Optimizer.step#Adam.step"] == 2
    assert names["Optimizer.step#SGD.step"] == 2
    assert os.path.exists(os.path.join(cfg_dir, "log"))


@needs_torch
def test_aiprof_run_whole(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    proc = subprocess.run([CLI, "run", "--dir", str(run_dir), "--record-shapes",
                           "--with-modules", "--with-flops", "--",
                           sys.executable, _script(str(tmp_path)), "6", str(tmp_path / "p"), "3"],
                          env=_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stderr       # the program's exit status
    assert "trained 6" in proc.stdout and "analysed" in proc.stdout
    dirs = result_dirs(str(run_dir))
    assert len(dirs) == 1
    trace = trace_of(dirs[0])
    names = _names(trace)
    assert _steps(names) == list(range(7))         # 6 optimizer steps + the tail to exit
    assert names["aten::addmm"] >= 6 * 3
    assert names["Optimizer.step#Adam.step"] == 6
    addmm = next(e for e in trace_events(trace) if e.get("name") == "aten::addmm")
    assert addmm["args"]["Input Dims"].startswith("[[16], [4, 8]")
    assert addmm["args"]["flops"] == 2 * 4 * 8 * 16                 # --with-flops
    assert addmm["args"]["Module Hierarchy"].startswith("nn.Module: ")  # --with-modules
    processes = [e["args"]["name"] for e in trace_events(trace) if e.get("ph") == "M"
                 and e.get("name") == "process_name"]
    assert "Python" in processes


@needs_torch
def test_aiprof_run_dynamic(tmp_path):
    cfg_dir, run_dir, progress = str(tmp_path / "cfg"), str(tmp_path / "run"), str(tmp_path / "p")
    os.mkdir(run_dir)
    proc = subprocess.Popen([CLI, "run", "--dir", run_dir, "--config", cfg_dir, "--",
                             sys.executable, _script(str(tmp_path)), "40", progress, "0"],
                            env=_env(AIPROF_DP_POLL_MS="100"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    start = _edit_when_running(proc, cfg_dir, progress, prof_dir=run_dir, with_stack=True)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    dirs = result_dirs(run_dir)
    assert len(dirs) == 1, stdout + stderr
    trace = trace_of(dirs[0])
    names = _names(trace)
    assert _steps(names) == [start, start + 1]
    assert names["Optimizer.step#Adam.step"] == 2
    addmm = next(e for e in trace_events(trace) if e.get("name") == "aten::addmm")
    assert "train.py" in addmm["args"]["Call stack"]


@needs_torch
@pytest.mark.parametrize("kind", ["space", "symlink", "file"])
def test_bad_prof_config_path(tmp_path, kind):
    (tmp_path / "real").mkdir()
    if kind == "space":
        path = str(tmp_path / "bad dir")
    elif kind == "symlink":
        path = str(tmp_path / "link")
        os.symlink(tmp_path / "real", path)
    else:
        path = str(tmp_path / "a_file")
        (tmp_path / "a_file").write_text("")
    proc = subprocess.run([sys.executable, _script(str(tmp_path)), "3", str(tmp_path / "p"), "0"],
                          env=_env(PROF_CONFIG_PATH=path), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "trained 3" in proc.stdout
    assert "PROF_CONFIG_PATH" in proc.stderr and "without profiling" in proc.stderr
    assert not os.listdir(tmp_path / "real")
    assert not os.path.exists(os.path.join(path, "profiler_config.json"))


def test_sitecustomize_is_inert_and_chains(tmp_path):
    """Without PROF_CONFIG_PATH / aiprof run nothing is imported; a later
    sitecustomize still runs."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import builtins\nbuiltins.OTHER_SITE = 42\n")
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([PYDIR, str(other)])
    code = ("import builtins, sys; print(getattr(builtins, 'OTHER_SITE', None), "
            "'aiprof' in sys.modules, 'torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=30, check=True)
    assert proc.stdout.split() == ["42", "False", "False"]
    # With PROF_CONFIG_PATH, torch is still not imported at start-up.
    env["PROF_CONFIG_PATH"] = str(tmp_path / "cfg")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=30, check=True)
    assert proc.stdout.split() == ["42", "True", "False"]
    assert os.path.exists(tmp_path / "cfg" / "profiler_config.json")
