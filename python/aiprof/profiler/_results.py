"""A finished trace's torch-style results.

libaiprof loads the result directory's raw data (aiprof._C.result_rows,
aip_result_op_rows in aiprof_integration.h) and returns packed columns
with torch's nesting, self times and memory attribution already worked
out; no trace file is read.  key_averages() aggregates those columns
directly; events() makes FunctionEvent objects only when asked for.
"""
import json
import os
from array import array

from .. import _C
from ._analyse import ensure_analysed, trace_file, wait_for
from ._events import (EventList, FunctionEvent, FunctionEventAvg, FILTERED_NAMES,
                      rewrite_name)

STACK_SEPARATOR = ";\n"
_CATEGORY = {_C.ROW_OP: "cpu_op", _C.ROW_ANNOTATION: "user_annotation",
             _C.ROW_MEMORY: "cpu_instant_event"}
_TYPECODES = {"name": "i", "cat": "b", "tid": "q", "start": "d", "dur": "d", "self": "d",
              "parent": "i", "shapes": "i", "types": "i", "stack": "i", "module": "i",
              "seq": "q", "fwd": "q", "flops": "q", "mem": "q", "self_mem": "q"}
_FILTERED = frozenset(FILTERED_NAMES)


def _parse_shapes(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


class _Columns:
    """The columns of one result directory (arrays indexed by event)."""

    def __init__(self, result_dir):
        raw = _C.result_rows(result_dir, _FILTERED)
        self.strings = raw.pop("strings")
        self.base_ns = raw.pop("base_ns")
        for key, code in _TYPECODES.items():
            col = array(code)
            col.frombytes(raw[key])
            setattr(self, key, col)
        self.n = len(self.name)
        self._shapes = {}
        self._stacks = {}

    def shapes_of(self, sid):
        if sid < 0:
            return []
        v = self._shapes.get(sid)
        if v is None:
            v = self._shapes[sid] = _parse_shapes(self.strings[sid])
        return v

    def stack_of(self, sid):
        if sid < 0:
            return []
        v = self._stacks.get(sid)
        if v is None:
            v = self._stacks[sid] = self.strings[sid].split(STACK_SEPARATOR)
        return v


class TraceResult:
    """The results of one saved trace, read on first use."""

    def __init__(self, result_dir, profile_memory=False, with_stack=False, with_flops=False):
        self.result_dir = result_dir
        self._profile_memory = profile_memory
        self._with_stack = with_stack
        self._with_flops = with_flops
        self._cols = None
        self._events = None

    def trace_path(self):
        ensure_analysed(self.result_dir)
        return trace_file(self.result_dir)

    def trace(self):
        """The parsed trace_view.json (for exports that need every event)."""
        with open(self.trace_path(), "rb") as f:
            return json.load(f)

    def columns(self):
        if self._cols is None:
            # A background analysis (async_mode) is waited for, as before:
            # callers rely on its outputs being there afterwards.
            wait_for(self.result_dir)
            self._cols = _Columns(self.result_dir)
        return self._cols

    def _event_list(self, items):
        return EventList(items, profile_memory=self._profile_memory,
                         with_stack=self._with_stack, with_flops=self._with_flops)

    def events(self):
        if self._events is None:
            c = self.columns()
            s = c.strings
            evs = []
            for i in range(c.n):
                mod = c.module[i]
                typ = c.types[i]
                e = FunctionEvent(
                    id=i, name=s[c.name[i]], thread=c.tid[i], start_us=c.start[i],
                    end_us=c.start[i] + c.dur[i], category=_CATEGORY[c.cat[i]],
                    input_shapes=c.shapes_of(c.shapes[i]),
                    input_types=s[typ] if typ >= 0 else None, stack=c.stack_of(c.stack[i]),
                    module_hierarchy=s[mod] if mod >= 0 else None, sequence_nr=c.seq[i],
                    fwd_thread=c.fwd[i], cpu_memory_usage=c.mem[i], flops=c.flops[i])
                e._self_us = c.self[i]
                e._self_mem = c.self_mem[i]
                p = c.parent[i]
                if p >= 0:  # parents come first in start order
                    e.cpu_parent = evs[p]
                    evs[p].cpu_children.append(e)
                evs.append(e)
            self._events = self._event_list(evs)
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """torch's key_averages(), straight from the columns."""
        if self._events is not None:  # the objects may have been changed by the user
            return self._events.key_averages(group_by_input_shape, group_by_stack_n)
        if not isinstance(group_by_input_shape, bool):
            raise TypeError("group_by_input_shape must be a bool")
        if isinstance(group_by_stack_n, bool) or not isinstance(group_by_stack_n, int):
            raise TypeError("group_by_stack_n must be an int")
        if group_by_stack_n < 0:
            raise ValueError("group_by_stack_n must be >= 0")
        c = self.columns()
        keys = {}  # name id → grouping key text
        prefixes = {}
        groups = {}
        for i in range(c.n):
            nid = c.name[i]
            key_text = keys.get(nid)
            if key_text is None:
                key_text = keys[nid] = rewrite_name(c.strings[nid])
            shape = c.shapes[i] if group_by_input_shape else -1
            stack = ()
            if group_by_stack_n:
                sid = c.stack[i]
                stack = prefixes.get(sid)
                if stack is None:
                    stack = prefixes[sid] = tuple(c.stack_of(sid)[:group_by_stack_n])
            k = (key_text, shape, stack)
            g = groups.get(k)
            if g is None:
                g = groups[k] = [0, 0.0, 0.0, 0, 0, i, 0]
            g[0] += 1
            g[1] += c.dur[i]
            g[2] += c.self[i]
            g[3] += c.mem[i]
            g[4] += c.self_mem[i]
            g[6] += c.flops[i]
        out = []
        for (key_text, shape, stack), (count, total, self_t, mem, self_mem, first, flops) in \
                groups.items():
            avg = FunctionEventAvg()
            avg.key = key_text
            avg.count = count
            avg.cpu_time_total = total
            avg.self_cpu_time_total = self_t
            avg.cpu_memory_usage = mem
            avg.self_cpu_memory_usage = self_mem
            avg.flops = flops
            avg.input_shapes = c.shapes_of(shape) if group_by_input_shape else []
            avg.stack = list(stack)
            avg.scope = 7 if c.cat[first] == _C.ROW_ANNOTATION else 0  # torch's RecordScope
            out.append(avg)
        return self._event_list(out)


def empty_events(profile_memory=False, with_stack=False, with_flops=False):
    return EventList([], profile_memory=profile_memory, with_stack=with_stack,
                     with_flops=with_flops)


def result_exists(result_dir):
    return result_dir is not None and os.path.isdir(result_dir)
