"""dynamic_profile (the seed's dp.init / dp.step / dp.start examples),
each in a fresh process: libaiprof's config watcher is per process.
AIPROF_DP_POLL_MS shortens the library's 2 s poll for the test."""
import glob
import json
import os
import textwrap

from conftest import needs_torch, run_python, slices, trace_of

pytestmark = needs_torch

ENV = {"AIPROF_DP_POLL_MS": "50"}


def test_dp_init_step_with_config_edit():
    code = textwrap.dedent("""
        import json, time, torch
        from aiprof.profiler import dynamic_profile as dp
        x = torch.randn(8, 8)
        def train_one_step():
            return x @ x
        dp.init("profiler_config_path")
        cfg = json.load(open("profiler_config_path/profiler_config.json"))
        cfg.update(start_step=-1, active=2, analyse=True, prof_dir="./prof",
                   record_shapes=True, with_stack=True)
        time.sleep(0.1)
        json.dump(cfg, open("profiler_config_path/profiler_config.json", "w"))
        for step in range(40):
            train_one_step()
            time.sleep(0.01)
            dp.step()
    """)
    run_python(code, env=ENV)
    dirs = glob.glob("prof/*_ascend_pt")
    assert len(dirs) == 1
    trace = trace_of(dirs[0])
    mm = slices(trace, "cpu_op", "aten::mm")
    assert len(mm) == 2  # active=2 steps, one matmul each
    assert mm[0]["args"]["Input Dims"] == "[[8, 8], [8, 8]]"
    assert "train_one_step" in mm[0]["args"]["Call stack"]
    assert glob.glob("profiler_config_path/log/dp_*.log")


def test_dp_start_at_step_5():
    with open("start_config.json", "w") as f:
        json.dump({"activities": ["CPU"], "prof_dir": "./started", "analyse": True,
                   "active": 1, "warmup": 0, "start_step": 0, "with_flops": True}, f)
    code = textwrap.dedent("""
        import torch
        from aiprof.profiler import dynamic_profile as dp
        x = torch.randn(4, 4)
        def train_one_step():
            return x + x
        dp.init("profiler_config_path")
        for step in range(8):
            if step==5:
                dp.start("start_config.json")
            train_one_step()
            dp.step()
    """)
    run_python(code, env=ENV)
    dirs = glob.glob("started/*_ascend_pt")
    assert len(dirs) == 1
    add = slices(trace_of(dirs[0]), "cpu_op", "aten::add")
    assert len(add) == 1
    # with_flops from the config file reaches the collectors: a 4x4 add.
    assert add[0]["args"]["flops"] == 16 and add[0]["args"]["Input Dims"] == "[[4, 4], [4, 4], []]"
    assert os.path.exists("profiler_config_path/profiler_config.json")


def _log_text(pattern):
    text = ""
    for p in glob.glob(pattern):
        with open(p) as f:
            text += f.read()
    return text


def test_dp_fifo_config_does_not_block():
    # profiler_config.json is a FIFO with no writer: init and every step
    # return, the refusal is logged, and a regular file written over it
    # later is an edit like any other (parsed by the config thread).
    os.makedirs("cfg_fifo")
    os.mkfifo("cfg_fifo/profiler_config.json")
    os.mkfifo("start_fifo.json")
    code = textwrap.dedent("""
        import json, os, time, torch
        from aiprof.profiler import dynamic_profile as dp
        x = torch.randn(4, 4)
        dp.init("cfg_fifo")
        t0 = time.monotonic()
        try:
            dp.start("start_fifo.json")   # FIFO, and the init file is a FIFO too
        except Exception as e:
            print("start refused:", type(e).__name__)
        print("start took", time.monotonic() - t0)
        for step in range(40):
            if step == 5:
                with open("cfg_fifo/new.json", "w") as f:
                    json.dump({"start_step": -1, "active": 2, "prof_dir": "./prof_fifo",
                               "activities": ["CPU"]}, f)
                os.rename("cfg_fifo/new.json", "cfg_fifo/profiler_config.json")
            x @ x
            time.sleep(0.02)
            dp.step()
        print("done")
    """)
    proc = run_python(code, env=ENV, timeout=60)
    assert "start refused:" in proc.stdout
    assert "done" in proc.stdout
    assert len(glob.glob("prof_fifo/*_ascend_pt")) == 1
    dp_log = _log_text("cfg_fifo/log/dp_*.log")
    assert "cfg_fifo/profiler_config.json is a FIFO (named pipe), not a regular file" in dp_log
    assert "refusing to read start_fifo.json: it is a FIFO (named pipe), not a regular file" in dp_log
    assert "by the config thread" in dp_log


def test_dp_start_with_directory_or_symlink_config():
    # Neither is read; each is refused with a message saying what it is,
    # and dp.start falls back to the init directory's profiler_config.json.
    os.makedirs("start_dir.json")
    with open("real.json", "w") as f:
        json.dump({"active": 1, "prof_dir": "./started"}, f)
    os.symlink("real.json", "start_link.json")
    os.makedirs("cfg")
    with open("cfg/profiler_config.json", "w") as f:
        json.dump({"active": 1, "prof_dir": "./fallback", "activities": ["CPU"]}, f)
    code = textwrap.dedent("""
        import torch
        from aiprof.profiler import dynamic_profile as dp
        x = torch.randn(4, 4)
        dp.init("cfg")
        for step in range(6):
            if step in (1, 3):
                dp.start("start_dir.json" if step == 1 else "start_link.json")
            x + x
            dp.step()
    """)
    run_python(code, env=ENV)
    assert not glob.glob("started/*_ascend_pt")
    assert len(glob.glob("fallback/*_ascend_pt")) == 2
    dp_log = _log_text("cfg/log/dp_*.log")
    assert "refusing to read start_dir.json: it is a directory, not a regular file" in dp_log
    assert "start_link.json is a symbolic link" in dp_log


