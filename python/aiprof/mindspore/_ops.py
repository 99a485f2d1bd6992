"""Profiler.op_analyse(): per-op performance data from the written files.

As MindSpore's GpuFrameWorkParser does for a CPU run, the answer is read
from `cpu_framework_{D}.txt` (op type, node name, input shapes) and
`cpu_op_detail_info_{D}.csv` (runs and times of each node), so that it
works offline on an output directory alone.  An op name matches a node
whose op type or node name equals it; its nodes are grouped by input
shapes: one entry per distinct shape list, times in µs.
"""
import csv
import json
import os


def _check_files(out_dir, device_id):
    framework = f"cpu_framework_{device_id}.txt"
    detail = f"cpu_op_detail_info_{device_id}.csv"
    try:
        names = set(os.listdir(out_dir))
    except OSError:
        names = set()
    if not names:
        raise RuntimeError(f"No profiler file is found in the path <{out_dir}>. Check whether "
                           "the profiler path is correct.")
    if detail in names and framework not in names:
        raise RuntimeError(f"The output file <{framework}> is not found.")
    if framework in names and detail not in names:
        raise RuntimeError(f"The output file <{detail}> is not found.")
    if framework not in names:
        raise RuntimeError(f"The profiling data of this card which device_id is equal to "
                           f"{device_id} does not exist. Check whether device_id is correct.")
    return os.path.join(out_dir, framework), os.path.join(out_dir, detail)


def _read(framework_path, detail_path):
    nodes = []  # (op_type, op_name, shape text)
    with open(framework_path) as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            if len(fields) < 3:
                continue
            shapes = [s for s in fields[3:] if s]
            nodes.append((fields[0], fields[1], ",".join(shapes)))
    detail = {}
    with open(detail_path, newline="") as f:
        for row in csv.DictReader(f):
            detail[row["op_name"]] = (int(row["op_occurrences"]),
                                      float(row["op_total_time(ms)"]))
    return nodes, detail


def op_analyse(out_dir, device_id, names, shown_device_id):
    """MindSpore's JSON text for op names `names` (RuntimeError: one of
    them ran in no node, or the files are missing)."""
    nodes, detail = _read(*_check_files(out_dir, device_id))
    result = {}
    for name in names:
        by_shape = {}
        for op_type, op_name, shape in nodes:
            if name not in (op_type, op_name) or op_name not in detail:
                continue
            count, total_ms = detail[op_name]
            acc = by_shape.setdefault(shape, [0, 0.0])
            acc[0] += count
            acc[1] += total_ms
        if not by_shape:
            raise RuntimeError(f"The information of <{name}> is not found. Please verify that "
                               "the operator name is correct or the operator is used in the "
                               "network.")
        result[name] = [{"op_side": "cpu", "input_shape": shape, "op_occurrences": count,
                         "op_total_time(us)": round(total_ms * 1000.0, 4),
                         "op_avg_time(us)": round(total_ms * 1000.0 / count, 4)}
                        for shape, (count, total_ms) in by_shape.items()]
    result["device_id"] = shown_device_id
    return json.dumps(result)
