"""Every code example of the seed guide (ascend_pytorch_profiler_guide.md,
torch_npu_experimental_config.md), with `import torch_npu` replaced by
`import aiprof as torch_npu` and nothing else changed in the profiler
calls.  Where a seed example needs an Ascend device itself (`.to("npu")`,
torch.npu.set_device) or sleeps for seconds, the test says what it adapts.
"""
import json
import os
import threading
import time

import pytest

import aiprof as torch_npu
from conftest import needs_torch, result_dirs, slices, trace_events, trace_of

pytestmark = needs_torch


def _steps_in(trace):
    return sorted(e["name"] for e in slices(trace, "user_annotation")
                  if e["name"].startswith("ProfilerStep#"))


def test_example1_with_statement(train_one_step):
    steps = 3
    experimental_config = torch_npu.profiler._ExperimentalConfig(
        export_type=torch_npu.profiler.ExportType.Text,
        profiler_level=torch_npu.profiler.ProfilerLevel.Level0,
        aic_metrics=torch_npu.profiler.AiCMetrics.AiCoreNone
    )
    with torch_npu.profiler.profile(
        activities=[
            torch_npu.profiler.ProfilerActivity.CPU,
            torch_npu.profiler.ProfilerActivity.NPU
            ],
        schedule=torch_npu.profiler.schedule(wait=0, warmup=0, active=1, repeat=1, skip_first=0),
        on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./result"),
        profile_memory=False,
        with_modules=False,
        experimental_config=experimental_config) as prof:

        for step in range(steps):
            train_one_step()
            prof.step()

    dirs = result_dirs("./result")
    assert len(dirs) == 1
    trace = trace_of(dirs[0])
    assert _steps_in(trace) == ["ProfilerStep#0"]
    assert slices(trace, "cpu_op", "aten::addmm")
    assert os.path.exists(os.path.join(dirs[0], "ASCEND_PROFILER_OUTPUT", "operator_details.csv"))
    assert os.path.exists(os.path.join(dirs[0], "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"))


def test_example2_start_stop(train_one_step):
    steps = 3
    experimental_config = torch_npu.profiler._ExperimentalConfig(
        export_type=torch_npu.profiler.ExportType.Text,
        profiler_level=torch_npu.profiler.ProfilerLevel.Level0,
        aic_metrics=torch_npu.profiler.AiCMetrics.AiCoreNone
    )
    prof = torch_npu.profiler.profile(
        activities=[
            torch_npu.profiler.ProfilerActivity.CPU,
            torch_npu.profiler.ProfilerActivity.NPU
            ],
        schedule=torch_npu.profiler.schedule(wait=0, warmup=0, active=1, repeat=1, skip_first=0),
        on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./result"),
        profile_memory=False,
        with_modules=False,
        experimental_config=experimental_config)

    prof.start()
    for step in range(steps):
        train_one_step()
        prof.step()
    prof.stop()

    dirs = result_dirs("./result")
    assert len(dirs) == 1
    assert _steps_in(trace_of(dirs[0])) == ["ProfilerStep#0"]


def test_export_chrome_trace(train_one_step):
    steps = 2
    with torch_npu.profiler.profile() as prof:
        for step in range(steps):
            train_one_step()
    prof.export_chrome_trace('./chrome_trace_14.json')

    with open("chrome_trace_14.json") as f:
        trace = json.load(f)
    assert len(slices(trace, "cpu_op", "aten::mse_loss")) == steps
    assert not _steps_in(trace)  # no schedule: no ProfilerStep#


def test_kineto_profile(train_one_step):
    epochs = 3

    def train_model_step():
        train_one_step()

    prof = torch_npu.profiler._KinetoProfile(activities=None, record_shapes=False, profile_memory=False, with_stack=False, with_flops=False, with_modules=False, experimental_config=None)
    for epoch in range(epochs):
        train_model_step()
        if epoch == 0:
            prof.start()
        if epoch == 1:
            prof.stop()
    prof.export_chrome_trace("result_dir/trace.json")

    with open("result_dir/trace.json") as f:
        trace = json.load(f)
    assert len(slices(trace, "cpu_op", "aten::mse_loss")) == 1  # epoch 1 only
    assert not result_dirs(".")  # raw data went to a temporary directory


