#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_cluster (tests/fuzz/corpus_fuzz_cluster/).

Usage: make_corpus_cluster.py [OUT_DIR]
Each input is the files of three rank directories cut at "\\n@@\\n"
(tests/fuzz/fuzz_files.h; an empty part: the file is absent), in the order
of fuzz_cluster.c's SLOTS: per directory profiler_info_{rank}.json,
profiler_metadata.json, ASCEND_PROFILER_OUTPUT/step_trace_time.csv,
communication.json, communication_matrix.json; directories rank 0, rank 1,
and an older run of rank 1.  The seeds are the end-to-end tests' synthetic
jobs (tests/e2e/make_cluster_parallel.py: parallel groups, link matrices,
distributed_args; tests/e2e/make_cluster_dirs.py: the four-rank job with a
slow rank and a second host's clock), cut down to those slots, and their
damaged and hostile variants: cut or undecodable files, wrong types,
missing columns, hostile step and group names, odd distributed_args.
libFuzzer's finds are merged into the same directory (-merge=1).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.join(HERE, "..", "e2e")
SEP = "\n@@\n"
FILES = ["profiler_info_%d.json", "profiler_metadata.json",
         "ASCEND_PROFILER_OUTPUT/step_trace_time.csv", "ASCEND_PROFILER_OUTPUT/communication.json",
         "ASCEND_PROFILER_OUTPUT/communication_matrix.json"]


def read_rank(top, rank):
    """The five files of rank `rank` under `top` ("" for an absent one)."""
    d = glob.glob(os.path.join(top, "**", "w%d_*_ascend_pt" % rank), recursive=True)[0]
    out = []
    for f in FILES:
        p = os.path.join(d, f % rank if "%d" in f else f)
        out.append(open(p, encoding="utf-8").read() if os.path.exists(p) else "")
    return out


def job(script, *args):
    with tempfile.TemporaryDirectory() as tmp:
        top = os.path.join(tmp, "job")
        subprocess.check_call([sys.executable, os.path.join(E2E, script), top] + list(args))
        return [read_rank(top, r) for r in range(4)]


def join(dirs):
    parts = []
    for files in dirs:
        parts += files
    while parts and not parts[-1]:
        parts.pop()
    # an absent file is an empty part; a file that is empty on purpose is "\n"
    return SEP.join(parts)


def edit(files, i, text):
    f = list(files)
    f[i] = text
    return f


def cases():
    par = job("make_cluster_parallel.py", "--no-db")
    four = job("make_cluster_dirs.py", "-1", "0", "0")
    slow = job("make_cluster_dirs.py", "1", "5000", "250")
    yield "parallel", join([par[0], par[1], par[3]])
    yield "parallel_two", join([par[0], par[1]])
    yield "four", join([four[0], four[1], four[2]])
    yield "slow_offset", join([slow[0], slow[1], slow[3]])
    r0, r1 = par[0], par[1]
    meta = json.loads(r0[1])
    for name, args in [
        ("dist_tp0", {"tensor_model_parallel_size": 0, "pipeline_model_parallel_size": 2,
                      "data_parallel_size": 2, "world_size": 4}),
        ("dist_cp2", {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                      "data_parallel_size": 4, "world_size": 4, "context_parallel_size": 2}),
        ("dist_ep", {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 1,
                     "data_parallel_size": 2, "world_size": 4, "expert_model_parallel_size": 2}),
        ("dist_strings", {"tensor_model_parallel_size": "2", "world_size": 4.0}),
        ("dist_negative", {"tensor_model_parallel_size": -1, "pipeline_model_parallel_size": -4,
                           "data_parallel_size": 1, "world_size": 4}),
        ("dist_not_object", [1, 2, 3]),
    ]:
        m = dict(meta, distributed_args=args)
        yield name, join([edit(r0, 1, json.dumps(m)), r1])
    m = dict(meta, parallel_group_info={"x": {"group_name": "dp\n\"<b>", "group_rank": 9,
                                              "global_ranks": [1, 1, -3, 2 ** 40, "a"]},
                                        "y": [], "z": {"global_ranks": {}}})
    yield "groups_hostile", join([edit(r0, 1, json.dumps(m)), r1])
    csv = r0[2].splitlines(True)
    yield "csv_cut", join([edit(r0, 2, "".join(csv)[:-5]), r1])
    yield "csv_no_step", join([edit(r0, 2, csv[0].replace("Step", "Stop") + "".join(csv[1:])), r1])
    yield "csv_header_only", join([edit(r0, 2, csv[0]), r1])
    yield "csv_bad_cells", join([edit(r0, 2, csv[0] + "h,0,x,,1e999,nan,-inf,1,2,3,4\n"), r1])
    yield "csv_short_row", join([edit(r0, 2, csv[0] + "h,0,1,2\n"), r1])
    yield "csv_wide", join([edit(r0, 2, "Step," + ",".join("c%d" % i for i in range(70)) + "\n"
                                 + "0," + ",".join("1" for _ in range(70)) + "\n"), r1])
    yield "csv_hostile_names", join([edit(r0, 2, 'Device_id,Step,"Free, ""x""",A\rB\n'
                                          'h,"s,1",1,2\nh,\x1b[31mred,3,4\n'), r1])
    yield "csv_columns_differ", join([r0, edit(r1, 2, "Step,Other\n0,1\n")])
    yield "csv_crlf", join([edit(r0, 2, r0[2].replace("\n", "\r\n")), r1])
    yield "comm_not_json", join([edit(r0, 3, r0[3][:len(r0[3]) // 2]), r1])
    yield "comm_array", join([edit(r0, 3, "[1, 2]"), edit(r1, 4, "{\"step0\": 5}")])
    yield "comm_wrong_types", join([edit(r0, 3, json.dumps({
        "step0": {"collective": {"op@g": {"Communication Time Info": {
            "Start Timestamp(us)": "1", "Elapse Time(ms)": None}}, "Total Op Info": 3},
            "p2p": []},
        "step1": [], "step\n2": {"collective": {"@": {}, "": {"Communication Time Info": {
            "Start Timestamp(us)": -1e300, "Elapse Time(ms)": 1e300}}}}})), r1])
    yield "matrix_hostile", join([edit(r0, 4, json.dumps({"step0": {"collective": {
        "allreduce-total@g": {"0-1": {"Transit Size(MB)": -1, "Transit Time(ms)": 0},
                              "a-b": {}, "-1-99999999999": {"Transit Time(ms)": 1},
                              "1-0": "x"}}, "p2p": {"send-total@\u00e9": {"0-0": {}}}}})), r1])
    yield "info_hostile", join([edit(r0, 0, json.dumps({"aiprof": {
        "hostname": "h\n\"0", "host_uid": 5}})), edit(r1, 0, "[]")])
    yield "no_info", join([edit(r0, 0, ""), r1])
    yield "empty_files", join([["\n"] * 5, ["\n"] * 5])
    yield "dup_newer_broken", join([r0, edit(r1, 2, "x"), par[1]])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus_fuzz_cluster")
    os.makedirs(out, exist_ok=True)
    for name, text in cases():
        with open(os.path.join(out, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)


if __name__ == "__main__":
    main()
