"""aiprof._C.result_rows (libaiprof's aip_result_op_rows): the rows that
events(), key_averages(), export_stacks() and aiprof.mindspore read, from
the raw data through the analyser's load and derive.

They must be what trace_view.json draws: every row an op or annotation
slice of the trace (or a [memory] instant outside every slice), every
slice of the trace a row unless torch's rules filter or fold it.  The
profiles are the repository's golden result directory and a recording
with every option on, in both trace forms.
"""
import os
import shutil
import threading
from array import array

import pytest

from aiprof import _C
from aiprof.profiler._events import FILTERED_NAMES
from aiprof.profiler._results import TraceResult, _TYPECODES
from conftest import HAVE_TORCH, ROOT, ts_ns, trace_events, trace_of

FILTERED = frozenset(FILTERED_NAMES)
GOLDEN = os.path.join(ROOT, "tests", "golden", "input", "golden_ascend_pt")
FORMS = {"torch_npu": _C.TRACE_TORCH_NPU, "kineto": _C.TRACE_KINETO}


def _record(base):
    """A profile with shapes, memory, stacks, FLOPs, modules, annotations
    and a second thread."""
    import torch
    import aiprof
    from conftest import TinyNet
    net = TinyNet()
    prof = aiprof.profiler.profile(
        activities=[aiprof.profiler.ProfilerActivity.CPU], record_shapes=True,
        profile_memory=True, with_stack=True, with_flops=True, with_modules=True,
        schedule=aiprof.profiler.schedule(wait=0, warmup=0, active=3, repeat=1),
        on_trace_ready=aiprof.profiler.tensorboard_trace_handler(base))
    with prof:
        for _ in range(3):
            with aiprof.profiler.record_function("outer"):
                net()
            t = threading.Thread(target=lambda: torch.ones(64).sum())
            t.start()
            t.join()
            prof.step()
    dirs = sorted(d for d in os.listdir(base) if d.endswith("_ascend_pt"))
    return os.path.join(base, dirs[-1])


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    """(label, result dir) pairs, each with trace_view.json in its form."""
    src = [("golden", GOLDEN)]
    if HAVE_TORCH:
        src.append(("recorded", _record(str(tmp_path_factory.mktemp("rec")))))
    out = []
    for label, d in src:
        for form, code in FORMS.items():
            dst = str(tmp_path_factory.mktemp(f"{label}_{form}") / os.path.basename(d))
            shutil.copytree(os.path.join(d, "FRAMEWORK"), os.path.join(dst, "FRAMEWORK"))
            for f in os.listdir(d):
                if f.endswith(".json"):
                    shutil.copy(os.path.join(d, f), dst)
            _C.analyse_dir(dst, _C.EXPORT_TEXT, True, _C.OUTPUTS_TRACE_VIEW, trace_format=code)
            out.append((f"{label}/{form}", dst))
    return out


def _columns(raw):
    strings = raw.pop("strings")
    cols = {}
    for key, code in _TYPECODES.items():
        cols[key] = array(code)
        cols[key].frombytes(raw[key])
    return strings, cols


def _text(strings, i):
    return strings[i] if i >= 0 else None


def _rows(raw):
    """Every row as a tuple of values (texts, not string indices), parents
    by their row's tuple key."""
    s, c = _columns(raw)
    rows = []
    for i in range(len(c["name"])):
        rows.append((s[c["name"][i]], c["cat"][i], c["tid"][i], c["start"][i], c["dur"][i],
                     c["self"][i], c["parent"][i], _text(s, c["shapes"][i]),
                     _text(s, c["types"][i]), _text(s, c["stack"][i]),
                     _text(s, c["module"][i]), c["seq"][i], c["fwd"][i], c["flops"][i],
                     c["mem"][i], c["self_mem"][i]))
    return rows


def test_rows_are_the_trace_views_slices(profiles):
    for label, d in profiles:
        rows = _rows(_C.result_rows(d, FILTERED))
        assert rows, label
        events = trace_events(trace_of(d))
        cats = {"cpu_op": _C.ROW_OP, "user_annotation": _C.ROW_ANNOTATION}
        slices = {}
        for e in events:
            if e.get("ph") == "X" and e.get("cat") in cats and e["name"] not in FILTERED:
                a = e.get("args", {})
                key = (e["name"], cats[e["cat"]], int(e["tid"]), ts_ns(e["ts"]),
                       ts_ns(e["dur"]))
                slices.setdefault(key, []).append(
                    (a.get("Input Dims"), a.get("Input type"), a.get("Call stack"),
                     a.get("Module Hierarchy"), a.get("Sequence number", -1),
                     a.get("Fwd thread id", 0), a.get("flops", 0)))
        kineto = "kineto" in label  # Kineto's ts are binary fractions of a µs
        matched = 0
        for r in rows:
            if r[1] == _C.ROW_MEMORY:
                continue
            key = (r[0], r[1], r[2], round(r[3] * 1000), round(r[4] * 1000))
            if kineto:
                near = [k for k in slices if k[:3] == key[:3] and abs(k[3] - key[3]) <= 1
                        and abs(k[4] - key[4]) <= 2]
                assert near, (label, r)
                key = near[0]
            assert key in slices, (label, r)
            assert r[7:14] in slices[key], (label, r, slices[key])
            matched += 1
        total = sum(len(v) for v in slices.values())
        # What is left was folded into a parent of the same name (torch's rule).
        assert matched <= total and matched >= total // 2, (label, matched, total)
        memory = [e for e in events if e.get("ph") == "i" and e.get("name") == "[memory]"]
        assert sum(r[14] for r in rows if r[6] < 0) == sum(e["args"]["Bytes"] for e in memory)


def test_events_and_key_averages_from_rows(profiles):
    for label, d in profiles:
        r = TraceResult(d, profile_memory=True, with_stack=True, with_flops=True)
        evs = r.events()
        assert len(evs) == len(_rows(_C.result_rows(d, FILTERED)))
        for e in evs:
            for child in e.cpu_children:
                assert child.cpu_parent is e
                assert e.time_range.start <= child.time_range.start
        table = {a.key: (a.count, a.cpu_time_total) for a in r.key_averages()}
        again = TraceResult(d).events().key_averages()
        assert table == {a.key: (a.count, a.cpu_time_total) for a in again}


def test_bad_directory_is_a_clear_error(tmp_path):
    with pytest.raises((ValueError, OSError)) as e:
        _C.result_rows(str(tmp_path / "missing_ascend_pt"), FILTERED)
    assert "result" in str(e.value)
    with pytest.raises(TypeError):
        _C.result_rows(str(tmp_path), frozenset({1}))