def test_mstx_level_none_db(train_one_step):
    steps = 2

    def user_step():
        id = torch_npu.npu.mstx.range_start("dataloader", None)
        train_one_step()
        torch_npu.npu.mstx.range_end(id)

    experimental_config = torch_npu.profiler._ExperimentalConfig(
        profiler_level=torch_npu.profiler.ProfilerLevel.Level_none,
        mstx=True,
        export_type=[
            torch_npu.profiler.ExportType.Db
            ])
    with torch_npu.profiler.profile(
        schedule=torch_npu.profiler.schedule(wait=0, warmup=0, active=1, repeat=1, skip_first=0),
        on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./result"),
        experimental_config=experimental_config) as prof:

        for step in range(steps):
            user_step()
            prof.step()

    # Db only: the databases, no trace_view.json; the range is in them.
    dirs = result_dirs("./result")
    assert len(dirs) == 1
    out = os.path.join(dirs[0], "ASCEND_PROFILER_OUTPUT")
    assert not os.path.exists(os.path.join(out, "trace_view.json"))
    import sqlite3
    db = sqlite3.connect(os.path.join(out, "ascend_pytorch_profiler.db"))
    rows = db.execute("SELECT s.value FROM PYTORCH_API a JOIN STRING_IDS s ON a.name = s.id "
                      "JOIN ENUM_API_TYPE t ON a.type = t.id WHERE t.name = 'mstx'").fetchall()
    db.close()
    assert rows == [("dataloader",)]
    # key_averages still works: a text analysis is made on demand.
    assert any(e.key == "ProfilerStep*" for e in prof.key_averages())


def test_mstx_range_on_compute_stream(train_one_step):
    # guide.md 420-425.  The seed's `torch.matmul()` stands for "a compute
    # stream operation"; it is given two tensors here.  There is no NPU:
    # the stream is ignored (warned once) and the host-side range recorded.
    import torch
    experimental_config = torch_npu.profiler._ExperimentalConfig(mstx=True)
    with torch_npu.profiler.profile(
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./result"),
            experimental_config=experimental_config):

        stream = torch_npu.npu.current_stream()
        id = torch_npu.npu.mstx.range_start("matmul", stream)    # 第二个入参设置有效的stream，记录Host侧range耗时和Device侧对应的range耗时
        torch.matmul(torch.randn(4, 4), torch.randn(4, 4))    # 计算流操作示意
        torch_npu.npu.mstx.range_end(id)

    trace = trace_of(result_dirs("./result")[0])
    mstx = [(e["ph"], e["name"]) for e in trace_events(trace) if e.get("cat") == "mstx"]
    # begun and ended on this thread: a slice on its track (docs/ANALYSIS.md)
    assert mstx == [("X", "matmul")]


