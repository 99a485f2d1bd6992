"""Checks tests/e2e/test_host_sys.sh's profile of prog_host_sys against what
the program measured of itself (its JSON line) and what the analyser
derived (dump_host's JSON line), within sampling error, then the outputs:
the trace's counter layers, the database tables, nic.csv and the summary.

  check_host_sys.py RESULT_DIR PROG_JSON DUMP_JSON SUMMARY_TEXT
"""
import csv
import glob
import json
import os
import sqlite3
import sys

rd, prog_path, dump_path, summary_path = sys.argv[1:5]
prog = json.load(open(prog_path))
dump = json.load(open(dump_path))
period = dump["period_ns"]
MiB = 1 << 20


def fail(msg):
    print("check_host_sys: " + msg, file=sys.stderr)
    sys.exit(1)


def need(cond, msg):
    if not cond:
        fail(msg)


need(dump["has_status"] == 1, "no STATUS record")
need(period == 20_000_000, f"default period {period} ns, want 20 ms")
need(dump["status_samples"] >= 10, f"only {dump['status_samples']} samples")
need(dump["bad"] == 0, f"{dump['bad']} bad host records")

# CPU: the intervals that overlap the burn hold it all, and at most two
# periods more (the interval before is asleep; the one after starts the
# memset, at most one core busy).
b0, b1, burn = prog["burn_start"], prog["burn_end"], prog["burn_ns"]
over = [c for c in dump["cpu"] if c[0] < b1 and c[0] + c[1] > b0]
cpu = sum(c[2] for c in over)
span = max(c[0] + c[1] for c in over) - min(c[0] for c in over)
need(cpu >= 0.97 * burn, f"CPU over the burn {cpu} ns < burned {burn} ns")
need(cpu <= burn + 2 * period + 10_000_000 and cpu <= span * 1.01 + 5_000_000,
     f"CPU over the burn {cpu} ns, burned {burn} ns, window {span} ns")
need(dump["cpu_ns"] >= burn, "whole-trace CPU below the burn")
need(dump["cpu_user_ns"] + dump["cpu_sys_ns"] == dump["cpu_ns"], "user + system != total")
main = [t for t in dump["threads"] if t[0] == dump["pid"]]
need(main and main[0][1] >= burn, f"main thread CPU {main} below the burn {burn}")

# Memory: RSS grows by the touched block (page-granular, allocator slack).
base = dump["mem"][0][1]
after = [m[1] for m in dump["mem"] if m[0] > prog["mem_touched"]]
need(after, "no memory sample after the block was touched")
grow = max(after) - base
need(0.97 * prog["mem_bytes"] <= grow <= prog["mem_bytes"] + 16 * MiB,
     f"RSS grew by {grow}, touched {prog['mem_bytes']}")
