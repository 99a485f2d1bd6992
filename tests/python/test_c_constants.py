"""Every number the Python package shares with C comes from the C headers.

aiprof._C exports the headers' enum values (python/_C/constants.c); the
package's tables (activity bits, levels, export bits, trace formats, device
types, communication kinds...) are built from those constants.  This test
reads the headers' text itself, so that it catches both a Python table that
disagrees with C and one that holds a hand-made copy (which would drift the
day C renumbers).
"""
import ast
import os
import re

import pytest

from aiprof import _C

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HEADERS = ["include/aiprof.h", "include/aiprof_integration.h", "adapters/torch/aiprof_torch.h",
           "python/_C/op_context.h", "python/_C/pytracer.h"]
PKG = os.path.join(ROOT, "python", "aiprof")


def _header_values():
    """NAME → value of every `NAME = expr` enumerator and `#define NAME expr`
    of the headers, evaluated in order (later ones may use earlier ones)."""
    text = ""
    for h in HEADERS:
        with open(os.path.join(ROOT, h), encoding="utf-8") as f:
            text += f.read() + "\n"
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    found = {}
    pat = re.compile(r"#define\s+(AIP\w+)\s+([^\n]+)|\b(AIP\w+)\s*=\s*([^,}\n]+)")
    for m in pat.finditer(text):
        name, expr = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        expr = re.sub(r"\b(\d+)[uU][lL]*\b", r"\1", expr.strip())
        expr = re.sub(r"\b(AIP\w+)\b", lambda n: repr(found[n.group(1)])
                      if n.group(1) in found else n.group(1), expr)
        try:
            found[name] = int(eval(expr, {"__builtins__": {}}))  # digits, names, | << - only
        except Exception:
            continue  # a macro that is no number (AIP_API, a function-like macro...)
    return found


H = _header_values()


def _c_name(py_name):
    for cand in ("AIP_" + py_name, "AIPROF_" + py_name,
                 "AIPY_" + py_name.replace("TRACER_", "", 1)):
        if cand in H:
            return cand
    return None


def _exported():
    return {n: getattr(_C, n) for n in dir(_C)
            if n.isupper() and isinstance(getattr(_C, n), int) and not n.startswith("ROW_")}


def test_every_exported_constant_is_the_headers_number():
    exported = _exported()
    assert len(exported) >= 60, sorted(exported)
    for name, value in exported.items():
        c = _c_name(name)
        assert c is not None, f"_C.{name} names no constant of {HEADERS}"
        assert value == H[c], f"_C.{name} = {value}, {c} = {H[c]}"


def test_row_kinds_are_distinct():
    assert len({_C.ROW_OP, _C.ROW_ANNOTATION, _C.ROW_MEMORY}) == 3


