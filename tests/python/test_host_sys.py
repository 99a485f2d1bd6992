"""host_sys and sys_io from Python (docs/HOST_SYS.md): a program that only
sets experimental_config(host_sys=[...], sys_io=True) gets the host
system tables, nic.csv and the trace's counter layers, with figures that
match what it did; without the switches there are none, and no sampler
thread runs."""
import csv
import glob
import json
import os
import sqlite3
import textwrap
import time

import aiprof  # noqa: F401
from aiprof import profiler as P

from conftest import result_dirs, run_python, trace_of

HS = P.HostSystem


def _burn(seconds):
    t0 = time.thread_time()
    x = 0
    while time.thread_time() - t0 < seconds:
        x += 1
    return time.thread_time() - t0


def _profile(cfg, work):
    with P.profile(activities=[P.ProfilerActivity.CPU], experimental_config=cfg,
                   on_trace_ready=P.tensorboard_trace_handler("./r")):
        out = work()
    (rd,) = result_dirs("./r")
    return rd, out


def _db(rd):
    (path,) = glob.glob(os.path.join(rd, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler*.db"))
    return sqlite3.connect(path)


def _tables(con):
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}


# Not under a preloaded ASan: its allocator serves a new block partly from
# memory it already holds (quarantined frees), so RSS rises by less.
_RSS_FOLLOWS_ALLOCATIONS = "libasan" not in os.environ.get("LD_PRELOAD", "")


def test_host_sys_tables_and_figures():
    cfg = P._ExperimentalConfig(host_sys=[HS.CPU, HS.MEM, HS.DISK, HS.NETWORK], sys_io=True)

    def work():
        time.sleep(0.1)
        burned = _burn(0.3)
        block = bytearray(64 << 20)          # zero pages: touch them
        for i in range(0, len(block), 4096):
            block[i] = 1
        with open("io.bin", "wb") as f:
            f.write(b"x" * (4 << 20))
        time.sleep(0.1)
        return burned, len(block)

    rd, (burned, nbytes) = _profile(cfg, work)
    con = _db(rd)
    tables = _tables(con)
    for t in ("CPU_USAGE", "HOST_MEM_USAGE", "HOST_DISK_USAGE", "HOST_NETWORK_USAGE", "NIC"):
        assert t in tables, t
        assert con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] > 0, t
    assert [r[1] for r in con.execute("PRAGMA table_info(HOST_DISK_USAGE)")] == \
        ["timestampNs", "readRate", "writeRate", "usage"]
    # CPU_USAGE rows are each core's share per 20 ms interval: summed over
    # time they hold the burn (the interpreter's other work adds a little).
    cpu_s = sum(u / 100 * 0.02 for (u,) in con.execute("SELECT usage FROM CPU_USAGE"))
    assert 0.8 * burned - 0.05 <= cpu_s <= burned + 1.0, (cpu_s, burned)
    # HOST_MEM_USAGE is RSS as a percentage of MemTotal: it rises by the block.
    mem_total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    usage = [u for (u,) in con.execute("SELECT usage FROM HOST_MEM_USAGE ORDER BY timestampNs")]
    rise = (max(usage) - usage[0]) / 100 * mem_total
    if _RSS_FOLLOWS_ALLOCATIONS:
        assert 0.9 * nbytes <= rise <= nbytes + (48 << 20), (rise, nbytes)
    # the trace's layers, with msprof's sort indices
    trace = trace_of(rd)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    layers = {e["args"]["name"]: e["pid"] for e in events
              if e.get("ph") == "M" and e.get("name") == "process_name"}
    sorts = {e["pid"]: e["args"]["sort_index"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_sort_index"}
    for name, idx in (("CPU Usage", 9), ("Memory Usage", 10), ("Network Usage", 11),
                      ("Disk Usage", 12), ("NIC", 21)):
        assert sorts[layers[name]] == idx, name
    rss = [e["args"]["RSS(MB)"] for e in events
           if e.get("ph") == "C" and e.get("name") == "Process Memory"]
    if _RSS_FOLLOWS_ALLOCATIONS:
        assert max(rss) - rss[0] >= 0.9 * nbytes / (1 << 20)
    with open(os.path.join(rd, "ASCEND_PROFILER_OUTPUT", "nic.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and {"funcId", "Interface", "rxPacket/s"} <= set(rows[0])
    info = json.load(open(glob.glob(os.path.join(rd, "profiler_info*.json"))[0]))
    assert info["config"]["experimental_config"]["_sys_io"] is True


def test_only_cpu_asked_only_cpu_written():
    cfg = P._ExperimentalConfig(host_sys=[HS.CPU])
    rd, _ = _profile(cfg, lambda: _burn(0.1))
    tables = _tables(_db(rd))
    assert "CPU_USAGE" in tables
    assert not tables & {"HOST_MEM_USAGE", "HOST_DISK_USAGE", "HOST_NETWORK_USAGE", "NIC"}
    assert not os.path.exists(os.path.join(rd, "ASCEND_PROFILER_OUTPUT", "nic.csv"))


def _comms():
    return [open(p).read().strip() for p in glob.glob("/proc/self/task/*/comm")]


def test_without_host_sys_no_sampler_no_tables():
    def work():
        _burn(0.05)
        return _comms()

    rd, during = _profile(P._ExperimentalConfig(), work)
    assert "aiprof-hostsys" not in during
    assert not _tables(_db(rd)) & {"CPU_USAGE", "HOST_MEM_USAGE", "NIC"}


def test_sampler_thread_lives_only_while_recording():
    cfg = P._ExperimentalConfig(host_sys=[HS.MEM])

    def work():
        time.sleep(0.05)
        return _comms()

    _, during = _profile(cfg, work)
    assert "aiprof-hostsys" in during
    assert "aiprof-hostsys" not in _comms()


def test_not_called_uncollected(recwarn):
    cfg = P._ExperimentalConfig(host_sys=[HS.CPU, HS.DISK], sys_io=True)
    _profile(cfg, lambda: None)
    said = [str(w.message) for w in recwarn if "not collected" in str(w.message)]
    assert not [m for m in said if "host_sys" in m or "sys_io" in m], said


def test_dynamic_profile_host_sys():
    """profiler_config.json's experimental_config host_sys / sys_io strings
    (dynamic profiling, dp.start) reach the sampler."""
    with open("start_config.json", "w") as f:
        json.dump({"activities": ["CPU"], "prof_dir": "./started", "analyse": True,
                   "active": 2, "warmup": 0, "start_step": 0,
                   "experimental_config": {"host_sys": ["cpu", "mem"], "sys_io": True}}, f)
    code = textwrap.dedent("""
        import time
        from aiprof.profiler import dynamic_profile as dp
        dp.init("profiler_config_path")
        for step in range(6):
            if step == 2:
                dp.start("start_config.json")
            t0 = time.thread_time()
            while time.thread_time() - t0 < 0.05:
                pass
            dp.step()
    """)
    run_python(code)
    (rd,) = glob.glob("started/*_ascend_pt")
    tables = _tables(_db(rd))
    assert {"CPU_USAGE", "HOST_MEM_USAGE", "NIC"} <= tables, tables
    assert not tables & {"HOST_DISK_USAGE", "HOST_NETWORK_USAGE"}, tables
