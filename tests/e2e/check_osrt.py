#!/usr/bin/env python3
"""Check the OS runtime calls of a prog_osrt run (tests/e2e/test_osrt.sh).

Usage: check_osrt.py RESULT_DIR MEASURED_JSON MODE
MODE all: every call was recorded (threshold 0): the 20 ms nanosleep and
the 50 ms contended lock match what the program measured around them, each
of the 4 reader threads has exactly N preads, the failed read carries
EBADF, and the OSRT_API table holds the same calls as the trace layer.
MODE threshold: the default threshold (10 ms): the sleep and the lock are
there, no call shorter than 10 ms is.
"""
import glob
import json
import os
import sqlite3
import sys

SLACK_NS = 200_000  # tick <-> ns conversion and the microsecond rounding of the JSON


def main():
    rdir, measured_path, mode = sys.argv[1:4]
    m = json.load(open(measured_path))
    out = os.path.join(rdir, "ASCEND_PROFILER_OUTPUT")
    trace = json.load(open(os.path.join(out, "trace_view.json")))
    layer_pids = {e["pid"] for e in trace if e.get("ph") == "M" and e["name"] == "process_name"
                  and e["args"]["name"] == "OS Runtime API"}
    assert len(layer_pids) == 1, layer_pids
    pid = layer_pids.pop()
    assert (pid >> 5) & 31 == 13 and pid & 31 == 31, pid
    sort = [e for e in trace if e.get("pid") == pid and e["name"] == "process_sort_index"]
    assert sort and sort[0]["args"]["sort_index"] == 13, sort
    calls = [e for e in trace if e.get("pid") == pid and e.get("ph") == "X"]
    names = {e["tid"]: e["args"]["name"] for e in trace
             if e.get("pid") == pid and e.get("name") == "thread_name"}
    for c in calls:
        assert names.get(c["tid"]) == "Thread %d" % c["tid"], (c, names.get(c["tid"]))
    dur_ns = lambda c: round(float(c["dur"]) * 1000)
    main_tid = m["main_tid"]

    sleeps = [c for c in calls if c["name"] == "nanosleep" and c["tid"] == main_tid]
    assert len(sleeps) == 1, sleeps
    d = dur_ns(sleeps[0])
    assert 20_000_000 - SLACK_NS <= d <= m["sleep_outer_ns"] + SLACK_NS, (d, m)

    locks = [c for c in calls if c["name"] == "pthread_mutex_lock" and c["tid"] == main_tid]
    longest = max((dur_ns(c) for c in locks), default=0)
    assert m["lock_min_ns"] - 1_000_000 <= longest <= m["lock_outer_ns"] + SLACK_NS, (longest, m)
    holder = [c for c in calls if c["name"] == "nanosleep" and c["tid"] == m["holder_tid"]]
    assert holder and dur_ns(holder[0]) >= 50_000_000 - SLACK_NS, holder

    if mode == "threshold":
        short = [c for c in calls if dur_ns(c) < 10_000_000 - SLACK_NS]
        assert not short, short[:5]
    else:
        for tid in m["readers"]:
            n = sum(1 for c in calls if c["name"] == "pread" and c["tid"] == tid)
            assert n == m["calls"], (tid, n, m["calls"])
        bad = [c for c in calls if c["name"] == "read" and c["args"].get("errno name") == "EBADF"]
        assert len(bad) == 1 and bad[0]["args"]["Result"] == -1, bad
        good = [c for c in calls if c["name"] == "read" and c["tid"] == main_tid
                and c["args"]["Result"] == 4096]
        assert len(good) == 1 and "errno" not in good[0]["args"], good

    db = glob.glob(os.path.join(out, "ascend_pytorch_profiler*.db"))[0]
    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute("PRAGMA table_info(OSRT_API)")]
    assert cols == ["name", "globalTid", "startNs", "endNs"], cols
    rows = con.execute("SELECT s.value, o.globalTid, o.endNs - o.startNs FROM OSRT_API o "
                       "JOIN STRING_IDS s ON s.id = o.name").fetchall()
    assert len(rows) == len(calls), (len(rows), len(calls))
    by_name = {}
    for name, gtid, _ in rows:
        assert gtid >> 32 == m["pid"] and (gtid & 0xffffffff) in names, (gtid, m["pid"])
        by_name[name] = by_name.get(name, 0) + 1
    for c in calls:
        by_name[c["name"]] -= 1
    assert not any(by_name.values()), by_name
    print("osrt ok: %d calls, sleep %.3f ms, lock %.3f ms" % (len(calls), d / 1e6, longest / 1e6))


if __name__ == "__main__":
    main()