def test_mstx_domains(train_one_step, monkeypatch):
    # The seed sleeps 1 s six times per step; sleeps are shortened here.
    real_sleep = time.sleep
    monkeypatch.setattr(time, "sleep", lambda s: real_sleep(s / 200))
    experimental_config = torch_npu.profiler._ExperimentalConfig(
        data_simplification=False,
        mstx=True,
        mstx_domain_include=['default','domain1']
    )
    with torch_npu.profiler.profile(
        activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],
        schedule=torch_npu.profiler.schedule(wait=0, warmup=0, active=1, repeat=1, skip_first=0),
        on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./result"),
        experimental_config=experimental_config) as prof:
        for i in range(5):
            torch_npu.npu.mstx.mark("mark_with_default_domain")
            range_id = torch_npu.npu.mstx.range_start("range_with_default_domain")
            time.sleep(1)
            torch_npu.npu.mstx.range_end(range_id)
            torch_npu.npu.mstx.mark("mark_with_domain1", domain = "domain1")
            range_id1 = torch_npu.npu.mstx.range_start("range_with_domain1", domain="domain1")
            time.sleep(1)
            torch_npu.npu.mstx.range_end(range_id1, domain="domain1")
            torch_npu.npu.mstx.mark("mark_with_domain2", domain = "domain2")
            range_id2 = torch_npu.npu.mstx.range_start("range_with_domain2", domain="domain2")
            time.sleep(1)
            torch_npu.npu.mstx.range_end(range_id2, domain="domain2")
            prof.step()

    trace = trace_of(result_dirs("./result")[0])
    names = {e["name"] for e in trace_events(trace) if e.get("cat") == "mstx"}
    assert {"mark_with_default_domain", "range_with_default_domain", "mark_with_domain1",
            "range_with_domain1"} <= names
    assert not names & {"mark_with_domain2", "range_with_domain2"}


def test_add_metadata_examples(train_one_step):
    key, value = "test_key1", "test_value1"
    with torch_npu.profiler.profile(
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./result"))  as prof:
        prof.add_metadata(key, value)
        train_one_step()
    with open(os.path.join(result_dirs("./result")[0], "profiler_metadata.json")) as f:
        assert json.load(f)[key] == value

    test_value1, test_value2 = 1, [2, 3]
    with torch_npu.profiler._KinetoProfile()  as prof:
        prof.add_metadata_json("test_key2", json.dumps({"key1": test_value1, "key2": test_value2}))
        train_one_step()
    meta_file = os.path.join(os.path.dirname(prof._trace_dir), os.path.basename(prof._trace_dir),
                             "profiler_metadata.json")
    with open(meta_file) as f:
        assert json.load(f)["test_key2"] == {"key1": 1, "key2": [2, 3]}


def test_memory_timeline_example(train_one_step):
    steps = 4

    def trace_handler(prof: torch_npu.profiler.profile):
        prof.export_memory_timeline(output_path="./memory_timeline.html", device="npu:0")

    with pytest.warns(RuntimeWarning, match="no memory events for npu:0"):
        with torch_npu.profiler.profile(
            activities=[
                torch_npu.profiler.ProfilerActivity.CPU,
                torch_npu.profiler.ProfilerActivity.NPU
            ],
            schedule=torch_npu.profiler.schedule(wait=0, warmup=0, active=4, repeat=1, skip_first=0),
            on_trace_ready=trace_handler,
            record_shapes=True,           # 设为True
            profile_memory=True,          # 设为True
            with_stack=True,              # with_stack或者with_modules其中一个设为True
            with_modules=True
        ) as prof:
            for _ in range(steps):
                train_one_step()
                prof.step()
    assert os.path.getsize("memory_timeline.html") > 0
    # The CPU timeline of the same trace has the allocations.
    prof.export_memory_timeline("cpu.json", device="cpu")
    with open("cpu.json") as f:
        times, sizes = json.load(f)
    assert len(times) == len(sizes) > 0 and len(sizes[0]) == 9


def test_child_threads(train_one_step):
    # Seed: torch.npu.set_device(device) per thread — no NPU here, removed.
    model = train_one_step.model
    import torch
    input_data = torch.randn(4, 8)
    seen = set()

    def infer(device, child_thread):
        if child_thread:
            torch_npu.profiler.profile.enable_profiler_in_child_thread(with_modules=True)
        seen.add(threading.get_native_id())
        for _ in range(5):
            outputs = model(input_data)
        if child_thread:
            torch_npu.profiler.profile.disable_profiler_in_child_thread()

    experimental_config = torch_npu.profiler._ExperimentalConfig(
        aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization,
        profiler_level=torch_npu.profiler.ProfilerLevel.Level1
    )
    prof = torch_npu.profiler.profile(
        activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],
        on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./result"),
        record_shapes=True,
        profile_memory=True,
        with_stack=False,
        with_flops=False,
        with_modules=True,
        experimental_config=experimental_config)
    prof.start()
    threads = []
    for i in range(1, 3):
        t = threading.Thread(target=infer, args=(i, True))
        t.start()
        threads.append(t)
    infer(0, False)
    for t in threads:
        t.join()
    prof.stop()

    trace = trace_of(result_dirs("./result")[0])
    tids = {e["tid"] for e in slices(trace, "cpu_op", "aten::addmm")}
    assert tids == seen and len(tids) == 3
    for e in slices(trace, "cpu_op", "aten::addmm"):
        assert e["args"]["Module Hierarchy"].startswith("nn.Module: Sequential_0;nn.Module: Linear_")


