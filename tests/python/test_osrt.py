"""host_sys=[HostSystem.OSRT] (docs/OSRT.md): a Python program that only sets
it, with no `aiprof run`, gets its blocking calls recorded (time.sleep, a
file read, a failing read with its errno, an extension module imported
while recording); `aiprof run --host-sys osrt` records a program that does
not import aiprof; and without OSRT there is no OS Runtime API layer.
Each program runs as a subprocess (patched GOT entries stay in it)."""
import json
import os
import subprocess
import sys
import textwrap

import aiprof
import pytest

from conftest import result_dirs, trace_of

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(aiprof.__file__)))
CLI = os.path.join(os.path.dirname(PYDIR), "bin", "aiprof")

# argv: data file, "osrt" or "none".  Prints what the program itself saw.
IN_PROCESS = textwrap.dedent("""
    import errno, os, sys, time
    from aiprof import profiler as P
    path, mode = sys.argv[1], sys.argv[2]
    with open(path, "wb") as f:
        f.write(b"x" * 100000)
    hs = [P.HostSystem.OSRT] if mode == "osrt" else []
    cfg = P._ExperimentalConfig(host_sys=hs)
    assert "mmap" not in sys.modules
    seen = {}
    with P.profile(activities=[P.ProfilerActivity.CPU], experimental_config=cfg,
                   on_trace_ready=P.tensorboard_trace_handler("./r")):
        time.sleep(0.03)
        with open(path, "rb") as f:
            seen["read"] = len(f.read())
        try:
            os.read(987, 1)
        except OSError as e:
            seen["errno"] = e.errno
        import mmap  # an extension module loaded while recording
        m = mmap.mmap(-1, 1 << 16)
        m.close()
    import json
    print(json.dumps(seen))
""")

PLAIN = textwrap.dedent("""
    import sys, time
    time.sleep(0.03)
    with open(sys.argv[1], "rb") as f:
        print(len(f.read()))
""")


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [PYDIR, env.get("PYTHONPATH")] if p)
    env.pop("AIPROF_QUIET", None)
    env.update(extra)
    return env


