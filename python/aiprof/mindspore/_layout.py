"""The MindSpore 2.2 files of a CPU (host) run, written from an aiprof trace.

MindSpore's CPU profiler (device_target "CPU") writes, into
`{output_path}/profiler/` (D = device id, R = rank id):

  cpu_op_execute_timestamp_{D}.txt  `full_op_name;HostCpuOps;start_ns,dur_ms,tid ...`
  cpu_framework_{D}.txt             `op_type;op_name;graph_id;input_0:shape;...`
  cpu_op_detail_info_{D}.csv        one row per op node
  cpu_op_type_info_{D}.csv          one row per op type
  cpu_timeline_display_{R}.json     the timeline (a JSON array), cut at timeline_limit MB
  cpu_timeline_summary_{R}.json     totals of the timeline
  profiler_info_{R}.json            run and analysis information

(headers and line formats as mindspore/ccsrc/profiler/device/data_saver.h
and profiler/parser/cpu_gpu_timeline_generator.py write them; docs/MINDSPORE.md).
Everything comes from the op rows libaiprof makes from the run's aiprof
result directory (_trace.py, aiprof._C.result_rows): nothing is measured,
parsed or nested again here; docs/MINDSPORE.md says why this writer stays
in Python.
"""
import csv
import json
import logging
import os
import textwrap
import time

from ..profiler import _output
from ._trace import CAT_OP, Trace, _clean

log = logging.getLogger("aiprof.mindspore")

CPU_DETAIL_HEADER = ["op_side", "op_type", "op_name", "full_op_name", "op_occurrences",
                     "op_total_time(ms)", "op_avg_time(ms)", "total_proportion", "subgraph", "pid"]
CPU_TYPE_HEADER = ["op_type", "type_occurrences", "execution_frequency(per-step)",
                   "total_compute_time", "avg_time(ms)", "percent"]

# MindSpore's timeline processes and threads (base_timeline_generator.py).
HOST_CPU_PID = 11000
OP_OVERLAP_PID = 12000
MERGED_COMPUTATION_TID = 7999
FREE_TIME_TID = 8002
STEPS_TID = 100000
HOST_CPU_LABEL = "Host CPU OP"
MB = 1024 * 1024


def _fmt(v):
    """A float as MindSpore's C++ streams print it: short, no trailing zeros."""
    return f"{v:.6g}"


def _open_text(path):
    return _output.open_output(path, "w")


def write_json(path, obj, pretty):
    with _open_text(path) as f:
        f.write(json.dumps(obj, indent=4 if pretty else None))


def write_op_files(trace, out_dir, device_id, pid):
    """cpu_op_execute_timestamp, cpu_framework, cpu_op_detail_info and
    cpu_op_type_info for `trace`."""
    d = device_id
    with _open_text(os.path.join(out_dir, f"cpu_op_execute_timestamp_{d}.txt")) as f:
        for node in trace.nodes:
            runs = " ".join(f"{trace.rel_ns(trace.start[i])},{_fmt(trace.dur[i] / 1000.0)},"
                            f"{trace.tid[i]}" for i in node.runs)
            f.write(f"{node.full_name};HostCpuOps;{runs} \n")
    with _open_text(os.path.join(out_dir, f"cpu_framework_{d}.txt")) as f:
        for node in trace.nodes:
            inputs = "".join(f"input_{k}:{s};" for k, s in enumerate(node.shapes))
            f.write(f"{_clean(node.op_type)};{node.op_name};0;{inputs}\n")
    total = sum(node.total_us for node in trace.nodes)
    with _open_text(os.path.join(out_dir, f"cpu_op_detail_info_{d}.csv")) as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CPU_DETAIL_HEADER)
        for node in trace.nodes:
            count = len(node.runs)
            w.writerow(["Host", node.op_type, node.op_name, node.full_name, count,
                        _fmt(node.total_us / 1000.0), _fmt(node.total_us / 1000.0 / count),
                        _fmt(node.total_us / total if total else 0.0), "Default", pid])
    # Op types: the same runs grouped by type, so that a type's figures
    # are the sums of its nodes' rows (op_statistic.csv counts an op that
    # is the only child of an op of its name separately; the trace reader
    # folds it into its parent, as torch's key_averages() does).
    steps = max(1, len(trace.steps))
    types = {}
    for node in trace.nodes:
        acc = types.setdefault(node.op_type, [0, 0.0])
        acc[0] += len(node.runs)
        acc[1] += node.total_us
    with _open_text(os.path.join(out_dir, f"cpu_op_type_info_{d}.csv")) as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CPU_TYPE_HEADER)
        for op_type, (count, total_us) in sorted(types.items(), key=lambda kv: -kv[1][1]):
            w.writerow([op_type, count, count // steps, _fmt(total_us / 1000.0),
                        _fmt(total_us / 1000.0 / count), _fmt(total_us / total if total else 0.0)])