def test_dp_init_with_directory_or_symlink_as_profiler_config():
    # A directory there: init returns and logs it; once it is replaced by a
    # regular file, that file is an edit.  A symbolic link: init refuses.
    os.makedirs("cfg_d/profiler_config.json")
    os.makedirs("cfg_l")
    with open("elsewhere.json", "w") as f:
        f.write("{}")
    os.symlink(os.path.abspath("elsewhere.json"), "cfg_l/profiler_config.json")
    code = textwrap.dedent("""
        import json, os, time, torch
        from aiprof.profiler import dynamic_profile as dp
        try:
            dp.init("cfg_l")
        except Exception as e:
            print("link refused:", e)
        dp.init("cfg_d")
        x = torch.randn(4, 4)
        for step in range(40):
            if step == 5:
                os.rmdir("cfg_d/profiler_config.json")
                with open("cfg_d/new.json", "w") as f:
                    json.dump({"start_step": -1, "active": 1, "prof_dir": "./prof_d",
                               "activities": ["CPU"]}, f)
                os.rename("cfg_d/new.json", "cfg_d/profiler_config.json")
            x @ x
            time.sleep(0.02)
            dp.step()
    """)
    proc = run_python(code, env=ENV)
    assert "link refused:" in proc.stdout and "symbolic link" in proc.stdout
    assert len(glob.glob("prof_d/*_ascend_pt")) == 1
    assert "profiler_config.json is a directory, not a regular file" in _log_text(
        "cfg_d/log/dp_*.log")


def test_dp_profile_memory_labels_while_the_library_records():
    """profile_memory labels in dynamic collections, which keep their
    collectors on from the start, warmup included: labels go on when the
    library records, not before (a label given during warmup is dropped,
    and the optimizer would count as labelled for the trace).  Collection 1
    sees the optimizer step; collection 2 has a warmup step and a recorded
    step, both training; collection 3 is forward-only, so the optimizer is
    labelled when it starts.  Each has the parameters as PARAMETER."""
    import gzip
    for name, warmup in (("c0.json", 0), ("c1.json", 1)):
        with open(name, "w") as f:
            json.dump({"activities": ["CPU"], "prof_dir": "./mem", "analyse": True,
                       "active": 1, "warmup": warmup, "start_step": 0,
                       "profile_memory": True}, f)
    code = textwrap.dedent("""
        import glob, os, torch
        from aiprof.profiler import dynamic_profile as dp, _memory_timeline
        torch.manual_seed(0)
        model = torch.nn.Linear(64, 32)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(4, 64)
        dp.init("profiler_config_path")
        for step in range(10):
            if step in (0, 2, 6):
                dp.start("c1.json" if step == 2 else "c0.json")
            if step < 4:  # collections 1 and 2 train, 3 does not
                model(x).sum().backward()
                opt.step()
            with torch.no_grad():
                model(x)
            dp.step()
        dirs = sorted(glob.glob("mem/*_ascend_pt"), key=os.path.getmtime)
        assert len(dirs) == 3, dirs
        for i, d in enumerate(dirs):
            _memory_timeline.write(d, f"mem{i}.raw.json.gz", "cpu")
    """)
    run_python(code, env=ENV)
    parameter, preexisting = 0, 1  # torch's category and action numbers
    for i in range(3):
        with gzip.open(f"mem{i}.raw.json.gz", "rt") as f:
            raw = json.load(f)
        live = sum(n for _, action, n, category in raw
                   if category == parameter and action == preexisting)
        assert live == (64 * 32 + 32) * 4, (i, raw[:8])


def _segment_name(config_dir):
    # dyn_watch.c's aip__dyn_watch_name: FNV-1a of the real path, its seed
    h = 1469598103934665603
    for b in os.path.realpath(config_dir).encode():
        h = ((h ^ b) * 1099511628211) & (2 ** 64 - 1)
    return "/dev/shm/aiprof_dp_%d_%016x" % (os.getuid(), h)


def test_dp_init_refuses_a_segment_open_to_others(tmp_path):
    """Another local user pre-created the directory's shared-memory segment,
    world-writable (issue 27, defect 3): init() refuses it with a warning
    naming the problem, and training goes on, its steps no-ops."""
    cfg_dir = tmp_path / "cfg"
    cfg_dir.mkdir()
    seg = _segment_name(str(cfg_dir))
    fd = os.open(seg, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        os.fchmod(fd, 0o666)
        code = textwrap.dedent(f"""
            import warnings
            from aiprof.profiler import dynamic_profile as dp
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                dp.init({str(cfg_dir)!r})
            print([str(x.message) for x in w])
            for step in range(5):
                dp.step()
            dp.start()
            print("trained")
        """)
        proc = run_python(code, env=ENV)
        assert "trained" in proc.stdout
        assert "is open to other users (mode 0666" in proc.stdout, proc.stdout
        assert os.stat(seg).st_mode & 0o777 == 0o666  # not ours to change
    finally:
        os.close(fd)
        os.unlink(seg)