def test_offline_analyse(train_one_step, monkeypatch):
    monkeypatch.setenv("ASCEND_WORK_PATH", os.path.abspath("result_data"))
    for _ in range(2):  # two profiles, two raw directories, no on_trace_ready
        with torch_npu.profiler.profile():
            train_one_step()
    dirs = result_dirs("result_data/profiling_data")
    assert len(dirs) == 2
    assert not any(os.path.exists(os.path.join(d, "ASCEND_PROFILER_OUTPUT")) for d in dirs)

    from aiprof.profiler.profiler import analyse
    analyse(profiler_path="./result_data", max_process_number=1, export_type="text")
    for d in dirs:
        assert slices(trace_of(d), "cpu_op", "aten::addmm")


def test_schedule_skip_first_repeat(train_one_step):
    with torch_npu.profiler.profile(
        activities=[
            torch_npu.profiler.ProfilerActivity.CPU,
            torch_npu.profiler.ProfilerActivity.NPU,
        ],
        schedule=torch_npu.profiler.schedule(
            wait=1,                        # 等待阶段，跳过1个step
            warmup=1,                      # 预热阶段，跳过1个step
            active=2,                      # 记录2个step的活动数据，并在之后调用on_trace_ready
            repeat=2,                      # 循环wait+warmup+active过程2遍
            skip_first=1                   # 跳过1个step
        ),
        on_trace_ready=torch_npu.profiler.tensorboard_trace_handler('./result')
        ) as prof:
            for _ in range(9):
                train_one_step()
                prof.step()                # 通知profiler完成一个step
    dirs = result_dirs("./result")
    assert [_steps_in(trace_of(d)) for d in dirs] == [["ProfilerStep#3", "ProfilerStep#4"],
                                                     ["ProfilerStep#7", "ProfilerStep#8"]]