def _timeline_events(trace, device_id):
    """(events sorted by start, overlap events, thread ids) as MindSpore's
    CPU timeline has them: ops and annotations on their threads, steps on
    "Steps", the merged computation and the free time in Op Overlap Analyse.
    An event is (name, tid, ts, dur, pid), all X slices."""
    s = trace.strings
    items = []
    tids = set()
    for i in sorted(trace.ops + trace.annotations):
        tid = trace.tid[i]
        name = trace.node_of[i].op_name if trace.cat[i] == CAT_OP else s[trace.name[i]]
        tids.add(tid)
        items.append((name, tid, round(trace.start[i], 3), round(trace.dur[i], 3), device_id))
    for number, start, dur in trace.steps:
        items.append((number, STEPS_TID, round(start, 3), round(dur, 3), device_id))
    items.sort(key=lambda e: e[2])
    overlap = []
    busy = trace.merged(trace.top_level_ops)
    for a, b in busy:
        overlap.append(("computation_op", MERGED_COMPUTATION_TID, round(a, 3), round(b - a, 3),
                        OP_OVERLAP_PID))
    for (_, b), (c, _) in zip(busy, busy[1:]):
        overlap.append(("free_time", FREE_TIME_TID, round(b, 3), round(c - b, 3),
                        OP_OVERLAP_PID))
    return items, overlap, sorted(tids)


class _Dumper:
    """JSON text of timeline entries: the slices formatted directly (one
    json.dumps per distinct name, not per event), the rest by json."""

    def __init__(self, pretty):
        self.pretty = pretty
        self.sep = ",\n" if pretty else ","
        self._names = {}

    def obj(self, obj):
        if self.pretty:
            return textwrap.indent(json.dumps(obj, indent=4), "    ")
        return json.dumps(obj)

    def slice(self, ev):
        name, tid, ts, dur, pid = ev
        if self.pretty:
            return self.obj({"name": name, "ph": "X", "tid": tid, "ts": ts, "dur": dur,
                             "pid": pid})
        q = self._names.get(name)
        if q is None:
            q = self._names[name] = json.dumps(name)
        return f'{{"name": {q}, "ph": "X", "tid": {tid}, "ts": {ts!r}, "dur": {dur!r}, ' \
               f'"pid": {pid}}}'


def _labels(device_id, tids):
    meta = [
        {"name": "process_labels", "ph": "M", "pid": device_id, "args": {"labels": HOST_CPU_LABEL}},
        {"name": "process_labels", "ph": "M", "pid": OP_OVERLAP_PID,
         "args": {"labels": "Op Overlap Analyse"}},
        {"name": "process_sort_index", "ph": "M", "pid": device_id, "args": {"sort_index": 0}},
        {"name": "process_sort_index", "ph": "M", "pid": OP_OVERLAP_PID,
         "args": {"sort_index": 40}},
        {"name": "thread_name", "ph": "M", "pid": device_id, "tid": STEPS_TID,
         "args": {"name": "Steps"}},
        {"name": "thread_sort_index", "ph": "M", "pid": device_id, "tid": STEPS_TID,
         "args": {"sort_index": -4}},
        {"name": "thread_name", "ph": "M", "pid": OP_OVERLAP_PID, "tid": MERGED_COMPUTATION_TID,
         "args": {"name": "Merged Computation Op"}},
        {"name": "thread_name", "ph": "M", "pid": OP_OVERLAP_PID, "tid": FREE_TIME_TID,
         "args": {"name": "Free Time"}},
    ]
    for tid in tids:
        meta.append({"name": "thread_name", "ph": "M", "pid": device_id, "tid": tid,
                     "args": {"name": f"HostCpuOps{tid}"}})
    return meta


