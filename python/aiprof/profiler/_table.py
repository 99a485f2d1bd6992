"""key_averages().table(): torch's text table, column for column.

Layout follows torch.autograd.profiler_util._build_table: Name, Self CPU %,
Self CPU, CPU total %, CPU total, CPU time avg, [CPU Mem, Self CPU Mem],
# of Calls, [Input Shapes], [Total FLOPs], [Source Location]; 12-character
columns two spaces apart, dashed rules, and the "Self CPU time total"
footer.  There is no device time here, so no device columns, as torch
prints for CPU-only runs.

The FLOPs column (with_flops, auto-scaled to KFLOPs, MFLOPs, ... by the
smallest estimate, "--" for ops without one) comes before Source Location:
torch prints its header after Source Location but its values before, and a
stack's continuation lines must stay in the last column.
"""

import math

__all__ = ["build_table", "format_time", "format_memory", "SORT_KEYS"]

# sort_by values torch documents; device spellings map to the (zero)
# device fields.
SORT_KEYS = {
    "cpu_time", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage",
    "self_cpu_memory_usage", "count",
    "cuda_time", "cuda_time_total", "self_cuda_time_total", "cuda_memory_usage",
    "self_cuda_memory_usage", "npu_time", "npu_time_total", "self_npu_time_total",
    "device_time", "device_time_total", "self_device_time_total",
    "xpu_time", "xpu_time_total", "self_xpu_time_total",
}


def format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def format_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def format_memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} Gb"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} Mb"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} Kb"
    return f"{nbytes} b"


def _sort_value(evt, sort_by):
    if sort_by.startswith(("xpu_", "self_xpu_")):
        return 0.0
    return getattr(evt, sort_by)


def _trim_path(path, width):
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


_FLOPS_UNITS = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]


def _flops_scale(values):
    """(factor, unit) for the FLOPs column, from the smallest estimate;
    None when no op has one."""
    if not values:
        return None
    level = int(max(0.0, min(math.log10(min(values)) / 3, len(_FLOPS_UNITS) - 1.0)))
    return 10.0 ** (-3 * level), _FLOPS_UNITS[level]


def build_table(events, sort_by=None, row_limit=100, max_src_column_width=75,
                max_name_column_width=55, max_shapes_column_width=80, header=None,
                profile_memory=False, top_level_events_only=False, with_flops=False):
    if sort_by is not None:
        if not isinstance(sort_by, str):
            raise TypeError(f"sort_by must be a str or None, got {type(sort_by).__name__}")
        if sort_by not in SORT_KEYS:
            raise ValueError(f"sort_by {sort_by!r} is not one of {sorted(SORT_KEYS)}")
    if isinstance(row_limit, bool) or not isinstance(row_limit, int):
        raise TypeError("row_limit must be an int")
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: _sort_value(e, sort_by), reverse=True)

    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    name_w = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_w = min(name_w, max_name_column_width)
    shapes_w = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_w = min(shapes_w, max_shapes_column_width)
    src_w = None
    if stacks:
        src_w = max(len(f) for s in stacks for f in s) + 4
        if max_src_column_width is not None:
            src_w = min(src_w, max_src_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_w] + [12] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_w)
        aligns.append(">")
    flops_scale = _flops_scale([e.flops for e in events if e.flops > 0]) if with_flops else None
    if flops_scale is not None:
        headers.append("Total " + flops_scale[1])
        widths.append(12)
        aligns.append(">")
    if stacks:
        headers.append("Source Location")
        widths.append(src_w)
        aligns.append("<")
    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(aligns, widths))
    rule = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    total_self = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_events_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [rule, row_format.format(*headers), rule]

    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, format_share(e.self_cpu_time_total, total_self), e.self_cpu_time_total_str,
               format_share(e.cpu_time_total, total_self), e.cpu_time_total_str, e.cpu_time_str]
        if profile_memory:
            row += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_w])
        if flops_scale is not None:
            row.append("--" if e.flops <= 0 else f"{e.flops * flops_scale[0]:8.3f}")
        if stacks:
            row.append(_trim_path(e.stack[0], src_w) if e.stack else "")
        out.append(row_format.format(*row))
        if stacks:
            blanks = [""] * (len(headers) - 1)
            for frame in e.stack[1:5]:
                out.append(row_format.format(*(blanks + [_trim_path(frame, src_w)])))
            out.append(row_format.format(*(blanks + [""])))
    out += [rule, f"Self CPU time total: {format_time(total_self)}"]
    return "".join(line + "\n" for line in out)
