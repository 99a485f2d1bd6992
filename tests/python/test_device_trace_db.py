"""The device layers of trace_view.json and the device tables of
ascend_pytorch_profiler.db on a result directory with device activity and
no device: tests/e2e/fake_device_profile.c records, per step, a copy in,
three kernels on two queues, a copy out and a clFinish (its header comment
gives the exact shape), analysed by the CLI.

With MSPROF_SRC set (tests/python/test_msprof_analyze.py says how),
msprof-analyze's compare and advisor read the device data in text and in
database mode without tracebacks, and compare attributes each kernel to the
op that launched it.
"""
import glob
import os
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter, defaultdict

import aiprof
import pytest

import msprof_env
from conftest import trace_events, ts_ns

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import check_nesting  # noqa: E402

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(aiprof.__file__)))
BIN = os.path.join(os.path.dirname(PYDIR), "bin")
FAKE = os.path.join(BIN, "fake_device_profile")
CLI = os.path.join(BIN, "aiprof")
STEPS = 3
# (name, queue label, Task Type, launching op, launching call) per task of a step
TASKS = [("Memcpy HtoD", "queue 0", "MEMCPY_ASYNC", "aten::to", "clEnqueueWriteBuffer"),
         ("matmul", "queue 0", "GPU", "aten::matmul", "clEnqueueNDRangeKernel"),
         ("relu", "queue 1", "GPU", "aten::relu", "clEnqueueNDRangeKernel"),
         ("softmax", "queue 0", "GPU", "aten::softmax", "clEnqueueNDRangeKernel"),
         ("Memcpy DtoH", "queue 0", "MEMCPY_ASYNC", "aten::item", "clEnqueueReadBuffer")]

pytestmark = pytest.mark.skipif(not os.path.exists(FAKE), reason="fake_device_profile not built")


def _profile(base, fmt="torch_npu"):
    out = subprocess.run([FAKE, str(base), str(STEPS)], capture_output=True, text=True, check=True)
    d = out.stdout.strip()
    subprocess.run([CLI, "analyse", "--trace-format", fmt, d], check=True, capture_output=True)
    return d