def test_faq_custom_handler(monkeypatch, tmp_path):
    # The FAQ's script, with two adaptations: tensors on "cpu" (no NPU) and
    # the 2 s sleep per step shortened.
    import random
    import shutil
    import string
    import torch
    from aiprof.profiler._profiler_path_creator import ProfPathCreator
    real_sleep = time.sleep
    monkeypatch.setattr(time, "sleep", lambda s: real_sleep(s / 200))

    def generate_random_filename(length=8):
        letters = string.ascii_lowercase
        random_letters = ''.join(random.choice(letters) for _ in range(length))
        return random_letters

    def create_random_dictory():
        random_filename = generate_random_filename()
        file_path = os.path.join(str(tmp_path), f"{random_filename}")
        return file_path

    def move_file_to_user_path(file_path, user_input_path):
        try:
            if not os.path.exists(user_input_path):
                os.makedirs(user_input_path)
            for item in os.listdir(file_path):
                source_item = os.path.join(file_path, item)
                destination_item = os.path.join(user_input_path, item)
                shutil.move(source_item, destination_item)
            os.rmdir(file_path)
            return True
        except Exception as e:
            print(str(e))
            return False

    def train_one_step(i):
        print(f"[APP]train: {i} step...")
        a = torch.rand(2, 3).to("cpu")
        b = torch.rand(2, 3).to("cpu")
        c = a + b
        time.sleep(2)

    def user_tensorboard_trace_handler(ori_path, dst_path, dir_name: str = None, worker_name: str = None, analyse_flag: bool = True):
        ProfPathCreator().init(worker_name=worker_name, dir_name=dir_name)
        def handler_fn(prof_inst) -> None:
            if analyse_flag:
                prof_inst.prof_if.analyse()
            result = move_file_to_user_path(ori_path, dst_path)
            assert result is True
        return handler_fn

    dst = os.path.abspath("shared_storage")
    random_txt_file_path = create_random_dictory()
    prof = torch_npu.profiler.profile(on_trace_ready=user_tensorboard_trace_handler(random_txt_file_path, dst, random_txt_file_path),
                                      schedule=torch_npu.profiler.schedule(skip_first=1, repeat=1, active=2, wait=0, warmup=0))
    prof.start()
    step_num = 5
    for i in range(step_num):
        train_one_step(i)
        prof.step()
    prof.stop()

    dirs = result_dirs(dst)
    assert len(dirs) == 1
    assert _steps_in(trace_of(dirs[0])) == ["ProfilerStep#1", "ProfilerStep#2"]
    assert not os.path.exists(random_txt_file_path)
    assert not ProfPathCreator().is_set()  # consumed by that profile


def test_experimental_config_reference_example(train_one_step):
    steps = 2
    experimental_config = torch_npu.profiler._ExperimentalConfig(
        export_type=[
            torch_npu.profiler.ExportType.Text,
            torch_npu.profiler.ExportType.Db
            ],
        profiler_level=torch_npu.profiler.ProfilerLevel.Level0,
        msprof_tx=False,
        aic_metrics=torch_npu.profiler.AiCMetrics.AiCoreNone,
        l2_cache=False,
        op_attr=False,
        data_simplification=False,
        record_op_args=False,
        gc_detect_threshold=None
    )
    with torch_npu.profiler.profile(
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./result"),
            experimental_config=experimental_config) as prof:
            for step in range(steps):
                    train_one_step()
                    prof.step()
    dirs = result_dirs("./result")
    assert len(dirs) == 1  # no schedule: one trace over the whole profile
    with open(os.path.join(dirs[0], "profiler_info.json")) as f:
        info = json.load(f)
    assert info["config"]["experimental_config"]["_export_type"] == ["text", "db"]


def test_start_stop_around_one_step(train_one_step):
    # The API table's start/stop example.
    steps = 8
    prof = torch_npu.profiler.profile(
    on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("./result"))
    for step in range(steps):
        if step == 5:
            prof.start()
        train_one_step()
        if step == 5:
            prof.stop()
    trace = trace_of(result_dirs("./result")[0])
    assert len(slices(trace, "cpu_op", "aten::mse_loss")) == 1


def test_export_chrome_trace_per_pid_and_export_stacks(train_one_step):
    # The API table's export_chrome_trace and export_stacks examples.
    with torch_npu.profiler.profile(with_stack=True) as prof:
        for _ in range(2):
            train_one_step()
    pid = os.getpid()
    prof.export_chrome_trace(f'./chrome_trace_{pid}.json')
    assert os.path.getsize(f"chrome_trace_{pid}.json") > 0
    with pytest.warns(RuntimeWarning, match="no device data.*written empty"):
        prof.export_stacks('result_dir/stack.log', metric='self_npu_time_total')
    assert os.path.getsize("result_dir/stack.log") == 0  # no NPU time on this machine
    prof.export_stacks('result_dir/cpu_stack.log', metric='self_cpu_time_total')
    with open("result_dir/cpu_stack.log") as f:
        assert any(line.rsplit(" ", 1)[0].endswith(";aten::addmm") for line in f)
