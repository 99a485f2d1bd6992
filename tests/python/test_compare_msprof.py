"""`aiprof compare` against the released msprof-analyze compare on the same
two result directories (issue 29): both count the calls and sum the total
time of each op (msprof-analyze's ApiCompare sheet: "Calls", "Total
Duration(ms)") and of each communication op type (its CommunicationCompare
sheet: "Calls", "Total Duration(us)", over an MPI rank's hcom ops), and
the two must agree.  Skips without the project's venv holding
msprof-analyze (/work/main/.venv, or $MSPROF_PY), and the communication
case without MPI.

msprof-analyze reads ascend_pytorch_profiler.db when a directory has one;
these copies hold only the text outputs (trace_view.json), the input its
JSON path reads."""
import csv
import glob
import json
import os
import shutil
import subprocess

import pytest

import aiprof

BUILD = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(aiprof.__file__))))
BIN = os.path.join(BUILD, "bin")
MSPROF_PY = os.environ.get("MSPROF_PY", "/work/main/.venv/bin/python")

COMM_SHEET = r"""
import glob, json, sys
import pandas as pd
x = glob.glob(sys.argv[1] + "/*.xlsx")[0]
df = pd.read_excel(x, sheet_name="CommunicationCompare", header=None)
rows = {}
for r in df.iloc[3:].itertuples(index=False):
    if isinstance(r[1], str):
        rows[r[1]] = {"base_calls": r[3], "base_total": r[4], "new_calls": r[10], "new_total": r[11]}
print(json.dumps(rows))
"""

SHEET = r"""
import glob, json, sys
import pandas as pd
x = glob.glob(sys.argv[1] + "/*.xlsx")[0]
df = pd.read_excel(x, sheet_name="ApiCompare", header=None)
rows = {}
for r in df.iloc[3:].itertuples(index=False):
    if isinstance(r[1], str):
        rows[r[1]] = {"base_total": r[2], "base_calls": r[5], "new_total": r[6], "new_calls": r[9]}
print(json.dumps(rows))
"""


