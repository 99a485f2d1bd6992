"""A finished trace read back: trace_view.json → FunctionEvents.

The analyser writes ASCEND_PROFILER_OUTPUT/trace_view.json; this module
turns its cpu_op and user_annotation slices into torch-style events with
the nesting torch builds (per thread, by time), and attributes [memory]
instants to the innermost event around them on their thread.
"""
import bisect
import json
import os

from ._analyse import ensure_analysed, trace_file
from ._events import (EventList, FunctionEvent, FILTERED_NAMES, MEMORY_EVENT_NAME)

_CATEGORIES = ("cpu_op", "user_annotation")
STACK_SEPARATOR = ";\n"


def _parse_shapes(text):
    if not text:
        return []
    try:
        return json.loads(text)
    except ValueError:
        return text


def load_trace(result_dir):
    """The parsed trace_view.json of `result_dir` (analysing it if needed)."""
    ensure_analysed(result_dir)
    with open(trace_file(result_dir), "rb") as f:
        return json.load(f)


def build_events(trace):
    """FunctionEvents of a trace, sorted by start, parents and children set."""
    by_thread = {}
    memory = []
    for ev in trace.get("traceEvents", ()):
        ph = ev.get("ph")
        if ph == "X":
            if ev.get("cat") not in _CATEGORIES or ev.get("name") in FILTERED_NAMES:
                continue
            by_thread.setdefault(ev.get("tid"), []).append(ev)
        elif ph == "i" and ev.get("name") == MEMORY_EVENT_NAME:
            memory.append(ev)
    events = []
    next_id = 0
    for tid, raw in by_thread.items():
        raw.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
        stack = []
        for ev in raw:
            start = float(ev["ts"])
            end = start + float(ev.get("dur", 0))
            args = ev.get("args") or {}
            call_stack = args.get("Call stack")
            fe = FunctionEvent(
                id=next_id, name=ev["name"], thread=tid, start_us=start, end_us=end,
                category=ev.get("cat"),
                input_shapes=_parse_shapes(args.get("Input Dims")),
                input_types=args.get("Input type"),
                stack=call_stack.split(STACK_SEPARATOR) if call_stack else [],
                module_hierarchy=args.get("Module Hierarchy"),
                sequence_nr=args.get("Sequence number", -1),
                fwd_thread=args.get("Fwd thread id", 0))
            next_id += 1
            while stack and stack[-1].time_range.end < end:
                stack.pop()
            if stack:
                fe.cpu_parent = stack[-1]
                stack[-1].cpu_children.append(fe)
            stack.append(fe)
            events.append(fe)
    events = _remove_dup_nodes(events)
    _attach_memory(events, memory, next_id)
    events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    return events


def _remove_dup_nodes(events):
    """torch's EventList._remove_dup_nodes: an event that is the only child
    of an event of the same name (a composite op calling its own overload,
    aten::mean → aten::mean.dim) is folded into its parent, so counts match
    torch's key_averages.  Events are in start order per thread, so a single
    pass folds whole chains."""
    kept = []
    for e in events:
        p = e.cpu_parent
        if p is not None and p.name == e.name and len(p.cpu_children) == 1:
            p.cpu_children = e.cpu_children
            for c in e.cpu_children:
                c.cpu_parent = p
            continue
        kept.append(e)
    return kept


def _attach_memory(events, memory, next_id):
    """torch counts an allocation in every op whose interval holds it; here
    on the op's own thread.  Allocations outside every op become top-level
    [memory] events, as torch shows them."""
    if not memory:
        return next_id
    per_thread = {}
    for e in events:
        per_thread.setdefault(e.thread, []).append(e)
    starts = {}
    for tid, evs in per_thread.items():
        evs.sort(key=lambda e: e.time_range.start)
        starts[tid] = [e.time_range.start for e in evs]
    for m in memory:
        ts = float(m["ts"])
        nbytes = int((m.get("args") or {}).get("Bytes", 0))
        tid = m.get("tid")
        inner = None
        j = bisect.bisect_right(starts.get(tid, ()), ts) - 1
        if j >= 0:
            # The latest event starting before the allocation, or the
            # nearest of its ancestors still open at that time.
            inner = per_thread[tid][j]
            while inner is not None and inner.time_range.end < ts:
                inner = inner.cpu_parent
        if inner is None:
            fe = FunctionEvent(id=next_id, name=MEMORY_EVENT_NAME, thread=m.get("tid"),
                               start_us=ts, end_us=ts, category="cpu_instant_event",
                               cpu_memory_usage=nbytes)
            next_id += 1
            events.append(fe)
            continue
        node = inner
        while node is not None:
            node.cpu_memory_usage += nbytes
            node = node.cpu_parent
    return next_id


class TraceResult:
    """The events of one saved trace, loaded on first use."""

    def __init__(self, result_dir, profile_memory=False, with_stack=False):
        self.result_dir = result_dir
        self._profile_memory = profile_memory
        self._with_stack = with_stack
        self._events = None

    def trace(self):
        """The parsed trace_view.json."""
        return load_trace(self.result_dir)

    def events(self):
        if self._events is None:
            self._events = EventList(build_events(self.trace()),
                                     profile_memory=self._profile_memory,
                                     with_stack=self._with_stack)
        return self._events

    def trace_path(self):
        ensure_analysed(self.result_dir)
        return trace_file(self.result_dir)


def empty_events(profile_memory=False, with_stack=False):
    return EventList([], profile_memory=profile_memory, with_stack=with_stack)


def result_exists(result_dir):
    return result_dir is not None and os.path.isdir(result_dir)
