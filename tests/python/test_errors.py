"""Bad input and misuse: each gives a clear TypeError/ValueError naming the
parameter, or a RuntimeError saying what was wrong — before anything is
started, so the process is left as it was."""
import json
import os
import signal
import textwrap
import warnings

import pytest

import aiprof
from aiprof import profiler as P
from conftest import needs_torch, result_dirs, run_python, slices, trace_of

BOOL_PARAMS = ["record_shapes", "profile_memory", "with_stack", "with_flops", "with_modules"]


@pytest.mark.parametrize("name", BOOL_PARAMS)
@pytest.mark.parametrize("cls", [P.profile, P._KinetoProfile])
def test_bool_parameters(cls, name):
    with pytest.raises(TypeError, match=name):
        cls(**{name: "yes"})


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(activities="CPU"), TypeError, "activities"),
    (dict(activities=[1]), ValueError, "activities"),
    (dict(activities=[]), ValueError, "activities"),
    (dict(schedule=5), TypeError, "schedule"),
    (dict(on_trace_ready=5), TypeError, "on_trace_ready"),
    (dict(experimental_config={"mstx": True}), TypeError, "experimental_config"),
    (dict(use_cuda="no"), TypeError, "use_cuda"),
])
def test_profile_parameters(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        P.profile(**kwargs)


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(wait=-1, active=1), ValueError, "wait"),
    (dict(wait=0, active=0), ValueError, "active"),
    (dict(wait=0, active=1, warmup=-2), ValueError, "warmup"),
    (dict(wait=0, active=1, repeat=-1), ValueError, "repeat"),
    (dict(wait=0, active=1, skip_first=-1), ValueError, "skip_first"),
    (dict(wait=1.5, active=1), TypeError, "wait"),
    (dict(wait=0, active=True), TypeError, "active"),
])
def test_schedule_parameters(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        P.schedule(**kwargs)


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(profiler_level="Level9"), ValueError, "profiler_level"),
    (dict(profiler_level=P.ProfilerLevel.Level1, aic_metrics="fast"), ValueError, "aic_metrics"),
    (dict(gc_detect_threshold=-1), ValueError, "gc_detect_threshold"),
    (dict(gc_detect_threshold="1"), TypeError, "gc_detect_threshold"),
    (dict(l2_cache=1), TypeError, "l2_cache"),
    (dict(op_attr="x"), TypeError, "op_attr"),
    (dict(data_simplification=None), TypeError, "data_simplification"),
    (dict(record_op_args=0), TypeError, "record_op_args"),
    (dict(msprof_tx="on"), TypeError, "msprof_tx"),
    (dict(mstx=1), TypeError, "mstx"),
    (dict(host_sys=["gpu"]), ValueError, "host_sys"),
    (dict(host_sys="cpu"), TypeError, "host_sys"),
    (dict(mstx_domain_include="abc"), TypeError, "mstx_domain_include"),
    (dict(mstx_domain_exclude=[""]), ValueError, "mstx_domain_exclude"),
    (dict(sys_io="y"), TypeError, "sys_io"),
    (dict(sys_interconnection=2), TypeError, "sys_interconnection"),
])
def test_experimental_config_parameters(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        P._ExperimentalConfig(**kwargs)


def test_experimental_config_documented_fallbacks():
    # Seed: an invalid export_type falls back to Text.
    with pytest.warns(UserWarning, match="export_type"):
        cfg = P._ExperimentalConfig(export_type="xml")
    assert cfg.export_type == [P.ExportType.Text]
    # torch_npu: AI Core metrics need Level1/2; reset at Level0.
    with pytest.warns(UserWarning, match="aic_metrics"):
        cfg = P._ExperimentalConfig(aic_metrics=P.AiCMetrics.PipeUtilization)
    assert cfg.aic_metrics == P.AiCMetrics.AiCoreNone
    # Level1 defaults to PipeUtilization; Level_none forces mstx; msprof_tx = mstx.
    assert P._ExperimentalConfig(profiler_level=P.ProfilerLevel.Level1).aic_metrics == \
        P.AiCMetrics.PipeUtilization
    assert P._ExperimentalConfig(profiler_level=P.ProfilerLevel.Level_none).mstx
    assert P._ExperimentalConfig(msprof_tx=True).mstx
    with pytest.warns(UserWarning, match="only mstx_domain_include"):
        cfg = P._ExperimentalConfig(mstx=True, mstx_domain_include=["a"],
                                    mstx_domain_exclude=["b"])


@pytest.mark.parametrize("name", ["mstx_domain_include", "mstx_domain_exclude"])
def test_mstx_domains_without_mstx_warn(name):
    # Seed (guide.md, experimental_config): the domain lists need mstx=True
    # (Level_none turns mstx on, as in torch_npu).
    with pytest.warns(UserWarning, match=f"{name} has no effect without mstx=True"):
        P._ExperimentalConfig(**{name: ["d"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P._ExperimentalConfig(mstx=True, **{name: ["d"]})
        P._ExperimentalConfig(msprof_tx=True, **{name: ["d"]})
        P._ExperimentalConfig(profiler_level=P.ProfilerLevel.Level_none, **{name: ["d"]})


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(dir_name="bad dir!"), ValueError, "dir_name"),
    (dict(dir_name="res\n"), ValueError, "dir_name"),  # a final newline is no path character
    (dict(dir_name="r\u00e9s"), ValueError, "dir_name"),
    (dict(dir_name=3), TypeError, "dir_name"),
    (dict(dir_name=b"res"), TypeError, "dir_name"),
    (dict(worker_name="a/b"), ValueError, "worker_name"),
    (dict(worker_name="w\n"), ValueError, "worker_name"),
    (dict(worker_name="x" * 300), ValueError, "worker_name"),
    (dict(analyse_flag="y"), TypeError, "analyse_flag"),
    (dict(async_mode=1), TypeError, "async_mode"),
])
def test_trace_handler_parameters(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        P.tensorboard_trace_handler(**kwargs)


def test_lifecycle_errors():
    prof = P.profile()
    with pytest.raises(RuntimeError, match="before start"):
        prof.stop()
    with pytest.raises(RuntimeError, match="not started"):
        prof.step()
    prof.start()
    with pytest.raises(RuntimeError, match="already started"):
        prof.start()
    with pytest.raises(RuntimeError, match="cannot be nested"):
        P.profile().start()
    with pytest.raises(RuntimeError, match="cannot be nested"):
        with P._KinetoProfile():
            pass
    prof.stop()
    with pytest.raises(RuntimeError, match="already stopped"):
        prof.stop()
    # After a refused start, the next profile starts normally.
    with P.profile():
        pass


def test_dynamic_profile_before_init_names_init():
    # A fresh process: libaiprof's dynamic state is per process.
    code = textwrap.dedent("""
        from aiprof.profiler import dynamic_profile as dp
        for call in (dp.step, dp.start):
            try:
                call()
            except RuntimeError as e:
                print(e)
    """)
    out = run_python(code).stdout.splitlines()
    assert out == ["dynamic_profile.step() called before dynamic_profile.init(path)",
                   "dynamic_profile.start() called before dynamic_profile.init(path)"]


def test_kineto_profile_has_no_step():
    k = P._KinetoProfile()
    assert not hasattr(k, "step")
    with pytest.raises(AttributeError, match="schedule"):
        k.step()


def test_exception_in_block_saves_trace():
    ready = []
    with pytest.raises(ZeroDivisionError):
        with P.profile(on_trace_ready=lambda p: ready.append(p)) as prof:
            with P.record_function("before_error"):
                pass
            1 / 0
    assert ready == [prof]
    events = prof.events()
    assert [e.name for e in events] == ["before_error"]
    with P.profile():  # nothing left running
        pass


def test_handler_exception_comes_out_of_step():
    calls = []

    def handler(prof):
        calls.append(prof.step_num)
        if len(calls) == 1:
            raise KeyError("from handler")
    prof = P.profile(schedule=P.schedule(wait=0, active=1), on_trace_ready=handler)
    prof.start()
    with pytest.raises(KeyError, match="from handler"):
        prof.step()
    prof.step()  # the profile goes on: the next trace is saved
    prof.stop()
    assert calls == [1, 2, 2]


def test_schedule_function_errors_come_out_of_step():
    """A schedule function that raises, or returns no ProfilerAction: the
    error comes out of the start()/step() that asked, that step records
    nothing, and the profile goes on."""
    def life(step):
        if step == 2:
            raise KeyError("schedule says no")
        if step == 3:
            return "RECORD"
        if step == 4:
            return 7
        return P.ProfilerAction.RECORD_AND_SAVE
    saved = []
    prof = P.profile(schedule=life, on_trace_ready=lambda p: saved.append(p.step_num))
    prof.start()
    prof.step()  # step 1: saves step 0's trace
    with pytest.raises(KeyError, match="schedule says no"):
        prof.step()
    with pytest.raises(TypeError, match="schedule\\(3\\) returned 'RECORD'"):
        prof.step()
    with pytest.raises(TypeError, match="schedule\\(4\\) returned 7"):
        prof.step()
    prof.step()  # step 5 records again
    prof.stop()
    assert saved == [1, 2, 5]
    with pytest.raises(ZeroDivisionError):  # at step 0: out of start(), not started
        P.profile(schedule=lambda step: 1 / 0).start()
    with P.profile(schedule=lambda step: 2):  # an int value is an action
        pass


@pytest.mark.parametrize("call", ["stop", "step"])
def test_stop_or_step_inside_on_trace_ready(call):
    # Refused with a RuntimeError naming the call; the profile keeps running
    # and can be stopped, and the next profile starts.
    errors = []

    def handler(prof):
        try:
            getattr(prof, call)()
        except RuntimeError as e:
            errors.append(str(e))
    prof = P.profile(schedule=P.schedule(wait=0, active=1), on_trace_ready=handler)
    prof.start()
    prof.step()
    assert len(errors) == 1 and f"{call}() cannot be called from inside on_trace_ready" \
        in errors[0]
    prof.step()  # still running: the schedule goes on
    prof.stop()
    assert len(errors) == 3
    with P.profile():
        pass


def test_uncaught_stop_inside_on_trace_ready_leaves_no_profile_running():
    prof = P.profile(schedule=P.schedule(wait=0, active=1),
                     on_trace_ready=lambda p: p.stop())
    prof.start()
    with pytest.raises(RuntimeError, match=r"stop\(\) cannot be called from inside"):
        prof.step()
    # The handler's error comes out of stop() too, after the profile stopped.
    with pytest.raises(RuntimeError, match=r"stop\(\) cannot be called from inside"):
        prof.stop()
    with P.profile():
        pass


@pytest.mark.parametrize("call, word", [
    (lambda: P.schedule(wait=2**64, active=1), "wait"),
    (lambda: P.schedule(wait=0, active=2**63), "active"),
    (lambda: P.schedule(wait=0, active=1, skip_first=2**70), "skip_first"),
    (lambda: P.schedule(0, 1)(2**70), "step"),
    (lambda: aiprof.mstx.range_end(2**70), "range_id"),
    (lambda: P.profile().add_metadata("k\0", "v"), "key"),
    (lambda: P.profile().add_metadata("k", "v\0"), "value"),
    (lambda: P.profile().add_metadata_json("k", "\"\ud800\""), "value"),
])
def test_out_of_range_values_name_the_parameter(call, word):
    # Not OverflowError "int too big to convert" / "embedded null character".
    with pytest.raises(ValueError, match=word):
        call()


def test_metadata_errors():
    prof = P.profile()
    with pytest.raises(TypeError, match="key"):
        prof.add_metadata(1, "x")
    with pytest.raises(TypeError, match="value"):
        prof.add_metadata("k", 2)
    with pytest.raises(ValueError, match="JSON"):
        prof.add_metadata_json("k", "{not json")
    with prof:
        with pytest.raises(ValueError, match="JSON"):
            prof.add_metadata_json("k", "[1,")


def test_result_errors():
    prof = P.profile()
    with pytest.raises(RuntimeError, match="no trace"):
        prof.export_chrome_trace("t.json")
    with pytest.raises(RuntimeError, match=r"export_stacks\(\): no trace has been saved yet"):
        prof.export_stacks("s.log")
    assert not os.path.exists("s.log")
    assert len(prof.key_averages()) == 0 and prof.key_averages().table() == ""
    with prof:
        with P.record_function("x"):
            pass
    with pytest.raises(ValueError, match="metric"):
        prof.export_stacks("s.txt", metric="cpu_time")
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="fastest")
    with pytest.raises(TypeError, match="group_by_input_shape"):
        prof.key_averages(group_by_input_shape="yes")
    with pytest.raises(ValueError, match="path"):
        prof.export_chrome_trace("bad name?.json")
    with pytest.raises(ValueError, match="device"):
        prof.export_memory_timeline("m.json", device="tpu:0")
    with pytest.raises(ValueError, match="output_path"):
        prof.export_memory_timeline("m.png")


def test_mstx_and_itt_errors():
    with pytest.raises(TypeError, match="message"):
        aiprof.mstx.mark(123)
    with pytest.raises(ValueError, match="message"):
        aiprof.mstx.range_start("")
    with pytest.raises(TypeError, match="domain"):
        aiprof.mstx.range_start("m", domain=5)
    with pytest.raises(TypeError, match="range_id"):
        aiprof.mstx.range_end("1")
    with pytest.raises(TypeError, match="msg"):
        P.itt.range_push(None)
    with pytest.raises(TypeError, match="name"):
        P.record_function(5)
    # A NUL would cut the name in the C core: refused, recording or not.
    with pytest.raises(ValueError, match="name must not contain a NUL"):
        P.record_function("a\0b")
    with pytest.raises(ValueError, match="message must not contain a NUL"):
        aiprof.mstx.mark("a\0b")
    with pytest.raises(ValueError, match="domain is not valid UTF-8"):
        aiprof.mstx.range_start("m", domain="\ud800")


def test_analyse_errors(recwarn):
    from aiprof.profiler.profiler import analyse
    with pytest.raises(ValueError, match="profiler_path"):
        analyse(profiler_path="./does_not_exist")
    with pytest.raises(ValueError, match="profiler_path"):
        analyse(profiler_path="bad path!")
    os.mkdir("empty")
    analyse("./empty", max_process_number=0)  # seed: invalid → default, with warnings
    messages = " ".join(str(w.message) for w in recwarn.list)
    assert "max_process_number" in messages and "no *_ascend_pt" in messages


def test_tilde_in_paths_is_expanded(tmp_path, monkeypatch):
    # A leading ~ means $HOME in every path parameter, checked and expanded
    # at once (the C core takes no '~'), and never a literal ./~ directory.
    from aiprof.profiler.profiler import analyse
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    handler = P.tensorboard_trace_handler("~/res")
    assert handler.dir_name == str(home / "res")
    with P.profile(on_trace_ready=handler) as prof:
        with P.record_function("x"):
            pass
    assert len(result_dirs(str(home / "res"))) == 1
    prof.export_chrome_trace("~/t.json")
    prof.export_stacks("~/s.log")
    assert (home / "t.json").exists() and (home / "s.log").exists()
    analyse("~/res", max_process_number=1)
    assert not os.path.exists("~")
    with pytest.raises(ValueError, match="dir_name"):
        P.tensorboard_trace_handler("a/~b")
    with pytest.raises(ValueError, match="profiler_path"):
        analyse("~nosuchuser_aiprof/res")


@pytest.mark.parametrize("export_type", [None, "bogus", ["bogus"]])
def test_analyse_invalid_export_type_uses_the_traces_own(export_type):
    # Seed (guide.md, offline analysis): an invalid or missing export_type
    # reads export_type from profiler_info.json; here the trace recorded Db.
    from aiprof.profiler.profiler import analyse
    cfg = P._ExperimentalConfig(export_type=[P.ExportType.Db])
    with P.profile(experimental_config=cfg,
                   on_trace_ready=P.tensorboard_trace_handler("./r", analyse_flag=False)):
        with P.record_function("x"):
            pass
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        analyse("./r", max_process_number=1, export_type=export_type)
    out = os.listdir(os.path.join(result_dirs("./r")[0], "ASCEND_PROFILER_OUTPUT"))
    assert any(f.endswith(".db") for f in out)
    assert "trace_view.json" not in out
    messages = [str(w.message) for w in caught]
    if export_type is not None:
        assert any("'bogus'" in m and "profiler_info.json" in m for m in messages), messages


@needs_torch
def test_ctrl_c_saves_an_analysable_trace(tmp_path):
    """SIGINT in the middle of a recorded step, with start()/stop() and no
    try/finally: the KeyboardInterrupt ends the program, the profile is
    stopped at exit and the trace can be analysed."""
    code = textwrap.dedent("""
        import os, signal, torch, aiprof as torch_npu
        x = torch.randn(16, 16)
        prof = torch_npu.profiler.profile(
            schedule=torch_npu.profiler.schedule(wait=0, active=100),
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./ctrlc", analyse_flag=False))
        prof.start()
        for step in range(50):
            y = x @ x
            if step == 3:
                os.kill(os.getpid(), signal.SIGINT)
            prof.step()
    """)
    proc = run_python(code, check=False)
    assert proc.returncode != 0 and "KeyboardInterrupt" in proc.stderr
    dirs = result_dirs("./ctrlc")
    assert len(dirs) == 1
    from aiprof.profiler.profiler import analyse
    analyse("./ctrlc")
    trace = trace_of(dirs[0])
    assert len(slices(trace, "cpu_op", "aten::mm")) == 4


@needs_torch
def test_sigkill_leaves_analysable_raw_data():
    """Killed without any chance to clean up: the raw data written so far
    is still analysable (the writer flushes full buffers as it goes)."""
    code = textwrap.dedent("""
        import os, signal, torch, aiprof as torch_npu
        x = torch.randn(4, 4)
        prof = torch_npu.profiler.profile()
        prof.start()
        for i in range(60000):
            x.add(1)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = run_python(code, check=False, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    dirs = result_dirs(".")
    assert len(dirs) == 1
    aiprof._C.analyse_dir(dirs[0])
    assert len(slices(trace_of(dirs[0]), "cpu_op", "aten::add")) > 1000
    with open(os.path.join(dirs[0], "profiler_info.json")) as f:
        assert "config" in json.load(f)


def test_exports_refuse_symlinks_and_keep_modes(tmp_path):
    """export_chrome_trace / export_stacks / use_gzip's trace_view.json.gz
    follow libaiprof's rules for its own files: no symbolic link on the
    path (an OSError naming it, nothing written through it), directories
    0750 and files 0640 at most even under umask 000."""
    import stat
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "dirlink")
    (tmp_path / "victim").write_text("keep")
    os.symlink(tmp_path / "victim", tmp_path / "t.json")
    old = os.umask(0)
    try:
        with P.profile(with_stack=True, on_trace_ready=P.tensorboard_trace_handler(
                str(tmp_path / "r"), use_gzip=True)) as prof:
            aiprof.mstx.mark("m")
        for bad in ("t.json", "dirlink/t.json", "dirlink/t.json.gz"):
            with pytest.raises(OSError, match="symbolic link"):
                prof.export_chrome_trace(str(tmp_path / bad))
        with pytest.raises(OSError, match="symbolic link"):
            prof.export_stacks(str(tmp_path / "dirlink" / "s.txt"))
        assert (tmp_path / "victim").read_text() == "keep"
        assert not os.listdir(tmp_path / "real")
        prof.export_chrome_trace(str(tmp_path / "out" / "sub" / "t.json"))
        prof.export_chrome_trace(str(tmp_path / "out" / "t.json.gz"))
        prof.export_stacks(str(tmp_path / "out" / "s.txt"))
    finally:
        os.umask(old)
    written = [tmp_path / "out", tmp_path / "out" / "sub"] + \
        [p for p in (tmp_path / "out").rglob("*") if p.is_file()] + \
        list((tmp_path / "r").rglob("trace_view.json.gz"))
    assert len(written) == 6
    for p in written:
        limit = 0o750 if p.is_dir() else 0o640
        assert stat.S_IMODE(p.stat().st_mode) & ~limit == 0, (p, oct(p.stat().st_mode))


def test_export_under_a_file_names_the_file(tmp_path):
    """A path that runs through a regular file: the error names that file,
    not only the whole path (the OS's bare "Not a directory")."""
    (tmp_path / "plain").write_text("keep")
    prof = P._KinetoProfile()
    prof.start()
    aiprof.mstx.mark("m")
    prof.stop()
    for bad in ("plain/t.json", "plain/sub/t.json.gz"):
        with pytest.raises(NotADirectoryError, match=f"{tmp_path / 'plain'} is a file"):
            prof.export_chrome_trace(str(tmp_path / bad))
    with pytest.raises(NotADirectoryError, match="is a file, not a directory"):
        prof.export_stacks(str(tmp_path / "plain/s.txt"))
    assert (tmp_path / "plain").read_text() == "keep"


def test_interrupted_analysis_says_how_to_finish(monkeypatch):
    """Ctrl-C while the handler analyses: the KeyboardInterrupt goes on, and
    a warning says the raw data is complete and how to analyse it."""
    from aiprof.profiler import profiler as module

    def interrupted(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(module, "analyse_now", interrupted)
    with pytest.warns(RuntimeWarning, match="interrupted; its raw data is complete: "
                                            "run `aiprof analyse "):
        with pytest.raises(KeyboardInterrupt):
            with P.profile(on_trace_ready=P.tensorboard_trace_handler("./r")):
                aiprof.mstx.mark("m")


def test_export_after_a_failed_start_says_why(tmp_path):
    """A trace that could not be opened (a symlinked result directory): the
    program goes on, and an export says why there is no trace."""
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    with pytest.warns(RuntimeWarning, match="symbolic link"):
        with P.profile(on_trace_ready=P.tensorboard_trace_handler(str(tmp_path / "link"))) \
                as prof:
            aiprof.mstx.mark("m")
    with pytest.raises(RuntimeError, match="opening or saving it failed: .*symbolic link"):
        prof.export_chrome_trace(str(tmp_path / "t.json"))
    assert not os.listdir(tmp_path / "real")
