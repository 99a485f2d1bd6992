"""check_nvtx.py RESULT_DIR [python] — the NVTX ranges and marks of
tests/e2e/nvtx_c/nvtx_prog.c (or tests/python's nvtx program with `python`) in
a result directory's trace_view.json and api_statistic/msprof_tx outputs,
recorded as mstx ranges are: cat mstx, args.domain the NVTX domain
("default" for NVTX's default domain), nesting kept, start/end ranges as
slices on the thread's track when they end on the thread they began on (the
domain one), async b/e pairs when they end on another (the default one)."""
import collections
from decimal import Decimal
import glob
import json
import os
import sys


def main():
    d, kind = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "c")
    with open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "trace_view.json")) as f:
        tv = json.load(f)
    events = tv["traceEvents"] if isinstance(tv, dict) else tv
    mstx = [e for e in events if e.get("cat") == "mstx"]
    count = collections.Counter((e["ph"], e["name"], e.get("args", {}).get("domain"))
                                for e in mstx)
    if kind == "c":
        want = {("X", "step", "default"): 3, ("X", "forward", "train"): 3,
                ("X", "wide_\u00fc", "default"): 3, ("i", "tick", "default"): 3,
                ("i", "dmark", "train"): 3, ("b", "async_default", "default"): 3,
                ("e", "async_default", None): 3, ("X", "async_train", "train"): 3}
    else:
        want = {("X", "step", "default"): 2, ("X", "forward", "train"): 2,
                ("X", "backward", "train"): 2, ("i", "tick", "train"): 2,
                ("X", "async_py", "train"): 2}
    assert dict(count) == want, f"mstx events {dict(count)} != {want}"
    # nesting: each forward lies inside a step on the same thread
    # (ts is torch_npu's string "<us>.<ns>" or Kineto's number: Decimal keeps ns)
    def span(e):
        return Decimal(str(e["ts"])), Decimal(str(e["ts"])) + Decimal(str(e["dur"]))
    steps = [e for e in mstx if e["name"] == "step"]
    for e in mstx:
        if e["ph"] == "X" and e["name"] != "step" and not e["name"].startswith("async_"):
            assert any(s["tid"] == e["tid"] and span(s)[0] <= span(e)[0] and
                       span(e)[1] <= span(s)[1] for s in steps), e
    if kind == "c":  # the default-domain async range ends on another thread
        ends = [e for e in mstx if e["ph"] == "e" and e["name"] == "async_default"]
        begins = [e for e in mstx if e["ph"] == "b" and e["name"] == "async_default"]
        assert all(b["tid"] != e["tid"] for b, e in zip(begins, ends)), (begins, ends)
    # the statistic: mstx rows for the push/pop ranges
    stat = glob.glob(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "api_statistic.csv"))
    if stat:
        with open(stat[0], encoding="utf-8") as f:
            rows = [ln for ln in f.read().splitlines() if ln.startswith("host,mstx,")]
        names = {r.split(",")[2] for r in rows}
        assert {"step", "forward"} <= names, rows
    print(f"nvtx {kind}: {sum(count.values())} mstx events as expected")


main()