def test_python_tables_equal_the_headers():
    from aiprof.profiler import (_activity, _analyse, _distributed, _memory_labels,
                                 _memory_timeline, _validate, experimental_config as ec)
    from aiprof.profiler.scheduler import ProfilerAction
    from aiprof.profiler._activity import ProfilerActivity as A
    assert {a.name: b for a, b in _activity._BITS.items() if a is not A.MTIA} == {
        n: H["AIP_ACTIVITY_" + n] for n in ("CPU", "NPU", "CUDA", "XPU")}
    assert _activity._BITS[A.MTIA] & _activity.C_BITS == 0
    assert _activity.DEVICE_BITS == H["AIP_ACTIVITY_DEVICES"]
    assert _activity.C_BITS == (H["AIP_ACTIVITY_CPU"] | H["AIP_ACTIVITY_DEVICES"])
    assert sorted(ec._LEVEL_CODE.values()) == sorted(
        H[n] for n in ("AIP_LEVEL_NONE", "AIP_LEVEL0", "AIP_LEVEL1", "AIP_LEVEL2"))
    assert ec._LEVEL_CODE[ec.ProfilerLevel.Level0] == H["AIP_LEVEL0"]
    assert ec._AIC_CODE[ec.AiCMetrics.AiCoreNone] == H["AIP_AIC_NONE"]
    assert ec._AIC_CODE[ec.AiCMetrics.MemoryAccess] == H["AIP_AIC_MEMORY_ACCESS"]
    assert ec._EXPORT_BIT == {ec.ExportType.Text: H["AIP_EXPORT_TEXT"],
                              ec.ExportType.Db: H["AIP_EXPORT_DB"]}
    assert ec._HOST_BIT == {v: H["AIP_HOST_SYS_" + v.upper()] for v in ec._HOST_BIT}
    assert _validate.TRACE_FORMATS == {"torch_npu": H["AIP_TRACE_TORCH_NPU"],
                                       "kineto": H["AIP_TRACE_KINETO"],
                                       "perfetto": H["AIP_TRACE_PERFETTO"]}
    assert (_analyse.EXPORT_TEXT, _analyse.OUTPUTS_TRACE_VIEW) == (
        H["AIP_EXPORT_TEXT"], H["AIP_OUTPUTS_TRACE_VIEW"])
    for mod in (_memory_labels, _memory_timeline):
        assert mod._DEVICE_TYPES == {n: H["AIP_DEVICE_" + n.upper()] for n in mod._DEVICE_TYPES}
    assert _distributed._LIBS == {n: H["AIP_COMM_LIB_" + n.upper()] for n in _distributed._LIBS}
    assert (_distributed._COLL, _distributed._SEND, _distributed._RECV) == (
        H["AIP_COMM_OP_COLLECTIVE"], H["AIP_COMM_OP_SEND"], H["AIP_COMM_OP_RECV"])
    for a in ("NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"):
        assert ProfilerAction[a].value == H["AIP_ACTION_" + a]


# (file under python/aiprof, module-level name): the tables that hold C's
# numbers.  Their right-hand sides may use _C.* only, never an int literal.
_TABLES = [("profiler/_activity.py", "_BITS"), ("profiler/_activity.py", "C_BITS"),
           ("profiler/_activity.py", "DEVICE_BITS"),
           ("profiler/experimental_config.py", "_LEVEL_CODE"),
           ("profiler/experimental_config.py", "_AIC_CODE"),
           ("profiler/experimental_config.py", "_EXPORT_BIT"),
           ("profiler/experimental_config.py", "_HOST_BIT"),
           ("profiler/_validate.py", "TRACE_FORMATS"),
           ("profiler/_analyse.py", "EXPORT_TEXT"), ("profiler/_analyse.py", "OUTPUTS_TRACE_VIEW"),
           ("profiler/_memory_labels.py", "_DEVICE_TYPES"),
           ("profiler/_memory_timeline.py", "_DEVICE_TYPES"),
           ("profiler/_distributed.py", "_LIBS"), ("profiler/_distributed.py", "_COLL"),
           ("profiler/_results.py", "_CATEGORY"), ("mindspore/_trace.py", "CAT_OP")]
# ProfilerAction's members but torch's DEVICE_STOPPED, which C has not.
_ENUM_MEMBERS = [("profiler/scheduler.py", "ProfilerAction",
                  ("NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"))]


def _int_literals(node):
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
            and isinstance(n.value, int) and not isinstance(n.value, bool)]


def _assigned(tree, name):
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                names = [e.id for e in (t.elts if isinstance(t, ast.Tuple) else [t])
                         if isinstance(e, ast.Name)]
                if name in names:
                    return node.value
    return None


@pytest.mark.parametrize("path,name", _TABLES)
def test_no_hand_copied_numbers(path, name):
    with open(os.path.join(PKG, path), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    value = _assigned(tree, name)
    assert value is not None, f"{path}: no module-level {name}"
    # C_BITS + 1: MTIA's bit, the one above C's (no number of C's).
    literals = [v for v in _int_literals(value) if not (name == "_BITS" and v == 1)]
    assert not literals, f"{path}: {name} copies C's numbers {literals} by hand; use _C.*"


@pytest.mark.parametrize("path,cls,members", _ENUM_MEMBERS)
def test_no_hand_copied_enum_members(path, cls, members):
    with open(os.path.join(PKG, path), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    for member in members:
        value = _assigned(ast.Module(body=body, type_ignores=[]), member)
        assert value is not None and not _int_literals(value), \
            f"{path}: {cls}.{member} copies C's number by hand; use _C.*"
