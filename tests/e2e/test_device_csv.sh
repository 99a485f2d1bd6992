#!/usr/bin/env bash
# End to end for the device CSV files: fake_device_profile (a device back
# end's records without a device; its shape is in its header comment)
# with and without a schedule, `aiprof analyse` at Level1, then Python's
# csv module checks the seed's headers exactly and the rows against the
# known shape: counts = launches, Step Ids, streams, device durations
# consistent across kernel_details / operator_details / op_statistic /
# step_trace_time / analysis.db, empty device cells for aten::view, the
# runtime API level of api_statistic.
set -eu
BUILD=$1 SRC=$2
AIPROF="$BUILD/bin/aiprof"
FAKE="$BUILD/bin/fake_device_profile"
PY=/usr/bin/python3
TMP=$(mktemp -d /tmp/aiprof_devcsv_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; echo "e2e device csv: 0 passed, 1 failed"; exit 1; }

STEPS=3
mkdir -p "$TMP/sched" "$TMP/plain"
SCHED=$("$FAKE" "$TMP/sched" $STEPS schedule) || fail "fake_device_profile with a schedule"
PLAIN=$("$FAKE" "$TMP/plain" 2) || fail "fake_device_profile"
# api_statistic.csv is written from profiler_level Level1
sed -i 's/"_profiler_level": "Level0"/"_profiler_level": "Level1"/' "$SCHED"/profiler_info*.json
grep -q '"Level1"' "$SCHED"/profiler_info*.json || fail "profiler_info.json not switched to Level1"
"$AIPROF" analyse "$SCHED" -q >/dev/null || fail "analyse (schedule)"
"$AIPROF" analyse "$PLAIN" -q >/dev/null || fail "analyse (no schedule)"

$PY - "$SCHED/ASCEND_PROFILER_OUTPUT" "$PLAIN/ASCEND_PROFILER_OUTPUT" $STEPS <<'EOF' || fail "output check"
import csv, os, sqlite3, sys
from collections import Counter
from decimal import Decimal

out, plain, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])

def read(d, name):
    with open(os.path.join(d, name), newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]

# The seed's table 1 (kernel_details), table 5 (operator_details), table 6
# (step_trace_time) and msprof's op_statistic / api_statistic columns.
KERNEL = ["Device_id", "Model ID", "Task ID", "Stream ID", "Name", "Type", "OP State",
          "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Num",
          "Mix Block Num", "HF32 Eligible", "Input Shapes", "Input Data Types",
          "Input Formats", "Output Shapes", "Output Data Types", "Output Formats"]
OPDET = ["Name", "Input Shapes", "Call Stack", "Host Self Duration(us)",
         "Host Total Duration(us)", "Device Self Duration(us)", "Device Total Duration(us)",
         "Device Self Duration With AICore(us)", "Device Total Duration With AICore(us)"]
STEP = ["Device_id", "Step", "Computing", "Communication(Not Overlapped)", "Overlapped",
        "Communication", "Free", "Stage", "Bubble",
        "Communication(Not Overlapped and Exclude Receive)", "Preparing"]
OPSTAT = ["Device_id", "OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)",
          "Avg Time(us)", "Max Time(us)", "Ratio(%)"]
API = ["Device_id", "Level", "API Name", "Time(us)", "Count", "Avg(us)", "Min(us)", "Max(us)",
       "Variance"]
US = lambda s: Decimal(s.strip())

# ---- kernel_details.csv: one row per task, Step Id with a schedule
head, kd = read(out, "kernel_details.csv")
assert head == ["Step Id"] + KERNEL, head
per_step = ["Memcpy HtoD", "matmul", "relu", "softmax", "Memcpy DtoH"]
assert [r["Name"] for r in kd] == per_step * steps, [r["Name"] for r in kd]
assert [r["Step Id"] for r in kd] == [str(i) for i in range(steps) for _ in per_step]
# Task ID: the task's number on its queue (stream), as Ascend numbers them
seen = {}
for r in kd:
    assert r["Task ID"] == str(seen.get(r["Stream ID"], 0)), r
    seen[r["Stream ID"]] = seen.get(r["Stream ID"], 0) + 1
for r in kd:
    kernel = not r["Name"].startswith("Memcpy")
    assert r["Device_id"] == "0" and r["Accelerator Core"] == "GPU", r
    assert r["Stream ID"] == ("1" if r["Name"] == "relu" else "0"), r
    assert r["Type"] == (r["Name"] if kernel else "MEMCPY_ASYNC"), r
    assert r["Start Time(us)"].endswith("\t"), r  # msprof's trailing tab
    assert US(r["Duration(us)"]) > 0 and US(r["Wait Time(us)"]) >= 0, r
    assert r["Block Num"] == ("64" if kernel else "N/A"), r  # 4096 / 64
    assert r["OP State"] == ("static" if kernel else "N/A"), r  # advisor: not "all dynamic"
    for c in ["Model ID", "Mix Block Num", "HF32 Eligible", "Input Formats",
              "Output Shapes", "Output Data Types", "Output Formats"]:
        assert r[c] == "N/A", (c, r)
