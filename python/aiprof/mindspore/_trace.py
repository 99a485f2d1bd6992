"""One aiprof trace, read for the MindSpore layout: ops as graph nodes.

The result directory's ops and annotations come from libaiprof as
columns (aiprof._C.result_rows, what key_averages() reads: nesting,
folding and parents already worked out) and every op gets what
MindSpore's CPU profiler has for a kernel: a node name `{op}-op{N}` and a full name `Default/{scope}/{node}`.

A MindSpore node is one kernel of a compiled graph, run once per step.
An eager PyTorch program has no graph, so a node here is one (scope, op,
input shapes) triple, the scope being the names of the op's enclosing
ops and annotations, outermost first: `aten::addmm` called by
`aten::linear` inside `record_function("fc")` is
`Default/fc/aten::linear/aten::addmm-op7`; ProfilerStep#N ranges are
left out of scopes, so the node of step 1 is that of step 2.  Shapes are
part of the node so that each node has one shape, as a graph kernel does
(op_analyse() groups by shape).
"""
import json
from array import array

from .. import _C

# result_rows' columns (python/_C/op_rows.c) and their array types.
_TYPECODES = {"name": "i", "cat": "b", "tid": "q", "start": "d", "dur": "d",
              "parent": "i", "shapes": "i"}
CAT_OP, CAT_ANNOTATION = _C.ROW_OP, _C.ROW_ANNOTATION
STEP_PREFIX = "ProfilerStep#"


def _clean(name):
    # '/' separates scope levels in a full name, ';' the fields of
    # MindSpore's text files, a newline their lines.
    return name.replace("/", "_").replace(";", "_").replace("\n", " ")


def _shape_text(shape):
    if isinstance(shape, list):
        return ",".join(str(d) for d in shape)
    return "" if shape is None else str(shape)


class Node:
    """One op node: its names and every run of it."""
    __slots__ = ("index", "op_type", "op_name", "full_name", "shapes", "runs", "total_us")

    def __init__(self, index, op_type, scope, shapes):
        self.index = index
        self.op_type = op_type
        self.op_name = f"{_clean(op_type)}-op{index}"
        self.full_name = f"{scope}/{self.op_name}"
        self.shapes = shapes        # list of input shape texts
        self.runs = []              # event indices, in start order
        self.total_us = 0.0


class Trace:
    """The ops, annotations and steps of one result directory's trace."""

    def __init__(self, result_dir):
        raw = _C.result_rows(result_dir, frozenset())
        self.strings = raw.pop("strings")
        self.base_ns = raw.pop("base_ns")  # absolute times are base + start
        for key, code in _TYPECODES.items():
            col = array(code)
            col.frombytes(raw[key])
            setattr(self, key, col)
        self.n = len(self.name)
        self._shape_cache = {}
        self.nodes = []             # in order of first run
        self.steps = []             # (number text, start_us, dur_us)
        self.annotations = []       # event indices of non-step annotations
        self.ops = []               # event indices of ops
        self.top_level_ops = []     # ops inside no other op
        self.node_of = {}           # op event index → its Node
        self._build()

    def abs_us(self, start_us):
        return self.base_ns / 1000.0 + start_us

    def rel_ns(self, start_us):
        return int(round(start_us * 1000.0))

    def shapes_of(self, sid):
        if sid < 0:
            return []
        v = self._shape_cache.get(sid)
        if v is None:
            try:
                parsed = json.loads(self.strings[sid])
            except ValueError:
                parsed = [self.strings[sid]]
            if not isinstance(parsed, list):
                parsed = [parsed]
            v = self._shape_cache[sid] = [_shape_text(s) for s in parsed]
        return v

    def _build(self):
        s = self.strings
        scope = [""] * self.n
        in_op = bytearray(self.n)   # 1: some ancestor is an op
        nodes = {}
        for i in range(self.n):
            p = self.parent[i]
            name = s[self.name[i]]
            if p >= 0:  # parents come before their children
                parent_name = s[self.name[p]]
                # A step is when a node runs, not where: the same op in
                # every step is one node, as a graph kernel is.
                scope[i] = scope[p] if parent_name.startswith(STEP_PREFIX) else \
                    f"{scope[p]}/{_clean(parent_name)}"
                in_op[i] = in_op[p] or self.cat[p] == CAT_OP
            else:
                scope[i] = "Default"
            cat = self.cat[i]
            if cat == CAT_ANNOTATION:
                if name.startswith(STEP_PREFIX):
                    self.steps.append((name[len(STEP_PREFIX):], self.start[i], self.dur[i]))
                else:
                    self.annotations.append(i)
                continue
            if cat != CAT_OP:
                continue  # [memory] instants outside every event
            self.ops.append(i)
            if not in_op[i]:
                self.top_level_ops.append(i)
            key = (scope[i], self.name[i], self.shapes[i])
            node = nodes.get(key)
            if node is None:
                node = nodes[key] = Node(len(self.nodes) + 1, name, scope[i],
                                         self.shapes_of(self.shapes[i]))
                self.nodes.append(node)
            node.runs.append(i)
            node.total_us += self.dur[i]
            self.node_of[i] = node

    def span(self):
        """(first start, last end) over every event, in relative µs."""
        if not self.n:
            return 0.0, 0.0
        return min(self.start), max(a + b for a, b in zip(self.start, self.dur))

    def merged(self, indices):
        """The union of the intervals of events `indices`, sorted: [(start, end)]."""
        out = []
        for i in sorted(indices, key=lambda k: self.start[k]):
            a, b = self.start[i], self.start[i] + self.dur[i]
            if out and a <= out[-1][1]:
                if b > out[-1][1]:
                    out[-1][1] = b
            else:
                out.append([a, b])
        return out