def _osrt_layer(trace):
    pids = {e["pid"] for e in trace if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"].get("name") == "OS Runtime API"}
    if not pids:
        return None
    assert len(pids) == 1
    pid = pids.pop()
    assert (pid >> 5) & 31 == 13
    return [e for e in trace if e.get("pid") == pid and e.get("ph") == "X"]


def _sleeps(calls):
    # time.sleep is clock_nanosleep in Python 3.11 (select or nanosleep before)
    return [c for c in calls if c["name"] in ("clock_nanosleep", "nanosleep", "select")
            and float(c["dur"]) >= 30000 - 200]


def test_in_process_records_sleep_read_errno_and_later_modules(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(IN_PROCESS)
    data = tmp_path / "data.bin"
    proc = subprocess.run([sys.executable, str(script), str(data), "osrt"], cwd=tmp_path,
                          env=_env(AIPROF_OSRT_THRESHOLD_NS="0"), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "not collected" not in proc.stderr, proc.stderr  # OSRT is collected here
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen == {"read": 100000, "errno": 9}  # the program's behaviour and errno unchanged
    dirs = result_dirs(str(tmp_path / "r"))
    assert len(dirs) == 1
    calls = _osrt_layer(trace_of(dirs[0]))
    assert calls, "no OS Runtime API layer"
    assert _sleeps(calls), sorted({c["name"] for c in calls})
    reads = [c for c in calls if c["name"] == "read"]
    assert any(c["args"]["Result"] == 100000 or c["args"]["Result"] > 0 for c in reads), reads
    bad = [c for c in reads if c["args"].get("errno name") == "EBADF"]
    assert len(bad) == 1 and bad[0]["args"]["Result"] == -1, bad
    assert any(c["name"] in ("mmap", "mmap64") for c in calls), sorted({c["name"] for c in calls})
    out = subprocess.run([CLI, "summary", dirs[0]], capture_output=True, text=True, timeout=60)
    assert "OS runtime:" in out.stdout, out.stdout


def test_default_threshold_keeps_only_long_calls(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(IN_PROCESS)
    env = _env()
    env.pop("AIPROF_OSRT_THRESHOLD_NS", None)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "d"), "osrt"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    calls = _osrt_layer(trace_of(result_dirs(str(tmp_path / "r"))[0]))
    assert _sleeps(calls)
    assert all(float(c["dur"]) >= 10000 - 1 for c in calls), calls  # 10 ms, in µs


def test_without_osrt_there_is_no_layer(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(IN_PROCESS)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "d"), "none"],
                          cwd=tmp_path, env=_env(AIPROF_OSRT_THRESHOLD_NS="0"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert _osrt_layer(trace_of(result_dirs(str(tmp_path / "r"))[0])) is None


@pytest.mark.skipif(not os.path.exists(CLI), reason="no aiprof command beside the package")
@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="aiprof run puts its library first in LD_PRELOAD, which a "
                           "preloaded ASan refuses (the normal run covers it)")
def test_aiprof_run_host_sys_osrt(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text(PLAIN)
    data = tmp_path / "data.bin"
    data.write_bytes(b"y" * 5000)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    proc = subprocess.run([CLI, "run", "--host-sys", "osrt", "--dir", str(run_dir), "--",
                           sys.executable, str(script), str(data)],
                          env=_env(AIPROF_OSRT_THRESHOLD_NS="0"), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "5000"
    calls = _osrt_layer(trace_of(result_dirs(str(run_dir))[0]))
    assert calls and _sleeps(calls)
    assert any(c["name"] == "read" and c["args"]["Result"] == 5000 for c in calls)


def test_dynamic_profile_host_sys_osrt(tmp_path):
    """dynamic_profile's "experimental_config": {"host_sys": ["osrt"]}: the
    collection it starts records the sleeps (default 10 ms threshold)."""
    with open("start_config.json", "w") as f:
        json.dump({"activities": ["CPU"], "prof_dir": "./started", "analyse": True,
                   "active": 2, "warmup": 0, "start_step": 0,
                   "experimental_config": {"host_sys": ["osrt"]}}, f)
    code = textwrap.dedent("""
        import time
        from aiprof.profiler import dynamic_profile as dp
        dp.init("profiler_config_path")
        for step in range(6):
            if step == 2:
                dp.start("start_config.json")
            time.sleep(0.02)
            dp.step()
    """)
    env = {"AIPROF_DP_POLL_MS": "50"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(**env),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    dirs = result_dirs(str(tmp_path / "started"))
    assert len(dirs) == 1, os.listdir(tmp_path)
    calls = _osrt_layer(trace_of(dirs[0]))
    assert calls, "no OS Runtime API layer"
    sleeps = [c for c in calls if c["name"] in ("clock_nanosleep", "nanosleep", "select")
              and float(c["dur"]) >= 20000 - 200]
    assert len(sleeps) == 2, [(c["name"], c["dur"]) for c in calls]  # active=2 steps


# Every intercepted function Python reaches, fsync and fdatasync first:
# CPython (a non-PIE executable on Debian) passes them as function pointers,
# so its PLT entries are their canonical addresses, and the wrappers once
# took those for the real functions and called themselves (issue 26 §1:
# SIGSEGV).  argv: scratch directory, "inproc" (host_sys=[OSRT]) or "plain"
# (under `aiprof run --host-sys osrt`).  Prints the names it called.
EVERY = textwrap.dedent("""
    import mmap, os, select, socket, sys, threading, time
    tmp, mode = sys.argv[1], sys.argv[2]
    def calls():
        path = os.path.join(tmp, "f.bin")
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
        os.write(fd, b"x" * 4096)
        os.fsync(fd)
        os.fdatasync(fd)
        os.pwrite(fd, b"y", 0)
        os.pread(fd, 1, 0)
        os.writev(fd, [b"a", b"b"])
        os.lseek(fd, 0, 0)
        os.readv(fd, [bytearray(2)])
        os.read(fd, 1)
        m = mmap.mmap(fd, 4096)
        m.close()
        os.close(fd)
        r, w = os.pipe()
        os.write(w, b"z")
        p = select.poll(); p.register(r, select.POLLIN); p.poll(0)
        select.select([r], [], [], 0)
        e = select.epoll(); e.register(r, select.EPOLLIN); e.poll(0); e.close()
        os.close(r); os.close(w)
        a, b = socket.socketpair()
        a.send(b"1"); b.recv(1)
        a.send(b"2"); b.recvfrom(1)
        a.sendmsg([b"3"]); b.recvmsg(1)
        a.close(); b.close()
        srv = socket.socket(socket.AF_UNIX)
        srv.bind("\\0aiprof_osrt_py_%d" % os.getpid()); srv.listen(1)
        c = socket.socket(socket.AF_UNIX); c.connect("\\0aiprof_osrt_py_%d" % os.getpid())
        s, _ = srv.accept(); s.close(); c.close(); srv.close()
        time.sleep(0.001)
        t = threading.Thread(target=time.sleep, args=(0.01,)); t.start(); t.join()
        ev = threading.Event(); ev.wait(0.001)
    if mode == "inproc":
        from aiprof import profiler as P
        cfg = P._ExperimentalConfig(host_sys=[P.HostSystem.OSRT])
        with P.profile(activities=[P.ProfilerActivity.CPU], experimental_config=cfg,
                       on_trace_ready=P.tensorboard_trace_handler(os.path.join(tmp, "r"))):
            calls()
    else:
        calls()
    print("done")
""")

# What CPython's calls above reach in glibc, whatever the build: each entry
# is one call, by the names it may have (the large-file variants where
# CPython is built with 64-bit offsets).
EVERY_EXPECTED = [("open", "open64", "openat", "openat64"), ("write",), ("fsync",),
                  ("fdatasync",), ("pwrite", "pwrite64"), ("pread", "pread64"), ("writev",),
                  ("readv",), ("read",), ("mmap", "mmap64"), ("munmap",), ("close",),
                  ("poll",), ("select",), ("epoll_wait",), ("send",), ("recv",),
                  ("recvfrom",), ("sendmsg",), ("recvmsg",), ("connect",),
                  ("accept", "accept4")]


def _check_every(proc, run_dir):
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "done" in proc.stdout.splitlines(), proc.stdout
    calls = _osrt_layer(trace_of(result_dirs(str(run_dir))[0]))
    names = {c["name"] for c in calls}
    missing = [alts for alts in EVERY_EXPECTED if not names & set(alts)]
    assert not missing, (missing, sorted(names))


def test_every_function_from_python_in_process(tmp_path):
    script = tmp_path / "every.py"
    script.write_text(EVERY)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path), "inproc"],
                          env=_env(AIPROF_OSRT_THRESHOLD_NS="0"), capture_output=True,
                          text=True, timeout=120)
    _check_every(proc, tmp_path / "r")


@pytest.mark.skipif(not os.path.exists(CLI), reason="no aiprof command beside the package")
@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="aiprof run puts its library first in LD_PRELOAD, which a "
                           "preloaded ASan refuses (the normal run covers it)")
def test_every_function_from_python_under_aiprof_run(tmp_path):
    script = tmp_path / "every.py"
    script.write_text(EVERY)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    proc = subprocess.run([CLI, "run", "--host-sys", "osrt", "--dir", str(run_dir), "--",
                           sys.executable, str(script), str(tmp_path), "plain"],
                          env=_env(AIPROF_OSRT_THRESHOLD_NS="0"), capture_output=True,
                          text=True, timeout=120)
    _check_every(proc, run_dir)
