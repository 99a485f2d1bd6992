#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_profiler_config (tests/fuzz/corpus_fuzz_profiler_config/).

Usage: make_corpus_profiler_config.py [OUT_DIR]
profiler_config.json files as users write them: the seed's default (the
text aiprof creates), the configs of the tests and docs, one input per
rejection message of src/dynamic/dyn_config.c, and the malformed and
hostile JSON the parser must survive.  libFuzzer's own finds are merged
into the same directory (-merge=1) and kept under their hash names.
"""
import json
import os
import sys

DEFAULT = {
    "activities": ["CPU", "NPU"], "prof_dir": "./", "analyse": False,
    "record_shapes": False, "profile_memory": False, "with_stack": False,
    "with_flops": False, "with_modules": False, "active": 1, "warmup": 0,
    "start_step": 0, "is_rank": False, "rank_list": [], "async_mode": False,
    "experimental_config": {
        "profiler_level": "Level0", "aic_metrics": "AiCoreNone", "l2_cache": False,
        "op_attr": False, "gc_detect_threshold": None, "data_simplification": True,
        "record_op_args": False, "export_type": ["text"], "mstx": False,
        "mstx_domain_include": [], "mstx_domain_exclude": [], "host_sys": [],
        "sys_io": False, "sys_interconnection": False,
    },
}

LEVELS = ["Level_none", "Level0", "Level1", "Level2"]
METRICS = ["AiCoreNone", "PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0",
           "ResourceConflictRatio", "MemoryUB", "L2Cache", "MemoryAccess"]


def with_changes(root=None, exp=None):
    c = json.loads(json.dumps(DEFAULT))
    c.update(root or {})
    c["experimental_config"].update(exp or {})
    return c


def cases():
    yield "default", json.dumps(DEFAULT, indent=4) + "\n"
    yield "default_compact", json.dumps(DEFAULT, separators=(",", ":"))
    yield "start_next_step", json.dumps(with_changes({"start_step": -1, "active": 2}))
    yield "everything", json.dumps(with_changes(
        {"start_step": 5, "active": 3, "warmup": 1, "record_shapes": True,
         "profile_memory": True, "with_stack": True, "with_flops": True, "with_modules": True,
         "analyse": True, "async_mode": True, "is_rank": True, "rank_list": [0, 2, 7],
         "prof_dir": "./out/run_1", "metadata": {"distributed_args": {"tp": 2, "pp": 1}}},
        {"profiler_level": "Level2", "aic_metrics": "PipeUtilization",
         "export_type": ["text", "db"], "gc_detect_threshold": 1.5, "mstx": True,
         "msprof_tx": False, "mstx_domain_include": ["default", "comm"], "l2_cache": True,
         "op_attr": True, "record_op_args": True, "host_sys": ["cpu", "mem", "disk",
                                                              "network", "osrt"],
         "sys_io": True, "sys_interconnection": True, "data_simplification": False}))
    for lv in LEVELS:
        yield "level_" + lv, json.dumps({"start_step": 2, "experimental_config":
                                         {"profiler_level": lv}})
    for m in METRICS:
        yield "aic_" + m, json.dumps({"experimental_config": {"aic_metrics": m}})
    yield "export_one_string", json.dumps({"experimental_config": {"export_type": "db"}})
    yield "mstx_exclude", json.dumps({"experimental_config": {"mstx_domain_exclude": ["x"]}})
    yield "unknown_keys", json.dumps({"start_step": 2, "colour": 1,
                                      "experimental_config": {"shiny": 1}})
    # the flight recorder's key (docs/FLIGHT_RECORDER.md)
    yield "flight_seconds", json.dumps(with_changes({"start_step": -1, "flight_recorder": 60}))
    yield "flight_options", json.dumps(with_changes(
        {"start_step": 3, "flight_recorder": {"seconds": 30.5, "ring_bytes": 8388608,
                                               "slow_step": 3, "hang_seconds": 300,
                                               "signal": 12, "ring_dir": "./ring",
                                               "shiny": 1}}))
    yield "flight_null", json.dumps({"flight_recorder": None})
    # one per rejection message
    bad = {
        "bad_malformed": '{"start_step": 1,',
        "bad_not_object": "[1, 2]",
        "bad_duplicate": '{"active": 1, "active": 2}',
        "bad_active_neg": '{"active": -2}',
        "bad_active_str": '{"active": "3"}',
        "bad_warmup": '{"warmup": -1}',
        "bad_start_step": '{"start_step": -5}',
        "bad_bool": '{"record_shapes": 1}',
        "bad_activities_type": '{"activities": "CPU"}',
        "bad_activities_entry": '{"activities": ["GPU"]}',
        "bad_prof_dir_empty": '{"prof_dir": ""}',
        "bad_prof_dir_chars": '{"prof_dir": "/tmp/a b"}',
        "bad_rank_list_type": '{"rank_list": 3}',
        "bad_rank_list_entry": '{"rank_list": ["x"]}',
        "bad_rank_list_neg": '{"rank_list": [-1]}',
        "bad_level": '{"experimental_config": {"profiler_level": "Level9"}}',
        "bad_aic": '{"experimental_config": {"aic_metrics": 4}}',
        "bad_export_empty": '{"experimental_config": {"export_type": []}}',
        "bad_export_entry": '{"experimental_config": {"export_type": ["csv"]}}',
        "bad_gc": '{"experimental_config": {"gc_detect_threshold": -1}}',
        "bad_domains_type": '{"experimental_config": {"mstx_domain_include": "a"}}',
        "bad_domains_entry": '{"experimental_config": {"mstx_domain_exclude": [""]}}',
        "bad_host_sys_type": '{"experimental_config": {"host_sys": "cpu"}}',
        "bad_host_sys_entry": '{"experimental_config": {"host_sys": ["gpu"]}}',
        "bad_exp_type": '{"experimental_config": 3}',
        "bad_metadata": '{"metadata": [1]}',
        "bad_mstx_alias": '{"experimental_config": {"msprof_tx": "yes"}}',
        "bad_flight_type": '{"flight_recorder": true}',
        "bad_flight_zero": '{"flight_recorder": 0}',
        "bad_flight_no_seconds": '{"flight_recorder": {"ring_bytes": 0}}',
        "bad_flight_seconds": '{"flight_recorder": {"seconds": "60"}}',
        "bad_flight_ring": '{"flight_recorder": {"seconds": 1, "ring_bytes": 100}}',
        "bad_flight_slow": '{"flight_recorder": {"seconds": 1, "slow_step": 0.5}}',
        "bad_flight_hang": '{"flight_recorder": {"seconds": 1, "hang_seconds": -1}}',
        "bad_flight_signal": '{"flight_recorder": {"seconds": 1, "signal": 9}}',
        "bad_flight_ring_dir": '{"flight_recorder": {"seconds": 1, "ring_dir": "a b"}}',
        "bad_flight_huge": '{"flight_recorder": {"seconds": 1e400, "ring_bytes": '
                           '18446744073709551616}}',
    }
    for name, text in bad.items():
        yield name, text
    # hostile JSON
    yield "deep_nesting", '{"metadata": ' + '{"a": ' * 300 + "1" + "}" * 301
    yield "big_numbers", '{"active": 9223372036854775807, "warmup": 1e400, "start_step": -0}'
    yield "unicode_keys", '{"\\u0000": 1, "prof_dir": "\\u00e9", "experimental_config": {}}'
    yield "empty", ""
    yield "nul_inside", '{"start_step": 2}\0{"x": 1}'


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus_fuzz_profiler_config")
    os.makedirs(out, exist_ok=True)
    for name, text in cases():
        with open(os.path.join(out, name + ".json"), "wb") as f:
            f.write(text.encode())


if __name__ == "__main__":
    main()