def _have_msprof():
    if not os.access(MSPROF_PY, os.X_OK):
        return f"no python at {MSPROF_PY}"
    r = subprocess.run([MSPROF_PY, "-c", "import msprof_analyze, pandas, openpyxl"],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else "msprof-analyze (or pandas/openpyxl) not importable: " \
        + r.stderr.strip().splitlines()[-1]


def _run(mode, tmp):
    out = subprocess.run([os.path.join(BIN, "prog_advise"), mode, os.path.join(tmp, mode)],
                         check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run([os.path.join(BIN, "aiprof"), "analyse", "-q", out], check=True,
                   capture_output=True)
    copy = os.path.join(tmp, "json_" + mode)
    shutil.copytree(out, copy)
    for db in glob.glob(os.path.join(copy, "ASCEND_PROFILER_OUTPUT", "*.db")):
        os.remove(db)
    return out, copy


def test_op_calls_and_totals_agree_with_msprof_analyze(tmp_path):
    why = _have_msprof()
    if why:
        pytest.skip(why)
    if not os.access(os.path.join(BIN, "prog_advise"), os.X_OK):
        pytest.skip("prog_advise not built")
    tmp = str(tmp_path)
    base, base_json = _run("base", tmp)
    new, new_json = _run("regress", tmp)
    res = os.path.join(tmp, "msprof")
    subprocess.run([MSPROF_PY, "-c",
                    "import sys; from msprof_analyze.cli.entrance import msprof_analyze_cli as m; "
                    "sys.argv[0] = 'msprof-analyze'; sys.exit(m())",
                    "compare", "-d", new_json, "-bp", base_json, "-o", res],
                   check=True, capture_output=True, timeout=600)
    theirs = json.loads(subprocess.run([MSPROF_PY, "-c", SHEET, res], check=True,
                                       capture_output=True, text=True).stdout)
    csv_path = os.path.join(tmp, "cmp.csv")
    subprocess.run([os.path.join(BIN, "aiprof"), "compare", "-q", "--no-text", "--threshold", "0",
                    "--csv", csv_path, base, new], check=True, capture_output=True)
    ours = {}
    with open(csv_path, newline="") as f:
        for r in csv.DictReader(f):
            if r["Section"] == "op":
                ours.setdefault(r["Operator Name"], []).append(r)
    assert set(theirs) == set(ours), (sorted(theirs), sorted(ours))
    steps = 8  # prog_advise's active steps, in both runs
    for name, t in theirs.items():
        rows = ours[name]  # one row per input shapes: msprof-analyze sums them by name
        base_calls = sum(int(r["Base Operator Number"]) for r in rows)
        new_calls = sum(int(r["Comparison Operator Number"]) for r in rows)
        base_ms = sum(float(r["Base Device Duration(ms)"]) for r in rows) * steps
        new_ms = sum(float(r["Comparison Device Duration(ms)"]) for r in rows) * steps
        assert (base_calls, new_calls) == (int(t["base_calls"] or 0), int(t["new_calls"] or 0)), name
        # msprof-analyze rounds to 0.01 ms and reads trace_view.json's us to 3 decimals
        assert abs(base_ms - float(t["base_total"] or 0)) <= 0.011, (name, base_ms, t)
        assert abs(new_ms - float(t["new_total"] or 0)) <= 0.011, (name, new_ms, t)


def _comm_type(name):
    """docs/COMMUNICATION.md's op type of an MPI call, lower case as
    msprof-analyze's sheet shows it (MPI_ and a non-blocking call's I off)."""
    t = name.lower()
    t = t[4:] if t.startswith("mpi_") else t
    if t.startswith("i") and t[1:] in ("allreduce", "bcast", "allgather", "reduce", "barrier",
                                       "send", "recv", "ssend", "bsend", "rsend"):
        t = t[1:]
    return {"bcast": "broadcast", "recv": "receive", "ssend": "send", "bsend": "send",
            "rsend": "send", "allgatherv": "allgather"}.get(t, t)


def _mpi_rank0(tmp, name, extra):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    env = dict(os.environ, OMPI_MCA_btl="self,vader")
    cmd = ["mpirun", "-np", "3", "--oversubscribe"]
    if os.getuid() == 0:
        cmd.append("--allow-run-as-root")
    subprocess.run(cmd + [os.path.join(BIN, "mpi_train"), "--steps", "4", "--params", "20000",
                          "--ring", "300", "--compute-ms", "2", "--dir", d] + extra,
                   check=True, capture_output=True, env=env, timeout=300)
    ranks = [p for p in glob.glob(os.path.join(d, "*_ascend_pt"))
             if glob.glob(os.path.join(p, "profiler_info_0.json"))]
    assert len(ranks) == 1, ranks
    out = ranks[0]
    subprocess.run([os.path.join(BIN, "aiprof"), "analyse", "-q", out], check=True,
                   capture_output=True)
    copy = os.path.join(tmp, "json_" + name)
    shutil.copytree(out, copy)
    for db in glob.glob(os.path.join(copy, "ASCEND_PROFILER_OUTPUT", "*.db")):
        os.remove(db)
    return out, copy


def test_comm_calls_and_totals_agree_with_msprof_analyze(tmp_path):
    why = _have_msprof()
    if why:
        pytest.skip(why)
    if not os.access(os.path.join(BIN, "mpi_train"), os.X_OK) or not shutil.which("mpirun"):
        pytest.skip("no MPI: mpi_train not built or mpirun missing")
    tmp = str(tmp_path)
    base, base_json = _mpi_rank0(tmp, "base", [])
    new, new_json = _mpi_rank0(tmp, "new", ["--slow-rank", "1", "--slow-ms", "20"])
    res = os.path.join(tmp, "msprof")
    subprocess.run([MSPROF_PY, "-c",
                    "import sys; from msprof_analyze.cli.entrance import msprof_analyze_cli as m; "
                    "sys.argv[0] = 'msprof-analyze'; sys.exit(m())",
                    "compare", "-d", new_json, "-bp", base_json, "-o", res],
                   check=True, capture_output=True, timeout=600)
    theirs = json.loads(subprocess.run([MSPROF_PY, "-c", COMM_SHEET, res], check=True,
                                       capture_output=True, text=True).stdout)
    csv_path = os.path.join(tmp, "cmp.csv")
    subprocess.run([os.path.join(BIN, "aiprof"), "compare", "-q", "--no-text", "--threshold", "0",
                    "--csv", csv_path, base, new], check=True, capture_output=True)
    steps = []
    for d in (base, new):
        a = subprocess.run([os.path.join(BIN, "aiprof"), "advise", "-q", "--json", d],
                           check=True, capture_output=True, text=True).stdout
        steps.append(json.loads(a)["steps"])
    ours = {}
    with open(csv_path, newline="") as f:
        for r in csv.DictReader(f):
            if r["Section"] != "comm":
                continue
            o = ours.setdefault(_comm_type(r["Operator Name"]), [0, 0.0, 0, 0.0])
            o[0] += int(r["Base Operator Number"])
            o[1] += float(r["Base Device Duration(ms)"]) * steps[0]
            o[2] += int(r["Comparison Operator Number"])
            o[3] += float(r["Comparison Device Duration(ms)"]) * steps[1]
    assert theirs and set(theirs) == set(ours), (sorted(theirs), sorted(ours))
    for t, v in theirs.items():
        o = ours[t]
        assert (o[0], o[2]) == (int(v["base_calls"] or 0), int(v["new_calls"] or 0)), (t, o, v)
        # trace_view.json's us to 3 decimals, our CSV's ms per step to 6
        assert abs(o[1] * 1000 - float(v["base_total"] or 0)) <= 0.002 * max(o[0], 1) + 0.01, (t, o, v)
        assert abs(o[3] * 1000 - float(v["new_total"] or 0)) <= 0.002 * max(o[2], 1) + 0.01, (t, o, v)
