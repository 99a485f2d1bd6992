#!/usr/bin/env bash
# test_advise_cluster.sh — `aiprof advise` on a job (docs/ADVISE.md
# "Several directories"): the 3-rank MPI example with rank 1 slowed
# (examples/mpi/mpi_train --slow-rank 1 --slow-ms 150: its peers wait for
# it in every allreduce; 150 ms, because the ranks' own unoverlapped
# communication reaches ~50 ms a step when 3 ranks spin on a loaded
# 2-core machine, and the planted problem must be the largest).  advise on the job's folder, and on the three rank
# directories named one by one, must rank the slow_rank finding first,
# name rank 1 with its evidence (how far above the median, the collectives
# it arrived last at) and where to look (its longest steps), take the
# peers' wait out of their comm_not_overlapped findings, write nothing
# under cluster_analysis_output/, and name the same slow rank as `aiprof
# cluster`'s verdict (one rule, two readers).  Skipped (77) without MPI.
set -u
BUILD=$1
AIPROF="$BUILD/bin/aiprof"
if [ ! -x "$BUILD/bin/mpi_train" ] || ! command -v mpirun >/dev/null; then
  echo "SKIPPED advise on a job: no MPI (apt-get install openmpi-bin libopenmpi-dev)"
  exit 77
fi
T=$(mktemp -d /tmp/aiprof_advise_cluster_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
MPIRUN=(mpirun -np 3 --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader # this host's shared memory only
mkdir -p "$T/job/node0"
"${MPIRUN[@]}" "$BUILD/bin/mpi_train" --steps 4 --params 20000 --ring 300 --compute-ms 2 \
  --slow-rank 1 --slow-ms 150 --dir "$T/job/node0" >"$T/train.log" 2>&1 ||
  { cat "$T/train.log"; fail "mpi_train"; }

"$AIPROF" advise -q --json "$T/job" >"$T/job.json" || fail "advise --json on the job: exit $?"
[ -e "$T/job/cluster_analysis_output" ] && fail "advise wrote cluster_analysis_output/"
"$AIPROF" advise -q "$T/job" >"$T/job.txt" || fail "advise on the job: exit $?"
# the rank directories one by one: the same job
"$AIPROF" advise -q --json "$T"/job/node0/*_ascend_pt >"$T/dirs.json" || fail "advise on 3 dirs"
"$AIPROF" cluster -q "$T/job" >"$T/cluster.log" 2>&1 || { cat "$T/cluster.log"; fail "aiprof cluster"; }

python3 - "$T" <<'PY' || exit 1
import json, re, sys
t = sys.argv[1]
bad = 0
verdict = sorted(int(m) for m in re.findall(r"^slow rank: (\d+) ", open(f"{t}/cluster.log").read(), re.M))
for name in ("job", "dirs"):
    d = json.load(open(f"{t}/{name}.json"))
    f = d["findings"]
    if len(d["result_dirs"]) != 3 or d["judged_across"] != 3:
        print(f"FAIL {name}: {len(d['result_dirs'])} dirs, {d['judged_across']} judged, want 3"); bad += 1
    if not f or f[0]["rule"] != "slow_rank" or f[0]["scope"] != "job":
        print(f"FAIL {name}: first finding {f[0]['rule'] if f else None}, want slow_rank:",
              json.dumps(f[:3], indent=1)); bad += 1
        continue
    first = f[0]
    if not first["title"].startswith("Rank 1 is slow"):
        print(f"FAIL {name}: {first['title']!r} does not name rank 1"); bad += 1
    if first["severity"] not in ("medium", "high"):
        print(f"FAIL {name}: severity {first['severity']}"); bad += 1
    if "above the ranks' median" not in first["evidence"] or "arrived last at" not in first["evidence"]:
        print(f"FAIL {name}: evidence {first['evidence']!r}"); bad += 1
    if not first["where"]:
        print(f"FAIL {name}: no place to look at"); bad += 1
    named = sorted(int(re.match(r"Rank (\d+) is slow", x["title"]).group(1))
                   for x in f if x["rule"] == "slow_rank")
    if named != verdict:
        print(f"FAIL {name}: advise names {named}, aiprof cluster {verdict}"); bad += 1
    # the peers' wait for rank 1 is the slow rank's, not their communication's
    for x in f:
        if x["rule"] == "comm_not_overlapped" and x["global_rank"] != 1 and \
                "counted under slow_rank" not in x["evidence"]:
            print(f"FAIL {name}: rank {x['global_rank']}'s comm_not_overlapped keeps the wait"); bad += 1
    ranks = sorted(r["global_rank"] for r in d["result_dirs"])
    if ranks != [0, 1, 2]:
        print(f"FAIL {name}: ranks {ranks}"); bad += 1
    print(f"ok {name}: {first['title']} ({first['severity']}, {100 * first['share']:.1f}% of the step)")
text = open(f"{t}/job.txt").read()
if "1. [" not in text or "] slow_rank (job): Rank 1 is slow" not in text.split("\n2. [")[0]:
    print("FAIL text: slow_rank is not first:", text[:2000]); bad += 1
sys.exit(1 if bad else 0)
PY
# bad input: a folder without result directories
mkdir -p "$T/empty/sub"
"$AIPROF" advise -q "$T/empty" >/dev/null 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "no result directory" "$T/err" || fail "empty folder: exit $rc, $(cat "$T/err")"
echo "test_advise_cluster: ok"