need(dump["rss_peak"] >= base + 0.97 * prog["mem_bytes"], "RSS peak below the block")
need(dump["minflt"] >= prog["mem_bytes"] // 4096 * 0.9, f"minor faults {dump['minflt']}")

# Disk: read()/write() bytes and calls.  The process also writes its raw
# file and the sampler reads /proc files: bounded slack.
raw = sum(os.path.getsize(f) for f in glob.glob(os.path.join(rd, "FRAMEWORK", "*.raw")))
need(prog["written"] <= dump["wchar"] <= prog["written"] + raw + MiB,
     f"wchar {dump['wchar']}, written {prog['written']}, raw file {raw}")
need(prog["read"] <= dump["rchar"] <= prog["read"] + 4 * MiB,
     f"rchar {dump['rchar']}, read {prog['read']}")
need(dump["syscw"] >= prog["wcalls"] and dump["syscr"] >= prog["rcalls"], "syscall counts")

# Outputs: trace layers with msprof's names and sort indices.
out = os.path.join(rd, "ASCEND_PROFILER_OUTPUT")
trace = json.load(open(os.path.join(out, "trace_view.json")))
events = trace["traceEvents"] if isinstance(trace, dict) else trace
names, sorts, counters = {}, {}, {}
for e in events:
    if e.get("ph") == "M" and e.get("name") == "process_name":
        names[e["pid"]] = e["args"]["name"]
    elif e.get("ph") == "M" and e.get("name") == "process_sort_index":
        sorts[e["pid"]] = e["args"]["sort_index"]
    elif e.get("ph") == "C":
        counters.setdefault(e["pid"], set()).add(e["name"])
want = {"CPU Usage": 9, "Memory Usage": 10, "Network Usage": 11, "Disk Usage": 12, "NIC": 21}
for name, sort in want.items():
    pids = [p for p, n in names.items() if n == name]
    need(len(pids) == 1, f"trace: process {name!r} {len(pids)} times")
    need(sorts.get(pids[0]) == sort, f"trace: {name} sort index {sorts.get(pids[0])}")
    need(counters.get(pids[0]), f"trace: no counters in {name}")
cpu_pid = [p for p, n in names.items() if n == "CPU Usage"][0]
need({"CPU Avg", "Process CPU"} <= counters[cpu_pid], f"CPU counters {counters[cpu_pid]}")
need(any(c.startswith("CPU ") and c[4:].isdigit() for c in counters[cpu_pid]), "no per-core")

# Database tables with msprof's columns.
db = glob.glob(os.path.join(out, "ascend_pytorch_profiler*.db"))[0]
con = sqlite3.connect(db)
cols = {
    "CPU_USAGE": ["timestampNs", "cpuId", "usage"],
    "HOST_MEM_USAGE": ["timestampNs", "usage"],
    "HOST_DISK_USAGE": ["timestampNs", "readRate", "writeRate", "usage"],
    "HOST_NETWORK_USAGE": ["timestampNs", "usage", "speed"],
    "NIC": ["deviceId", "timestampNs", "bandwidth", "rxPacketRate", "rxByteRate", "rxPackets",
            "rxBytes", "rxErrors", "rxDropped", "txPacketRate", "txByteRate", "txPackets",
            "txBytes", "txErrors", "txDropped", "funcId"],
}
for t, c in cols.items():
    got = [r[1] for r in con.execute(f"PRAGMA table_info({t})")]
    need(got == c, f"{t} columns {got}")
    need(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] > 0, f"{t} is empty")
for (u,) in con.execute("SELECT usage FROM CPU_USAGE"):
    need(0 <= u <= 100, f"CPU_USAGE usage {u}")
# the per-core rows hold the burn too: usage% x interval summed over cores
core_ns = sum(u / 100 * period for (u,) in con.execute(
    "SELECT usage FROM CPU_USAGE WHERE timestampNs >= ? AND timestampNs < ?", (b0, b1)))
# (intervals starting in the burn: the one holding its start is not among
# them, at most a period of it)
need(core_ns >= 0.97 * burn - period - 5_000_000,
     f"per-core CPU over the burn {core_ns} of {burn}")
mem = [u for (u,) in con.execute("SELECT usage FROM HOST_MEM_USAGE")]
need(all(u is None or 0 <= u <= 100 for u in mem), "HOST_MEM_USAGE usage out of range")

# nic.csv: msprof's columns, then the interface.
with open(os.path.join(out, "nic.csv"), newline="") as f:
    rows = list(csv.reader(f))
need(rows[0][:12] == ["Device_id", "Timestamp(us)", "Bandwidth(MB/s)",
                      "Rx Bandwidth efficiency(%)", "rxPacket/s", "rxError rate(%)",
                      "rxDropped rate(%)", "Tx Bandwidth efficiency(%)", "txPacket/s",
                      "txError rate(%)", "txDropped rate(%)", "funcId"], f"nic.csv {rows[0]}")
need(rows[0][12] == "Interface" and len(rows) > 1, "nic.csv rows")

net_pid = [p for p, n in names.items() if n == "Network Usage"][0]
ifaces = {r[12] for r in rows[1:]}
need(ifaces <= counters[net_pid], f"per-interface counters {counters[net_pid]} lack {ifaces}")

text = open(summary_path).read()
for s in ("Host system, pid", "CPU: ", "Memory: RSS", "Disk: storage", "Sampler: "):
    need(s in text, f"summary lacks {s!r}")
print("check_host_sys: ok (CPU %.1f ms for %.1f ms burned, RSS +%.1f MiB for %.1f MiB)"
      % (cpu / 1e6, burn / 1e6, grow / MiB, prog["mem_bytes"] / MiB))