# Wait Time: start - end of the previous task on the same queue
last = {}
for r in kd:
    s, q = US(r["Start Time(us)"]), r["Stream ID"]
    want = max(Decimal(0), s - last[q]) if q in last else Decimal(0)
    assert US(r["Wait Time(us)"]) == want, (r, want)
    last[q] = s + US(r["Duration(us)"])

# ---- operator_details.csv: device time of each op's own task
head, od = read(out, "operator_details.csv")
assert head == OPDET, head
launching = [r for r in od if r["Name"] != "aten::view"]
assert len(launching) == len(kd) and len(od) == len(kd) + steps
for op, task in zip(launching, kd):
    assert op["Device Self Duration(us)"] == task["Duration(us)"], (op, task)
    assert op["Device Total Duration(us)"] == task["Duration(us)"], (op, task)
    assert op["Device Self Duration With AICore(us)"] == "N/A", op
for op in od:
    if op["Name"] == "aten::view":  # no device work: empty cells, not zeros
        assert [op[c] for c in OPDET[5:]] == ["", "", "", ""], op

# ---- op_statistic.csv: device tasks, Core Type = the device kind
head, ost = read(out, "op_statistic.csv")
assert head == OPSTAT, head
by_type = {r["OP Type"]: r for r in ost}
assert set(by_type) == {"matmul", "relu", "softmax", "MEMCPY_ASYNC"}, by_type
for t, r in by_type.items():
    assert r["Device_id"] == "0" and r["Core Type"] == "GPU", r
    tasks = [k for k in kd if k["Type"] == t]
    assert int(r["Count"]) == len(tasks) == (2 * steps if t == "MEMCPY_ASYNC" else steps), r
    assert US(r["Total Time(us)"]) == sum(US(k["Duration(us)"]) for k in tasks), r
    assert US(r["Max Time(us)"]) == max(US(k["Duration(us)"]) for k in tasks), r
assert abs(sum(float(r["Ratio(%)"]) for r in ost) - 100) < 0.05

# ---- api_statistic.csv (Level1): the runtime calls
head, api = read(out, "api_statistic.csv")
assert head == API, head
runtime = {r["API Name"]: int(r["Count"]) for r in api if r["Level"] == "runtime"}
assert runtime == {"clEnqueueNDRangeKernel": 3 * steps, "clEnqueueWriteBuffer": steps,
                   "clEnqueueReadBuffer": steps, "clFinish": steps}, runtime
assert all(r["Device_id"] == "host" for r in api)
assert Counter(r["Level"] for r in api)["op"] >= 6  # the framework ops stay

# ---- step_trace_time.csv: per device and step, from the kernels
head, st = read(out, "step_trace_time.csv")
assert head == STEP, head
assert [(r["Device_id"], r["Step"]) for r in st] == [("0", str(i)) for i in range(steps)]
for r in st:
    kernels = [k for k in kd if k["Step Id"] == r["Step"] and k["Type"] != "MEMCPY_ASYNC"]
    # the fake device runs one task at a time: the union is the sum
    assert US(r["Computing"]) == sum(US(k["Duration(us)"]) for k in kernels), r
    assert US(r["Free"]) + US(r["Computing"]) == US(r["Stage"]), r
    assert US(r["Preparing"]) > 0 and US(r["Communication"]) == 0, r
# analysis.db prints the same rows
db = sqlite3.connect(os.path.join(out, "analysis.db"))
rows = db.execute("SELECT deviceId, step, computing, free, preparing FROM StepTraceTime").fetchall()
assert [(str(d), s, round(c, 3), round(f, 3), round(p, 3)) for d, s, c, f, p in rows] == \
    [(r["Device_id"], r["Step"], float(r["Computing"]), float(r["Free"]), float(r["Preparing"]))
     for r in st], rows

# ---- without a schedule: no Step Id column, one whole-profile row
head, kd = read(plain, "kernel_details.csv")
assert head == KERNEL, head
assert len(kd) == 5 * 2
head, st = read(plain, "step_trace_time.csv")
assert [(r["Device_id"], r["Step"]) for r in st] == [("0", "")], st
assert not os.path.exists(os.path.join(plain, "api_statistic.csv"))  # Level0
EOF
echo "e2e device csv: 1 passed, 0 failed"
