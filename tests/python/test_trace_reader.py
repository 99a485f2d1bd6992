"""aiprof._C.read_trace on hand-made traces: JSON edge cases, torch's
nesting and folding rules, memory attribution, and bad files."""
import json

import pytest

from aiprof import _C
from aiprof.profiler._events import FILTERED_NAMES
from aiprof.profiler._results import _TYPECODES, STACK_SEPARATOR, _parse_shapes

FILTERED = frozenset(FILTERED_NAMES)


class _Columns:
    """read_trace's columns of a trace file, as arrays."""

    def __init__(self, path):
        from array import array
        raw = _C.read_trace(path, FILTERED)
        self.strings = raw.pop("strings")
        for key, code in _TYPECODES.items():
            setattr(self, key, array(code, raw[key]))
        self.n = len(self.name)

    def shapes_of(self, sid):
        return _parse_shapes(self.strings[sid]) if sid >= 0 else []

    def stack_of(self, sid):
        return self.strings[sid].split(STACK_SEPARATOR) if sid >= 0 else []


def _x(name, tid, ts, dur, cat="cpu_op", **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def _mem(tid, ts, nbytes):
    return {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
            "tid": tid, "ts": ts, "args": {"Device Type": 0, "Bytes": nbytes}}


def _read(tmp_path, events, **top):
    path = tmp_path / "trace.json"
    doc = dict(top)
    doc["traceEvents"] = events
    path.write_text(json.dumps(doc))
    return _Columns(str(path))


def _rows(c):
    return [(c.strings[c.name[i]], c.tid[i], c.start[i], c.dur[i], c.self[i],
             c.parent[i], c.mem[i], c.self_mem[i]) for i in range(c.n)]


def test_nesting_self_time_and_folding(tmp_path):
    c = _read(tmp_path, [
        _x("ProfilerStep#1", 7, 0.0, 100.0, cat="user_annotation"),
        _x("aten::mean", 7, 10.0, 50.0, **{"Input Dims": "[[8, 4], []]"}),
        _x("aten::mean", 7, 11.0, 48.0),            # only child, same name: folded
        _x("aten::sum", 7, 12.0, 10.0),
        _x("aten::div_", 7, 30.0, 20.0),
        _x("aten::is_leaf", 7, 70.0, 1.0),          # filtered like torch
        _x("aten::mm", 8, 5.0, 5.0),                # another thread
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 7, "args": {"name": "main"}},
        {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 1, "pid": 1, "tid": 7, "ts": 1},
    ], schemaVersion=1, extra={"nested": [1, {"a": [2, "x"]}]})
    rows = _rows(c)
    names = [r[0] for r in rows]
    assert names == ["ProfilerStep#1", "aten::mm", "aten::mean", "aten::sum", "aten::div_"]
    step, mm, mean, sm, div = rows
    assert step[4] == 50.0                      # 100 - mean's 50
    assert mean[5] == 0 and mean[4] == 50.0 - 10.0 - 20.0
    assert sm[5] == 2 and div[5] == 2           # reparented to the outer mean
    assert mm[5] == -1 and mm[1] == 8
    assert c.shapes_of(c.shapes[2]) == [[8, 4], []]


def test_memory_attribution(tmp_path):
    c = _read(tmp_path, [
        _x("outer", 1, 0.0, 100.0, cat="user_annotation"),
        _x("aten::empty", 1, 10.0, 5.0),
        _mem(1, 12.0, 64),       # inside empty (and outer)
        _mem(1, 50.0, -16),      # inside outer only
        _mem(1, 500.0, 8),       # outside everything: a top-level [memory] event
        _mem(2, 12.0, 32),       # other thread, no events there
    ])
    rows = {(r[0], r[1]): r for r in _rows(c)}
    assert rows[("outer", 1)][6] == 48 and rows[("outer", 1)][7] == -16
    assert rows[("aten::empty", 1)][6] == 64 and rows[("aten::empty", 1)][7] == 64
    top = sorted((r[1], r[2], r[6]) for r in _rows(c) if r[0] == "[memory]")
    assert top == [(1, 500.0, 8), (2, 12.0, 32)]


