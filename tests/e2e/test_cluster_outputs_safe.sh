#!/usr/bin/env bash
# test_cluster_outputs_safe.sh — every file `aiprof cluster` writes goes
# the way single-rank outputs go (issue 27, defect 2): a temporary name,
# 0640 (the folder 0750) whatever the umask, never through a symbolic link,
# renamed into place only when complete.
# - a link planted where each output goes (to a file outside) is refused
#   with a message naming it, exit 1, and the file it points to is
#   unchanged (main wrote through the CSV and group links);
# - umask 000: the outputs are 0640, cluster_analysis_output 0750 (main:
#   0666 / 0644);
# - `ulimit -f 100` (100 KiB; SIGXFSZ ignored, as a batch system may):
#   cluster_communication.json (~240 KiB) cannot be written; exit 1 with
#   the reason, and no half cluster_communication*.json nor temporary file
#   is left behind (main left the first 100 KiB under the real name).
set -u
BUILD=$1
SRC=$2
AIPROF="$BUILD/bin/aiprof"
T=$(mktemp -d /tmp/aiprof_cluster_safe_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
mkdir -p "$T/job"
python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/job" -1 0 --ranks 16 --steps 3 >/dev/null
OUT="$T/job/cluster_analysis_output"

for name in cluster_step_trace_time.csv communication_group.json cluster_communication.json \
            cluster_communication_matrix.json cluster_analysis.db cluster_report.html; do
  rm -rf "$OUT"; mkdir -m 750 "$OUT"
  echo "precious $name" >"$T/victim"
  ln -s "$T/victim" "$OUT/$name"
  "$AIPROF" cluster -q --html "$T/job" >"$T/link.log" 2>&1; rc=$?
  { [ $rc = 1 ] && grep -q "$OUT/$name.*symbolic link\|symbolic link.*$OUT/$name" "$T/link.log" &&
    [ "$(cat "$T/victim")" = "precious $name" ] && [ -L "$OUT/$name" ]; } ||
    { cat "$T/link.log"; echo "FAIL: a link at $name (exit $rc): the file behind it now: $(head -c 80 "$T/victim")"; fail=1; }
  if ls "$OUT" | grep -q "\.tmp"; then ls -l "$OUT"; echo "FAIL: a temporary file left ($name)"; fail=1; fi
done

rm -rf "$OUT"
(umask 000; "$AIPROF" cluster -q --html "$T/job" >"$T/modes.log" 2>&1) ||
  { cat "$T/modes.log"; echo "FAIL: umask 000 run"; fail=1; }
[ "$(stat -c %a "$OUT")" = 750 ] || { echo "FAIL: cluster_analysis_output is $(stat -c %a "$OUT")"; fail=1; }
for f in "$OUT"/*; do
  [ "$(stat -c %a "$f")" = 640 ] || { echo "FAIL: $f is $(stat -c %a "$f"), not 640"; fail=1; }
done
[ "$(ls "$OUT" | wc -l)" = 6 ] || { ls -l "$OUT"; echo "FAIL: not the 6 outputs"; fail=1; }

rm -rf "$OUT"
(trap '' XFSZ; ulimit -f 100; exec "$AIPROF" cluster -q "$T/job") >"$T/fsize.log" 2>&1; rc=$?
{ [ $rc = 1 ] && grep -q "cluster_communication.json.*File too large" "$T/fsize.log"; } ||
  { cat "$T/fsize.log"; echo "FAIL: ulimit -f: exit $rc"; fail=1; }
if ls "$OUT" | grep -q "cluster_communication\|\.tmp"; then
  ls -l "$OUT"; echo "FAIL: a half-written output or temporary file left after EFBIG"; fail=1
fi
[ -s "$OUT/cluster_step_trace_time.csv" ] || { ls -l "$OUT"; echo "FAIL: the small outputs before it"; fail=1; }
[ $fail = 0 ] && echo "PASS"
exit $fail
