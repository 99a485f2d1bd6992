#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_json_scan (tests/fuzz/corpus_fuzz_json_scan/).

Usage: make_corpus_json_scan.py [OUT_DIR]
trace_view.json texts as aiprof and torch_npu write them (the object form
with traceEvents, the bare array form, events of every phase with args,
flows, counters, metadata), and the JSON corners the scanner must read as
jansson does or refuse cleanly: escapes and surrogate pairs, lone
surrogates, numbers of every form (long ones too), deep nesting around the
scanner's limits, cut text, text after the value.
libFuzzer's finds are merged into the same directory (-merge=1).
"""
import json
import os
import sys

EVENTS = [
    {"ph": "M", "name": "process_name", "pid": 1001, "tid": 0, "args": {"name": "Python"}},
    {"ph": "X", "name": "aten::mm", "pid": 1001, "tid": 7, "ts": "1700000000000123.456",
     "dur": 12.5, "cat": "cpu_op", "args": {"Input Dims": [[2, 3], [3, 4]], "Sequence number": 5}},
    {"ph": "X", "name": "ProfilerStep#1", "pid": 1001, "tid": 7, "ts": 1700000000000100.0,
     "dur": 1000},
    {"ph": "s", "id": 11, "name": "fwdbwd", "cat": "fwdbwd", "pid": 1001, "tid": 7,
     "ts": "1700000000000124.000", "bp": "e"},
    {"ph": "f", "id": 11, "name": "fwdbwd", "cat": "fwdbwd", "pid": 1001, "tid": 8,
     "ts": "1700000000000150.000", "bp": "e"},
    {"ph": "C", "name": "[memory]", "pid": 1001, "tid": 0, "ts": 1700000000000125,
     "args": {"Total Allocated": 1048576, "Device Type": 0}},
    {"ph": "i", "name": "mark \u00e9\u4e2d\U0001F600", "pid": "1001", "tid": "7", "ts": 1.7e15,
     "s": "t"},
]


def cases():
    yield "trace_object", json.dumps({"traceEvents": EVENTS, "displayTimeUnit": "ns"}, indent=1)
    yield "trace_array", json.dumps(EVENTS)
    yield "trace_ascii", json.dumps({"traceEvents": EVENTS}, ensure_ascii=True)
    yield "trace_empty", '{"traceEvents": []}'
    yield "escapes", r'["\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20ac", "\ud83d\ude00", "a\u0000b"]'
    yield "lone_surrogates", r'["\ud800", "\udc00x", "\ud800\u0041"]'
    yield "bad_escapes", r'["\x", "\u12", "\u12G4"]'
    yield "numbers", "[0, -0, 1.5, -2.25e-3, 1E+10, 123456789012345678, 1e308, 5e-324]"
    yield "number_long", "[0." + "0" * 70 + "1]"
    yield "number_long_int_real", "[" + "9" * 80 + ".5]"
    yield "literals", "[true, false, null, {\"a\": true}]"
    yield "nest_250", "[" * 250 + "]" * 250
    yield "nest_300", "[" * 300 + "]" * 300
    yield "nest_objects", '{"a":' * 40 + "1" + "}" * 40
    yield "cut_string", '{"traceEvents": [{"name": "ab'
    yield "cut_escape", '["ab\\'
    yield "cut_unicode", '["\\u00'
    yield "trailing", '{"a": 1} x'
    yield "trailing_ws", '{"a": 1} \n\t\r '
    yield "missing_comma", '{"a": 1 "b": 2}'
    yield "empty", ""
    yield "ws_only", "  \n"
    yield "scalar", "42"
    yield "dup_keys", '{"a": 1, "a": 2}'
    yield "control_in_string", '["a\tb\x01"]'


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus_fuzz_json_scan")
    os.makedirs(out, exist_ok=True)
    for name, text in cases():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