def test_torch_npu_array_form_is_exact(tmp_path):
    """torch_npu's form: a top-level array with string ts of absolute epoch
    µs.  As float64 these lose sub-µs precision (ulp 0.25 µs near 1.8e15)
    and `inner` would seem to end with `outer`; read as integer ns it ends
    1 ns later and is no child of it."""
    x = 1795490263408585
    events = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Python"}},
        _x("outer", 7, f"{x}.262", 10.0),                  # ends at x+10.262
        _x("inner", 7, f"{x}.263", 10.0),                  # ends at x+10.263
        _x("child", 7, f"{x}.262", 9.999),                 # ends at x+10.261: inside outer
        _x("late", 8, f"{x + 1000000}.001", 0.5),          # another thread, a second later
    ]
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(events))
    c = _Columns(str(path))
    rows = {r[0]: r for r in _rows(c)}
    base_us = x // 1000000 * 1000000                       # the whole second below the first
    assert rows["outer"][2] == pytest.approx(x - base_us + 0.262, abs=1e-9)
    assert rows["late"][2] == pytest.approx(x + 1000000 - base_us + 0.001, abs=1e-9)
    names = [c.strings[c.name[i]] for i in range(c.n)]
    assert names == ["outer", "child", "inner", "late"]
    assert rows["inner"][5] == -1                          # not nested in outer
    assert rows["child"][5] == names.index("outer")
    assert rows["outer"][4] == pytest.approx(10.0 - 9.999)


def test_kineto_object_form_is_relative(tmp_path):
    c = _read(tmp_path, [_x("op", 3, 1.5, 2.25), _mem(3, 2.0, 16)],
              schemaVersion=1, baseTimeNanoseconds=1700000000000000000)
    rows = _rows(c)
    assert rows == [("op", 3, 1.5, 2.25, 2.25, -1, 16, 16)]


def test_json_edge_cases(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{ "a" : [ ] , "b":{}, "traceEvents" : [\n'
                    '{"name":"q\\"uo\\\\te\\u00e9\\ud83d\\ude00\\n","ph":"X","cat":"cpu_op",'
                    '"tid":"12","ts":1e1,"dur":2.5E0,"args":{"Call stack":"a.py(1): f;\\nb.py(2): g",'
                    '"x":[true,false,null,-1.5e-3,{"y":"]"}]}},'
                    '{"ph":"X","cat":"other","name":"skip","tid":1,"ts":0,"dur":1}],"z":"tail"}')
    c = _Columns(str(path))
    assert c.n == 1
    assert c.strings[c.name[0]] == 'q"uo\\te\u00e9\U0001F600\n'
    assert c.tid[0] == 12 and c.start[0] == 10.0 and c.dur[0] == 2.5
    assert c.stack_of(c.stack[0]) == ["a.py(1): f", "b.py(2): g"]


@pytest.mark.parametrize("text", ['', '[', '[{"ph": "X"}] x', '[{"ph": "X", "ts": "12.3.4"}]',
                                  '{"traceEvents": [', '{"traceEvents": [{"ph": "X",}]}',
                                  '{"traceEvents": [{"name": "\\x"}]}', '{"a": 1 "b": 2}'])
def test_bad_files(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError):
        _C.read_trace(str(path), FILTERED)


def test_missing_file():
    with pytest.raises(OSError):
        _C.read_trace("/nonexistent/trace.json", FILTERED)


def test_deep_nesting_is_refused_not_crashing(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"x": ' + "[" * 5000 + "]" * 5000 + ', "traceEvents": []}')
    with pytest.raises(ValueError, match="deep"):
        _C.read_trace(str(path), FILTERED)


def test_numbers_longer_than_63_characters(tmp_path):
    """A number is read whole however many digits it has (issue 28.5's
    fuzz target found the scanner cutting it at 63 characters: the rest
    was read as another token and the file refused)."""
    path = tmp_path / "trace.json"
    ts = "1." + "0" * 70 + "25"             # 1.0000...0025: 74 characters
    doc = ('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, '
           '"tid": 1, "ts": %s, "dur": 10.5, "args": {"x": %s}}]}' % (ts, "9" * 80))
    path.write_text(doc)
    c = _Columns(str(path))
    assert c.n == 1
    assert c.start[0] == pytest.approx(1.0) and c.dur[0] == 10.5