def write_timeline(trace, out_dir, rank_id, device_id, limit_mb, pretty):
    """cpu_timeline_display_{R}.json, cut so that the file stays within
    `limit_mb` MiB (MindSpore's timeline_limit): events are written in
    time order until the next one would not fit; a metadata event
    (`timeline_info`) and the log say how many were left out.  `ts` are µs
    since the trace's base (the whole second before its first event, epoch
    ns in timeline_info's `ts_base_ns`): small numbers keep ns exact in a
    float64, as MindSpore's monotonic-clock µs do.  Returns
    (written, dropped)."""
    items, overlap, tids = _timeline_events(trace, device_id)
    events = items + overlap  # MindSpore appends the overlap tracks last
    tail = _labels(device_id, tids)
    dumper = _Dumper(pretty)
    sep = dumper.sep

    def info(written, dropped):
        return dumper.obj({"name": "timeline_info", "ph": "M", "pid": device_id, "tid": 0,
                           "args": {"timeline_limit(MB)": limit_mb, "written_events": written,
                                    "dropped_events": dropped, "truncated": dropped > 0,
                                    "ts_base_ns": trace.base_ns}})

    tail_text = sep.join(dumper.obj(m) for m in tail)
    # Room for the closing metadata, sized for the longest counts it may hold.
    reserve = len(info(len(events), len(events)).encode()) + len(tail_text.encode()) + 16
    budget = limit_mb * MB - reserve
    path = os.path.join(out_dir, f"cpu_timeline_display_{rank_id}.json")
    written = 0
    size = 2
    with _open_text(path) as f:
        f.write("[\n" if pretty else "[")
        for ev in events:
            text = dumper.slice(ev)
            n = len(text.encode()) + len(sep)
            if size + n > budget:
                break
            f.write(text)
            f.write(sep)
            size += n
            written += 1
        dropped = len(events) - written
        f.write(info(written, dropped))
        f.write(sep)
        f.write(tail_text)
        f.write("\n]" if pretty else "]")
    if dropped:
        log.warning("[Profiler]The timeline is larger than timeline_limit (%d MB): %d of %d "
                    "events were written to %s, %d were left out (later ones first); raise "
                    "timeline_limit to keep them", limit_mb, written, len(events), path, dropped)
    return written, dropped


def write_summary(trace, out_dir, rank_id, pretty):
    total_us = sum(trace.dur[i] for i in trace.ops)
    tids = {trace.tid[i] for i in trace.ops}
    depth = max((n.full_name.count("/") - 1 for n in trace.nodes), default=0)
    summary = {"total_time": round(total_us / 1000.0, 6), "num_of_streams": len(tids),
               "num_of_ops": len(trace.nodes), "op_exe_times": len(trace.ops),
               "max_scope_name_num": depth}
    write_json(os.path.join(out_dir, f"cpu_timeline_summary_{rank_id}.json"), summary, pretty)


def write_profiler_info(out_dir, rank_id, run, analyse_start, pretty, extra):
    info = {"context_mode": "pynative", "rank_id": rank_id, "ms_version": "",
            "parallel_mode": "data_parallel", "stage_num": 1, "rank_size": 1,
            "is_heterogeneous": False, "graph_ids": [0],
            "profiling_start_time": run.get("start_time", ""),
            "profiling_stop_time": run.get("stop_time", ""),
            "analyse_start_time": analyse_start,
            "analyse_end_time": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime()),
            "aiprof": extra}
    write_json(os.path.join(out_dir, f"profiler_info_{rank_id}.json"), info, pretty)


def load_trace(result_dir):
    return Trace(result_dir)
