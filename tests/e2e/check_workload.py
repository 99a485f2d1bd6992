#!/usr/bin/env python3
"""Checks the analysed output of prog_workload against what it did.

Usage: check_workload.py RESULT_DIR
The program ran 5 steps with schedule(wait=1, warmup=1, active=2, repeat=1),
so steps 2 and 3 are recorded.  Each step: mstx range "rng" (domain "dom")
around op "outer" (seq 10*step, shapes, stack) holding "inner_a" (1 ms) and
"inner_b" (2 ms) in sequence and an alloc/free pair; mark "after outer";
"WorkerBackward0" (1 ms) on a new thread with the same sequence number and
fwd thread id = main tid; annotation "post" (0.5 ms).
"""
import csv
import json
import os
import re
import sys
from collections import Counter, defaultdict
from decimal import Decimal

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def main(result_dir):
    out = os.path.join(result_dir, "ASCEND_PROFILER_OUTPUT")
    with open(os.path.join(out, "trace_view.json"), encoding="utf-8") as f:
        trace = json.load(f)  # a real JSON parser: must be valid JSON
    # torch_npu's form: a top-level array, ts a string of absolute epoch µs
    # with exactly 3 decimals, dur a number.
    check(isinstance(trace, list), "trace_view.json is a top-level JSON array")
    events = trace if isinstance(trace, list) else trace.get("traceEvents", [])
    stamps = []
    for e in events:
        if "ts" in e:
            ok = isinstance(e["ts"], str) and re.fullmatch(r"\d+\.\d{3}", e["ts"])
            check(ok, f"ts a string with 3 decimals: {e}")
            if ok:
                stamps.append(int(Decimal(e["ts"]) * 1000))
        if "dur" in e:
            check(isinstance(e["dur"], (int, float)) and e["dur"] >= 0, f"numeric dur: {e}")
    # The rest compares times: µs relative to the first whole second, exact.
    base = min(stamps) // 10**9 * 10**9 if stamps else 0
    events = [dict(e, ts=(int(Decimal(e["ts"]) * 1000) - base) / 1000.0)
              if isinstance(e.get("ts"), str) else e for e in events]

    xs = [e for e in events if e.get("ph") == "X"]
    ops = [e for e in xs if e.get("cat") == "cpu_op"]
    counts = Counter(e["name"] for e in ops)
    for name in ("outer", "inner_a", "inner_b", "WorkerBackward0"):
        check(counts[name] == 2, f"{name}: {counts[name]} cpu_op events, expected 2 (steps 2 and 3)")
    steps = sorted(e["name"] for e in xs if e["name"].startswith("ProfilerStep#"))
    check(steps == ["ProfilerStep#2", "ProfilerStep#3"], f"step ranges {steps}")
    for e in xs:
        if e["name"].startswith("ProfilerStep#"):
            check(e.get("cat") == "user_annotation", f"step category {e.get('cat')}")
    check(Counter(e["name"] for e in xs if e.get("cat") == "user_annotation")["post"] == 2,
          "two 'post' annotations")

    # Durations against the sleeps (µs); generous upper bounds for slow CI.
    for e in ops:
        if e["name"] == "inner_a":
            check(1000 <= e["dur"] < 200000, f"inner_a dur {e['dur']}")
        if e["name"] == "inner_b":
            check(2000 <= e["dur"] < 200000, f"inner_b dur {e['dur']}")
        if e["name"] == "outer":
            check(e["dur"] >= 3000, f"outer dur {e['dur']}")
            args = e.get("args", {})
            check(args.get("Input Dims") in ("[[2, 3], [3]]", [[2, 3], [3]]), f"Input Dims {args}")
            check("Input type" in args, f"Input type in {args}")
            check("workload.py(10): train_step" in str(args.get("Call stack", "")), f"Call stack {args}")
            check(args.get("Sequence number") in (20, 30), f"Sequence number {args}")

    # Nesting: per thread, children inside parents, no partial overlap.
    by_thread = defaultdict(list)
    for e in xs:
        by_thread[(e["pid"], e["tid"])].append(e)
    eps = 0.0015  # 3-decimal rounding of ts and dur
    for key, evs in by_thread.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - eps:
                stack.pop()
            if stack:
                parent = stack[-1]
                check(e["ts"] + e["dur"] <= parent["ts"] + parent["dur"] + eps,
                      f"{e['name']} overlaps {parent['name']} on {key} without nesting")
            stack.append(e)
    # inner ops inside their outer op
    outers = [e for e in ops if e["name"] == "outer"]
    for e in ops:
        if e["name"].startswith("inner_"):
            check(any(o["tid"] == e["tid"] and o["ts"] - eps <= e["ts"] and
                      e["ts"] + e["dur"] <= o["ts"] + o["dur"] + eps for o in outers),
                  f"{e['name']} at {e['ts']} is not inside an outer op")
    # inner_a then inner_b, not overlapping
    for o in outers:
        kids = sorted((e for e in ops if e["name"].startswith("inner_") and e["tid"] == o["tid"]
                       and o["ts"] - eps <= e["ts"] <= o["ts"] + o["dur"]), key=lambda e: e["ts"])
        check([k["name"] for k in kids] == ["inner_a", "inner_b"], f"children of outer {kids}")
        if len(kids) == 2:
            check(kids[0]["ts"] + kids[0]["dur"] <= kids[1]["ts"] + eps, "siblings overlap")
    # The backward op ran on another thread.
    wb = [e for e in ops if e["name"] == "WorkerBackward0"]
    check(all(w["tid"] != outers[0]["tid"] for w in wb) if outers else False, "backward on other thread")

    # mstx ranges and marks with their domain
    mstx = [e for e in events if e.get("cat") == "mstx"]
    check(sum(1 for e in mstx if e.get("ph") == "X" and e["name"] == "rng") == 2, "two mstx ranges")
    check(all(e.get("args", {}).get("domain") == "dom" for e in mstx if e["name"] in ("rng", "after outer")),
          "mstx domain arg")
    check(sum(1 for e in mstx if e.get("ph") in ("i", "I") and e["name"] == "after outer") == 2, "two marks")
    # memory counters and instant events
    check(any(e.get("ph") == "C" for e in events), "memory counter track")
    mem = [e for e in events if e.get("name") == "[memory]"]
    check(len(mem) == 4, f"4 memory events, got {len(mem)}")
    # fwdbwd flows: one s/f pair per recorded step, small ids
    flows = [e for e in events if e.get("cat") == "fwdbwd"]
    s_ids = sorted(e["id"] for e in flows if e["ph"] == "s")
    f_ids = sorted(e["id"] for e in flows if e["ph"] == "f")
    check(len(s_ids) == 2 and s_ids == f_ids, f"fwdbwd flows s={s_ids} f={f_ids}")
    check(all(isinstance(i, int) and i < 1000 for i in s_ids), f"small integer flow ids {s_ids}")
    check(all(e.get("bp") == "e" for e in flows if e["ph"] == "f"), "flow ends bind to enclosing slice")
    # process and thread metadata
    meta = [e for e in events if e.get("ph") == "M"]
    names = {e["name"] for e in meta}
    check({"process_name", "process_labels", "process_sort_index", "thread_name",
           "thread_sort_index"} <= names, f"metadata events {names}")
    check(all(e["args"].get("labels") == "CPU" for e in meta if e["name"] == "process_labels"),
          "process_labels CPU")
    check(all(e["args"].get("sort_index") == e["tid"] for e in meta
              if e["name"] == "thread_sort_index"), "thread_sort_index = tid")
    check(any(e["name"] == "thread_name" and e["args"].get("name") == "autograd" for e in meta),
          "named thread 'autograd'")

    # CSVs: exact seed headers (operator_details: all nine columns; the
    # Device cells are empty, a host-only run has no device data)
    with open(os.path.join(out, "operator_details.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    check(rows[0] == ["Name", "Input Shapes", "Call Stack", "Host Self Duration(us)",
                      "Host Total Duration(us)", "Device Self Duration(us)",
                      "Device Total Duration(us)", "Device Self Duration With AICore(us)",
                      "Device Total Duration With AICore(us)"],
          f"operator_details header {rows[0]}")
    body = rows[1:]
    names = Counter(r[0] for r in body)
    check(names["outer"] == 2 and names["inner_a"] == 2 and names["WorkerBackward0"] == 2,
          f"operator_details rows {names}")
    for r in body:
        if r[0] == "outer":
            self_us, total_us = float(r[3]), float(r[4])
            check(total_us >= 3000 and self_us <= total_us - 2999, f"outer self/total {r[3]} {r[4]}")
    with open(os.path.join(out, "step_trace_time.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    check(rows[0] == ["Device_id", "Step", "Computing", "Communication(Not Overlapped)", "Overlapped",
                      "Communication", "Free", "Stage", "Bubble",
                      "Communication(Not Overlapped and Exclude Receive)", "Preparing"],
          f"step_trace_time header {rows[0]}")
    check([r[1] for r in rows[1:]] == ["2", "3"], f"step rows {[r[1] for r in rows[1:]]}")
    for r in rows[1:]:
        computing, free = float(r[2]), float(r[6])
        # host Computing counts annotated work too (docs/RESULT_LAYOUT.md)
        check(computing >= 4500, f"computing {computing} covers outer + backward + the "
                                 "0.5 ms 'post' annotation")
        check(free >= 0, f"free {free}")

    if failures:
        for m in failures:
            print("FAIL:", m)
        print(f"0 passed, {len(failures)} failed")
        return 1
    print("trace_view.json and CSVs match the workload: 1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
