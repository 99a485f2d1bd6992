"""profile_framework: the host_info/ folder (MindSpore 2.2).

MindSpore's framework calls CollectHostInfo() at the start and end of its
host stages; each call appends a row to `profiler/host_info/host_info_{R}.csv`
with the header below (mindspore/ccsrc/debug/profiler/profiling.cc), the
time (`time_stamp(us)`, epoch µs) when profile_framework is "time" or "all",
and the process's VmRSS (`memory_usage(kB)`) when it is "memory" or "all".
At analyse() the rows become `host_info/timeline_{R}.json` (a Chrome trace)
and `host_info/host_memory_{R}.csv`.

aiprof's host stages are what the trace holds: every record_function /
annotation range (level 0, module "Python") and every top-level operator
(level 1, module "PyTorch"), a start row and an end row each, made at
analyse() from the trace.  Memory cannot be read back from a trace, so a
sampler thread reads VmRSS from /proc/self/status every SAMPLE_PERIOD_S
while the profiler runs (and once at start and at stop) and appends its
rows (module "aiprof", event "HostMemory", stage "VmRSS", start_end 2) to
the CSV as MindSpore does, flushed, so that a run that dies keeps them.
Unlike MindSpore's, a memory sample keeps its time stamp with "memory":
a sample without a time could not be placed on the timeline.
"""
import csv
import json
import logging
import os
import signal
import threading
import time

from ..profiler import _output

log = logging.getLogger("aiprof.mindspore")

HEADER = ["tid", "pid", "parent_pid", "module_name", "event", "stage", "level", "start_end",
          "custom_info", "memory_usage(kB)", "time_stamp(us)"]
SAMPLE_PERIOD_S = 0.01
START, END, SAMPLE = 0, 1, 2


def wants_time(framework):
    return framework in ("all", "time")


def wants_memory(framework):
    return framework in ("all", "memory")


def read_vmrss_kb(path="/proc/self/status"):
    """VmRSS in kB, or None where the file or the line is missing."""
    try:
        with open(path, "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


class MemorySampler:
    """A daemon thread appending VmRSS rows to host_info_{R}.csv."""

    def __init__(self, csv_path, period_s=SAMPLE_PERIOD_S):
        self._path = csv_path
        self._period = period_s
        self._stop = threading.Event()
        self._thread = None
        self._file = None
        self._writer = None
        self._warned = False
        self.samples = 0

    def start(self):
        exists = os.path.exists(self._path)
        self._file = _output.open_output(self._path, "w") if not exists else \
            open(self._path, "a", newline="")
        self._writer = csv.writer(self._file, lineterminator="\n")
        if not exists:
            self._writer.writerow(HEADER)
        self.sample()
        self._thread = threading.Thread(target=self._run, name="aiprof-host-memory", daemon=True)
        # The thread inherits the mask it starts with: every asynchronous
        # signal blocked, so that a SIGTERM meant for a program that takes
        # it with signal.sigwait never lands here (src/common/thread.h).
        sync = {signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals() - sync)
        try:
            self._thread.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def sample(self):
        kb = read_vmrss_kb()
        if kb is None:
            if not self._warned:  # containers without /proc: said once, the run goes on
                self._warned = True
                log.warning("[Profiler]profile_framework: /proc/self/status has no VmRSS "
                            "here; host memory is not recorded")
            return
        self._writer.writerow([threading.get_native_id(), os.getpid(), os.getppid(), "aiprof",
                               "HostMemory", "VmRSS", 0, SAMPLE, "", kb,
                               int(time.time() * 1e6)])
        self._file.flush()
        self.samples += 1

    def _run(self):
        while not self._stop.wait(self._period):
            try:
                self.sample()
            except (OSError, ValueError) as e:  # disk full, file closed: stop sampling
                log.warning("[Profiler]profile_framework: host memory sampling stopped: %s", e)
                return

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._file is not None:
            try:
                self.sample()
            finally:
                self._file.close()
                self._file = None


def _time_rows(trace, pid, ppid):
    """Start and end rows of the trace's annotations and top-level ops."""
    s = trace.strings
    rows = []
    for level, module, indices in ((0, "Python", trace.annotations),
                                   (1, "PyTorch", trace.top_level_ops)):
        for i in indices:
            name = s[trace.name[i]]
            start = trace.abs_us(trace.start[i])
            for edge, t in ((START, start), (END, start + trace.dur[i])):
                rows.append([trace.tid[i], pid, ppid, module, "record_function" if level == 0
                             else "op", name, level, edge, "", 0, int(round(t))])
    for number, start, dur in trace.steps:
        t0 = trace.abs_us(start)
        for edge, t in ((START, t0), (END, t0 + dur)):
            rows.append(["", pid, ppid, "Python", "step", f"ProfilerStep#{number}", 0, edge, "",
                         0, int(round(t))])
    return rows


def _read_rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        r = csv.reader(f)
        rows = [row for row in r if row and row != HEADER and len(row) == len(HEADER)]
    return rows


def write_host_info(trace, out_dir, rank_id, framework, pid, ppid, pretty):
    """host_info_{R}.csv completed with the time rows, then timeline_{R}.json
    and host_memory_{R}.csv.  `trace` None: no op data (op_time=False)."""
    host_dir = os.path.join(out_dir, "host_info")
    csv_path = os.path.join(host_dir, f"host_info_{rank_id}.csv")
    memory_rows = [r for r in _read_rows(csv_path) if r[3] == "aiprof"]
    time_rows = _time_rows(trace, pid, ppid) if trace is not None and wants_time(framework) \
        else []
    rows = sorted(memory_rows + time_rows, key=lambda r: int(r[10] or 0))
    with _output.open_output(csv_path, "w") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        w.writerows(rows)
    with _output.open_output(os.path.join(host_dir, f"host_memory_{rank_id}.csv"), "w") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        w.writerows(r for r in rows if str(r[9]) not in ("", "0"))
    events = []
    open_rows = {}
    for r in rows:
        key = (str(r[0]), r[3], r[4], r[5])
        edge = int(r[7])
        if edge == START:
            open_rows.setdefault(key, []).append(r)
        elif edge == END and open_rows.get(key):
            b = open_rows[key].pop()
            events.append({"name": r[5], "cat": r[3], "ph": "X", "pid": int(r[1]),
                           "tid": int(r[0]) if str(r[0]).isdigit() else 0,
                           "ts": int(b[10]), "dur": int(r[10]) - int(b[10]),
                           "args": {"event": r[4], "level": int(r[6])}})
        elif edge == SAMPLE:
            events.append({"name": "Host Memory", "ph": "C", "pid": int(r[1]), "ts": int(r[10]),
                           "args": {"memory_usage(kB)": int(r[9])}})
    events.sort(key=lambda e: e["ts"])
    with _output.open_output(os.path.join(host_dir, f"timeline_{rank_id}.json"), "w") as f:
        # dumps, not dump: dump streams through the pure-Python encoder.
        f.write(json.dumps(events, indent=4 if pretty else None))
    return len(rows)
