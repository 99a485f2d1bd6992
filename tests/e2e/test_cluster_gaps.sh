#!/usr/bin/env bash
# test_cluster_gaps.sh — `aiprof cluster` names the ranks a job should
# have and does not (issue 27, defect 7; docs/CLUSTER.md "Missing and
# truncated ranks"), on synthetic 16-rank jobs (make_cluster_dirs.py):
# - rank 4 of 16 absent: "missing rank: 4", exit 3 (was "15 ranks
#   analysed", exit 0), in cluster_report.html too;
# - rank 15 absent: still expected, from the world group's global_ranks;
# - rank 1 killed early (its last step row and last collective gone):
#   "truncated rank: 1" with the steps and collectives it has;
# - a folder holding ranks 8-15 that cannot be listed, and a rank
#   directory that cannot be listed: each named unreadable with the
#   reason (not "no profiler_info"), the ranks in them missing; DIR
#   itself unreadable: the error names it with the reason.  chmod 000
#   does not stop root: as root the pass runs as nobody (setpriv), else as
#   the user; skipped with a message when neither can work;
# - a complete job: "job complete", exit 0.
set -u
BUILD=$1
SRC=$2
AIPROF="$BUILD/bin/aiprof"
T=$(mktemp -d /tmp/aiprof_cluster_gaps_XXXXXX)
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail=0
job() { # NAME: a fresh 16-rank job in $T/NAME
  mkdir -p "$T/$1"
  python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/$1" -1 0 --ranks 16 --steps 3 >/dev/null
}

job full
"$AIPROF" cluster -q "$T/full" >"$T/full.log" 2>&1; rc=$?
{ [ $rc = 0 ] && grep -q "^job complete: 16 of 16 ranks expected" "$T/full.log"; } ||
  { cat "$T/full.log"; echo "FAIL: complete job (exit $rc)"; fail=1; }

job four
rm -rf "$T"/four/node0/w4_*
"$AIPROF" cluster -q --html "$T/four" >"$T/four.log" 2>&1; rc=$?
{ [ $rc = 3 ] && grep -q "^job incomplete: 16 ranks expected (.*); 1 missing, 0 truncated, 0 directories unreadable$" "$T/four.log" &&
  grep -q "^missing rank: 4 (no result directory found)$" "$T/four.log" &&
  grep -q "<li>missing rank 4: no result directory</li>" "$T/four/cluster_analysis_output/cluster_report.html"; } ||
  { cat "$T/four.log"; echo "FAIL: rank 4 of 16 absent (exit $rc)"; fail=1; }

job last
rm -rf "$T"/last/node1/w15_*
"$AIPROF" cluster -q "$T/last" >"$T/last.log" 2>&1; rc=$?
{ [ $rc = 3 ] && grep -q "^job incomplete: 16 ranks expected (rank 15 in a communication group)" "$T/last.log" &&
  grep -q "^missing rank: 15 " "$T/last.log"; } ||
  { cat "$T/last.log"; echo "FAIL: rank 15 of 16 absent (exit $rc)"; fail=1; }

# Rank 1 killed in its last step: that step's row and its last collective
# (the dp1 reduceScatter) never written.
job killed
python3 - "$T/killed" <<'PY'
import glob, json, sys
d = glob.glob(sys.argv[1] + "/node0/w1_*/ASCEND_PROFILER_OUTPUT")[0]
lines = open(d + "/step_trace_time.csv").read().splitlines(True)
open(d + "/step_trace_time.csv", "w").write("".join(lines[:-1]))
c = json.load(open(d + "/communication.json"))
ops = c[list(c)[-1]]["collective"]
del ops[[k for k in ops if not k.startswith("Total")][-1]]
json.dump(c, open(d + "/communication.json", "w"))
PY
"$AIPROF" cluster -q "$T/killed" >"$T/killed.log" 2>&1; rc=$?
{ [ $rc = 3 ] && grep -q "; 0 missing, 1 truncated, 0 directories unreadable$" "$T/killed.log" &&
  grep -q "^truncated rank: 1 — 2 of the 3 steps of rank 0 (ends at step 1); 2 of the 3 collectives of group dp1; its last collective starts [0-9.]* ms before the latest rank's$" "$T/killed.log" &&
  [ "$(grep -c '^truncated rank' "$T/killed.log")" = 1 ]; } ||
  { cat "$T/killed.log"; echo "FAIL: truncated rank 1 (exit $rc)"; fail=1; }

# Unreadable: node1 (ranks 8-15) and rank 2's directory.
job locked
chmod 000 "$T"/locked/node1 "$T"/locked/node0/w2_*
AS=()
if [ "$(id -u)" = 0 ]; then
  if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
    chmod 755 "$T"; chown -R 65534:65534 "$T/locked"
    AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  else
    AS=(skip)
  fi
fi
if [ "${AS[0]:-}" = skip ] || ! "${AS[@]}" test -x "$AIPROF" 2>/dev/null; then
  echo "SKIPPED unreadable directories: running as root without setpriv, or $AIPROF not executable as nobody"
else
  "${AS[@]}" "$AIPROF" cluster -q "$T/locked" >"$T/locked.log" 2>&1; rc=$?
  { [ $rc = 3 ] && grep -q "; 9 missing, 0 truncated, 2 directories unreadable$" "$T/locked.log" &&
    grep -q "^missing ranks: 2, 8-15 (no result directory found)$" "$T/locked.log" &&
    grep -q "^unreadable folder: $T/locked/node1: Permission denied (the ranks in it are missing)$" "$T/locked.log" &&
    grep -q "^unreadable rank directory: $T/locked/node0/w2_[0-9]*_ascend_pt: cannot read the directory: Permission denied$" "$T/locked.log" &&
    ! grep -q "no profiler_info" "$T/locked.log"; } ||
    { cat "$T/locked.log"; echo "FAIL: unreadable directories (exit $rc)"; fail=1; }
  # DIR itself unreadable: the error says so rather than only "no rank found"
  chmod 000 "$T/locked"
  "${AS[@]}" "$AIPROF" cluster -q "$T/locked" >"$T/top.log" 2>&1; rc=$?
  { [ $rc = 1 ] && grep -q "no rank result directory .*; not readable: $T/locked: Permission denied$" "$T/top.log"; } ||
    { cat "$T/top.log"; echo "FAIL: DIR unreadable (exit $rc)"; fail=1; }
fi
[ $fail = 0 ] && echo "PASS"
exit $fail