def _meta(events):
    """{pid: process_name args}, {pid: label}, {(pid, tid): thread name}."""
    procs, labels, threads = {}, {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        if e["name"] == "process_name":
            procs[e["pid"]] = e["args"]
        elif e["name"] == "process_labels":
            labels[e["pid"]] = e["args"]["labels"]
        elif e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    return procs, labels, threads


def _task_durations(result_dir):
    db = sqlite3.connect(os.path.join(result_dir, "ASCEND_PROFILER_OUTPUT",
                                      "ascend_pytorch_profiler.db"))
    return Counter(db.execute("SELECT endNs - startNs FROM TASK"))


@pytest.mark.parametrize("fmt", ["torch_npu"])
def test_trace_device_layers(tmp_path, fmt):
    d = _profile(tmp_path, fmt)
    raw = check_nesting.load_events(d)
    pairs, _, unmatched = check_nesting.count_overlaps(raw)
    assert pairs == 0 and not unmatched
    events = trace_events(raw) if fmt == "kineto" else raw
    procs, labels, threads = _meta(events)
    hw = [p for p, a in procs.items() if a["name"] == "Ascend Hardware"]
    assert len(hw) == 1, procs
    hw = hw[0]
    assert labels[hw] == "NPU 0" and procs[hw]["device"] == "Fake Device"
    assert sorted(n for (p, _), n in threads.items() if p == hw) == ["queue 0", "queue 1"]
    cann = [p for p, a in procs.items() if a["name"] == "CANN"]
    assert len(cann) == 1 and labels[cann[0]] == "CPU"
    ov = [p for p, a in procs.items() if a["name"] == "Overlap Analysis"]
    assert len(ov) == 1 and labels[ov[0]] == "NPU 0"
    assert sorted(n for (p, _), n in threads.items() if p == ov[0]) == sorted(
        ["Computing", "Communication", "Communication(Not Overlapped)", "Free"])

    xs = [e for e in events if e.get("ph") == "X"]
    tasks = [e for e in xs if e["pid"] == hw]
    assert Counter(e["name"] for e in tasks) == Counter(t[0] for t in TASKS * STEPS)
    by_name = {t[0]: t for t in TASKS}
    for e in tasks:
        assert threads[(hw, e["tid"])] == by_name[e["name"]][1]
        assert e["args"]["Task Type"] == by_name[e["name"]][2]
    calls = [e for e in xs if e["pid"] == cann[0]]
    assert len(calls) == 6 * STEPS and all(e["name"].startswith("Runtime@cl") for e in calls)
    # durations as the database has them: ns exactly in torch_npu's form
    if fmt == "torch_npu":
        assert Counter(ts_ns(e["dur"]) for e in tasks) == Counter(
            v for (v,), n in _task_durations(d).items() for _ in range(n))

    # flows: from the launching op (at its start) / call to the task
    starts, ends = {}, {}
    for e in events:
        if e.get("ph") in ("s", "f") and e.get("cat") in ("async_npu", "HostToDevice"):
            (starts if e["ph"] == "s" else ends)[(e["cat"], str(e["id"]))] = e
    assert set(starts) == set(ends) and len(starts) == 2 * 5 * STEPS
    slices = defaultdict(list)
    for e in xs:
        slices[(e["pid"], e["tid"])].append(e)

    def innermost(pid, tid, ts):
        around = [x for x in slices[(pid, tid)]
                  if ts_ns(x["ts"]) <= ts_ns(ts) <= ts_ns(x["ts"]) + ts_ns(x["dur"])]
        return max(around, key=lambda x: ts_ns(x["ts"]))

    for (cat, _), s in starts.items():
        f = ends[(cat, _)]
        assert f["bp"] == "e"
        task = [x for x in slices[(f["pid"], f["tid"])] if x["ts"] == f["ts"]]
        assert len(task) == 1 and f["pid"] == hw
        src = innermost(s["pid"], s["tid"], s["ts"])
        if cat == "async_npu":
            assert src["ts"] == s["ts"] and src["name"] == by_name[task[0]["name"]][3]
        else:
            assert s["pid"] == cann[0] and src["name"] == "Runtime@" + by_name[task[0]["name"]][4]

    # Overlap Analysis: Computing is the kernels' time (no two run at once)
    comp = sum(ts_ns(e["dur"]) for e in xs if e["pid"] == ov[0] and e["name"] == "Computing")
    kern = sum(ts_ns(e["dur"]) for e in tasks if e["args"]["Task Type"] == "GPU")
    assert abs(comp - kern) <= (0 if fmt == "torch_npu" else len(tasks))


def test_trace_device_layers_kineto(tmp_path):
    """Kineto's form lays device activity out as Kineto lays out CUPTI's
    (src/export/trace_json_kineto_dev.c): tasks on pid = device, tid =
    stream, cat kernel / gpu_memcpy; runtime calls cat cuda_runtime on the
    calling thread; an ac2g flow per launch keyed by the correlation both
    carry; the task's External id its launching op's.  No torch_npu
    layer, and every X event has a cat (the TensorBoard plugin lower-cases
    it; HTA drops events without)."""
    d = _profile(tmp_path, "kineto")
    raw = check_nesting.load_events(d)
    pairs, _, unmatched = check_nesting.count_overlaps(raw)
    assert pairs == 0 and not unmatched
    events = trace_events(raw)
    procs, labels, threads = _meta(events)
    assert not {"CANN", "Ascend Hardware", "Overlap Analysis"} & {a["name"] for a in procs.values()}
    assert procs[0]["name"] == "GPU 0" and labels[0] == "Fake Device"
    xs = [e for e in events if e.get("ph") == "X"]
    assert all(isinstance(e.get("cat"), str) for e in xs)
    tasks = [e for e in xs if e["pid"] == 0]
    assert Counter(e["name"] for e in tasks) == Counter(t[0] for t in TASKS * STEPS)
    by_name = {t[0]: t for t in TASKS}
    for e in tasks:
        assert e["cat"] == ("gpu_memcpy" if e["name"].startswith("Memcpy") else "kernel")
        a = e["args"]
        assert a["device"] == 0 and a["stream"] == e["tid"] and a["correlation"] > 0
        assert threads[(0, e["tid"])] == "stream %d" % a["stream"]
        assert a["stream"] == int(by_name[e["name"]][1].split()[1]) + 1  # queue id + 1
    # durations as the database has them, within the 1 ns of Kineto's ts units
    db_durs = sorted(v for (v,), n in _task_durations(d).items() for _ in range(n))
    assert all(abs(a - b) <= 1 for a, b in zip(sorted(ts_ns(e["dur"]) for e in tasks), db_durs))
    calls = [e for e in xs if e["cat"] == "cuda_runtime"]
    assert len(calls) == 6 * STEPS and all(e["name"].startswith("cl") for e in calls)
    ops = {e["args"]["External id"]: e for e in xs if e["cat"] == "cpu_op"}
    flows = defaultdict(dict)
    for e in events:
        if e.get("cat") == "ac2g":
            flows[e["id"]][e["ph"]] = e
    assert len(flows) == 5 * STEPS
    by_corr = {e["args"]["correlation"]: e for e in tasks}
    call_by_corr = {e["args"]["correlation"]: e for e in calls}
    for fid, ends in flows.items():
        task, call = by_corr[fid], call_by_corr[fid]
        assert ends["f"]["bp"] == "e" and ends["f"]["ts"] == task["ts"]
        assert ends["s"]["ts"] == call["ts"] and ends["s"]["tid"] == call["tid"]
        assert call["name"] == by_name[task["name"]][4]
        op = ops[task["args"]["External id"]]
        assert op["name"] == by_name[task["name"]][3]
        assert call["args"]["External id"] == task["args"]["External id"]


def test_database_device_tables(tmp_path):
    d = _profile(tmp_path)
    db = sqlite3.connect(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler.db"))

    def cols(t):
        return [r[1] for r in db.execute(f"PRAGMA table_info({t})")]

    def one(sql):
        return db.execute(sql).fetchone()[0]

    assert cols("TASK") == ["startNs", "endNs", "deviceId", "connectionId", "globalTaskId",
                            "globalPid", "taskType", "contextId", "streamId", "taskId", "modelId"]
    assert cols("CANN_API") == ["startNs", "endNs", "type", "globalTid", "connectionId", "name"]
    assert cols("COMPUTE_TASK_INFO")[:6] == ["name", "globalTaskId", "blockNum", "mixBlockNum",
                                             "taskType", "opType"]
    assert cols("MEMCPY_INFO") == ["globalTaskId", "size", "memcpyOperation"]
    assert one("SELECT count(*) FROM TASK") == 5 * STEPS
    assert one("SELECT count(*) FROM CANN_API") == 6 * STEPS
    assert one("SELECT count(*) FROM COMPUTE_TASK_INFO") == 3 * STEPS
    assert one("SELECT count(*) FROM MEMCPY_INFO") == 2 * STEPS
    assert one("SELECT count(*) FROM MEMCPY_INFO WHERE size = 1048576 AND memcpyOperation = 1") \
        == STEPS
    assert db.execute("SELECT * FROM RANK_DEVICE_MAP").fetchall() == [(-1, 0)]
    assert db.execute("SELECT * FROM NPU_INFO").fetchall() == [(0, "Fake Device")]
    # each op's kernels through CONNECTION_IDS -> CANN_API -> TASK
    rows = db.execute(
        "SELECT op.value, tt.value, count(*) FROM PYTORCH_API a "
        "JOIN STRING_IDS op ON op.id = a.name "
        "JOIN CONNECTION_IDS ci ON ci.id = a.connectionId "
        "JOIN CANN_API c ON c.connectionId = ci.connectionId "
        "JOIN TASK t ON t.connectionId = c.connectionId "
        "JOIN STRING_IDS tt ON tt.id = t.taskType GROUP BY 1, 2").fetchall()
    assert sorted(rows) == sorted((t[3], t[2], STEPS) for t in TASKS)
    # taskId counts per queue, from 0
    assert db.execute("SELECT streamId, min(taskId), max(taskId), count(*) FROM TASK "
                      "GROUP BY streamId").fetchall() == [(0, 0, 4 * STEPS - 1, 4 * STEPS),
                                                          (1, 0, STEPS - 1, STEPS)]
    # device memory: the 1 MiB buffer allocated before the steps and freed
    # after them, as memory_record.csv's APP rows and operator_memory.csv
    assert db.execute("SELECT s.value, m.totalAllocated, m.totalReserved, m.totalActive, "
                      "m.deviceId FROM MEMORY_RECORD m JOIN STRING_IDS s ON s.id = m.component "
                      "ORDER BY m.timestamp").fetchall() == [("APP", 1 << 20, 1 << 20, 1 << 20, 0),
                                                             ("APP", 0, 0, 0, 0)]
    alloc, free_ = db.execute("SELECT min(timestamp), max(timestamp) FROM MEMORY_RECORD").fetchone()
    assert db.execute("SELECT size, allocationTime, releaseTime, duration, deviceId "
                      "FROM OP_MEMORY").fetchall() == [(1 << 20, alloc, free_, free_ - alloc, 0)]


def _msprof(tmp_path, *args):
    out = msprof_env.run(tmp_path, msprof_env.CLI, *args)
    assert "Traceback" not in out and "[ERROR]" not in out, out
    return out


def _copies(tmp_path, with_db):
    dirs = []
    for run in ("a", "b"):
        src = _profile(tmp_path / run)
        dst = tmp_path / f"copy_{run}" / os.path.basename(src)
        shutil.copytree(src, dst)
        out = dst / "ASCEND_PROFILER_OUTPUT"
        if not with_db:  # text mode: msprof-analyze reads the db when there is one
            for f in glob.glob(str(out / "*.db")):
                os.unlink(f)
        else:
            # MEMORY_RECORD holds the device buffer's APP rows; an empty
            # one would make compare fail on max(totalReserved) = NULL.
            db = sqlite3.connect(out / "ascend_pytorch_profiler.db")
            assert db.execute("SELECT count(*) FROM MEMORY_RECORD").fetchone()[0] > 0
            db.close()
        dirs.append(str(dst))
    return dirs


@pytest.mark.skipif(msprof_env.missing() is not None, reason=msprof_env.missing() or "")
@pytest.mark.parametrize("with_db", [False, True])
def test_msprof_analyze_reads_device_data(tmp_path, with_db):
    a, b = _copies(tmp_path, with_db)
    _msprof(tmp_path, "compare", "-d", a, "-bp", b, "-o", str(tmp_path / "cmp"))
    books = glob.glob(str(tmp_path / "cmp" / "*.xlsx"))
    assert len(books) == 1
    import openpyxl
    rows = list(openpyxl.load_workbook(books[0], read_only=True)["OperatorCompare"]
                .iter_rows(values_only=True))[3:]
    # every op that launched device work has its task: in text mode by the
    # async_npu flows; in db mode by CONNECTION_IDS -> TASK joined with
    # COMPUTE_TASK_INFO, so kernels only (copies are not compute tasks there,
    # as in msprof's database)
    by_op = {t[3]: t for t in TASKS}
    launched = [r for r in rows if r and r[1] in by_op]
    assert len(launched) == 5 * STEPS, rows[:8]
    for r in launched:
        name, _, kind = by_op[r[1]][:3]
        if with_db and kind == "MEMCPY_ASYNC":
            assert not r[4], r
        else:
            assert r[4] and r[4].startswith(name + ","), r
    _msprof(tmp_path, "advisor", "all", "-d", a, "-o", str(tmp_path / "adv"), "-l", "en")
    assert glob.glob(str(tmp_path / "adv" / "mstt_advisor_*.html"))
