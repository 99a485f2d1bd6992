#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_result_info (tests/fuzz/corpus_fuzz_result_info/).

Usage: make_corpus_result_info.py [OUT_DIR]
Each input is three files cut at "\\n@@\\n" (tests/fuzz/fuzz_files.h):
profiler_info_3.json, profiler_metadata.json, profiler_info.json (an empty
part: the file is absent).  Seeds: the golden input's files
(tests/golden/input/golden_ascend_pt), the variants the readers know
(ProfilerLevel.* / Level_none, export types, activities, host_sys,
start_sync and texts_cut of the "aiprof" block), and broken ones: cut,
not an object, wrong types, unicode escapes, NUL, huge numbers.
libFuzzer's finds are merged into the same directory (-merge=1).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "golden", "input", "golden_ascend_pt")
SEP = "\n@@\n"


def golden(name):
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as f:
        return f.read()


def info(level="Level1", export=("text",), activities=("ProfilerActivity.CPU",), extra=None):
    d = json.loads(golden("profiler_info.json"))
    d["config"]["experimental_config"]["_profiler_level"] = level
    d["config"]["experimental_config"]["_export_type"] = list(export)
    d["config"]["common_config"]["activities"] = list(activities)
    d["rank_id"] = 3
    d.update(extra or {})
    return json.dumps(d)


def parts(*p):
    return SEP.join(p)


def cases():
    gi, gm = golden("profiler_info.json"), golden("profiler_metadata.json")
    yield "golden", parts(gi, gm)
    yield "golden_unranked", parts("", gm, gi)
    yield "level_none_db", parts(info("ProfilerLevel.Level_none", ("ExportType.Db", "text")), gm)
    yield "level2_all", parts(info("Level2", ("db",), ("CPU", "NPU", "CUDA")), "{}")
    yield "aiprof_block", parts(info(extra={"aiprof": {
        "hostname": "h0", "host_uid": "1234", "texts_cut": 7,
        "start_sync": {"ticks": 123, "mono_ns": 456, "real_ns": 1700000000000000000}}}), gm)
    yield "host_sys", parts(info(extra={"config": {"experimental_config": {
        "_host_sys": ["cpu", "mem", "disk", "network", "osrt", "bogus"],
        "_gc_detect_threshold": None}, "common_config": {"schedule": {}}}}), gm)
    yield "wrong_types", parts(json.dumps({"config": [], "rank_id": "3", "start_info": 5,
                                           "aiprof": {"texts_cut": -1, "start_sync": []}}),
                               json.dumps({"distributed_args": "x", "a": [1, {"b": None}]}))
    yield "huge_numbers", parts(json.dumps({"rank_id": 2 ** 64, "end_info": {"end_cnt": -2 ** 63},
                                            "aiprof": {"texts_cut": 1e300}}),
                                '{"x": 1e999, "y": -0.0, "z": 123456789012345678901234567890}')
    yield "not_objects", parts("[]", "42")
    yield "cut", parts(gi[:len(gi) // 2], gm[:len(gm) // 3])
    yield "empty_files", parts("\n", "\n", "\n")
    yield "unicode", parts(info(extra={"aiprof": {"hostname": "h\u00e9\u65e5\n\u0001"}}),
                           '{"\\u00e9\\u65E5": "\\ud83d\\ude00", "nul": "a\\u0000b", '
                           '"lone": "\\ud800", "\\u00E9": 1}')
    yield "metadata_deep", parts("", "{\"a\":" + "[" * 200 + "]" * 200 + "}")
    yield "metadata_many_keys", parts("", json.dumps({"k%d" % i: i for i in range(300)}))
    yield "invalid_utf8", parts(info().replace("Level1", "Level\xff"), '{"\xfe": "\xff"}')


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus_fuzz_result_info")
    os.makedirs(out, exist_ok=True)
    for name, text in cases():
        with open(os.path.join(out, name), "wb") as f:
            f.write(text.encode("utf-8", "surrogateescape") if "\xff" not in text
                    else text.encode("latin-1", "replace"))


if __name__ == "__main__":
    main()
