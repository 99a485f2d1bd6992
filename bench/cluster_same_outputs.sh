#!/usr/bin/env bash
# cluster_same_outputs.sh OLD_AIPROF NEW_AIPROF [RANKS] — do two aiprof
# binaries give `aiprof cluster` the same bytes?  (issue 30: the cluster
# pass's memory work must keep every output byte-identical.)  One synthetic
# job (tests/e2e/make_cluster_dirs.py --ranks RANKS, default 1000), copied
# twice, each copy run by one binary twice over (the second run reads the
# split the first wrote back into the rank files); then `diff -r` of the two
# copies: cluster_analysis_output/ (CSV, JSON, cluster_analysis.db byte for
# byte) and every rank's files written back.  Peak RSS and CPU of each run
# are printed beside it.  Exit 0 when identical.
set -u
OLD=$1 NEW=$2 RANKS=${3:-1000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/aiprof_cluster_same_XXXXXX)
trap 'rm -rf "$T"' EXIT
python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/job" 37 3000 --ranks "$RANKS" >/dev/null || exit 2
cp -a "$T/job" "$T/old" && mv "$T/job" "$T/new" || exit 2
for side in old new; do
  bin=$OLD; [ $side = new ] && bin=$NEW
  for run in 1 2; do
    python3 -c 'import os, subprocess, sys
p = subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     env=dict(os.environ, AIPROF_QUIET="1"))
_, st, ru = os.wait4(p.pid, 0)
print("%s run %s: exit %d, CPU %.2f s, peak RSS %.1f MiB" % (sys.argv[1], sys.argv[2],
      os.waitstatus_to_exitcode(st), ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024))' \
      "$side" "$run" "$bin" cluster -q "$T/$side"
  done
done
if diff -r "$T/old" "$T/new" >"$T/diff.txt"; then
  echo "identical: every output and rank file ($RANKS ranks)"
else
  head -20 "$T/diff.txt"; echo "DIFFERENT"; exit 1
fi
