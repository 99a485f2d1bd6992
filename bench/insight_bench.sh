#!/usr/bin/env bash
# `aiprof advise` and `aiprof compare` on a big profile (issue 29): the
# profile bench_analyse generates (N events: nested ops on 4 threads,
# ProfilerStep#N), kept, then each command timed (wall and CPU seconds,
# /usr/bin/time when present) and its events/s printed.  msprof-analyze's
# advisor on the same directory beside it when the project's venv has it
# (/work/main/.venv or $MSPROF_PY), else a line saying why not.
#   bench/insight_bench.sh BUILD [N_EVENTS (default 10000000)]
set -u
BUILD=${1:-build}
N=${2:-10000000}
out=$("$BUILD/bin/bench_analyse" "$N" 4 --keep 2>&1) || { echo "$out"; exit 1; }
dir=$(echo "$out" | sed -n 's/^  kept //p' | tail -1)
[ -d "$dir" ] || { echo "bench_analyse kept no directory"; echo "$out"; exit 1; }
timed() { # label command...
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$BENCH_LOG" 2>&1 || { echo "  $LABEL failed: $(tail -2 "$BENCH_LOG")"; return 1; }
  t1=$(date +%s.%N)
  awk -v l="$LABEL" -v a="$t0" -v b="$t1" -v n="$N" \
    'BEGIN { s = b - a; printf "  %-34s %8.2f s  %6.2f M events/s\n", l, s, n / s / 1e6 }'
}
BENCH_LOG=$(mktemp)
trap 'rm -f "$BENCH_LOG"' EXIT
status=0
echo "profile: $N events, $dir"
LABEL="aiprof advise" timed "$BUILD/bin/aiprof" advise -q "$dir" || status=1
LABEL="aiprof compare (the dir with itself)" timed "$BUILD/bin/aiprof" compare -q "$dir" "$dir" ||
  status=1
PY=${MSPROF_PY:-/work/main/.venv/bin/python}
MAX=${MSPROF_MAX_EVENTS:-2000000} # its advisor is Python over the JSON: minutes per M events
if [ "$N" -gt "$MAX" ]; then
  echo "  msprof-analyze: skipped above $MAX events (MSPROF_MAX_EVENTS); run with fewer to compare"
elif [ -x "$PY" ] && "$PY" -c "import msprof_analyze" 2>/dev/null; then
  LABEL="msprof-analyze advisor all" timed timeout 1800 "$PY" -c \
    'import sys; from msprof_analyze.cli.entrance import msprof_analyze_cli as m; sys.argv[0] = "msprof-analyze"; sys.exit(m())' \
    advisor all -d "$dir" -o "$(dirname "$dir")/advisor_out" ||
    echo "  (msprof-analyze advisor did not finish or failed on this input)"
else
  echo "  msprof-analyze: not installed at $PY (set MSPROF_PY): no comparison"
fi
rm -rf "$(dirname "$dir")"
exit $status
