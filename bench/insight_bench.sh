#!/usr/bin/env bash
# `aiprof advise` and `aiprof compare` on a big profile (issue 29), beside
# msprof-analyze's advisor and compare on the same input: the profile
# bench_analyse generates (N events: nested ops on 4 threads,
# ProfilerStep#N), kept, then each command timed — wall seconds and CPU
# seconds (user + sys of the command and its children: on a shared machine
# the CPU time is the steadier figure) — and, where both tools ran on the
# same input, the ratio msprof-analyze / aiprof of each.  msprof-analyze
# comes from the project's venv (/work/main/.venv or $MSPROF_PY); it runs
# only up to MSPROF_MAX_EVENTS events (default 2000000: it is Python over
# the data, minutes per M events), else a line says it was not run.  Its
# compare reads the text outputs (in database mode it fails on this
# profile: "list index out of range"), so it gets a copy analysed with
# trace_view.json and without databases; making the copy is not timed.
#   bench/insight_bench.sh BUILD [N_EVENTS (default 10000000)]
set -u
BUILD=${1:-build}
N=${2:-10000000}
out=$("$BUILD/bin/bench_analyse" "$N" 4 --keep 2>&1) || { echo "$out"; exit 1; }
dir=$(echo "$out" | sed -n 's/^  kept //p' | tail -1)
[ -d "$dir" ] || { echo "bench_analyse kept no directory"; echo "$out"; exit 1; }
BENCH_LOG=$(mktemp)
trap 'rm -f "$BENCH_LOG"; rm -rf "$(dirname "$dir")"' EXIT
# timed LABEL command... : one line; sets WALL and CPU (seconds)
timed() {
  local label=$1 t0 t1 c0 c1
  shift
  c0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  t0=$(date +%s.%N)
  "$@" >"$BENCH_LOG" 2>&1 || { echo "  $label failed: $(tail -2 "$BENCH_LOG")"; return 1; }
  t1=$(date +%s.%N)
  c1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  CPU=$(awk -v a="$c0" -v b="$c1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (b - a) / hz }')
  awk -v l="$label" -v w="$WALL" -v c="$CPU" -v n="$N" \
    'BEGIN { printf "  %-38s %8.2f s wall %8.2f s CPU  %6.2f M events/s\n", l, w, c, n / w / 1e6 }'
}
ratio() { # LABEL their_wall their_cpu our_wall our_cpu
  awk -v l="$1" -v tw="$2" -v tc="$3" -v ow="$4" -v oc="$5" \
    'BEGIN { printf "  ratio msprof-analyze / aiprof, %-9s %7.1fx wall %7.1fx CPU (same input)\n",
             l, tw / (ow > 0.001 ? ow : 0.001), tc / (oc > 0.001 ? oc : 0.001) }'
}
msprof() {
  timeout 3600 "$PY" -c \
    'import sys; from msprof_analyze.cli.entrance import msprof_analyze_cli as m; sys.argv[0] = "msprof-analyze"; sys.exit(m())' \
    "$@"
}
status=0
echo "profile: $N events, $dir"
timed "aiprof advise" "$BUILD/bin/aiprof" advise -q "$dir" || status=1
A_WALL=${WALL:-0} A_CPU=${CPU:-0}
timed "aiprof compare (the dir with itself)" "$BUILD/bin/aiprof" compare -q "$dir" "$dir" ||
  status=1
C_WALL=${WALL:-0} C_CPU=${CPU:-0}
PY=${MSPROF_PY:-/work/main/.venv/bin/python}
MAX=${MSPROF_MAX_EVENTS:-2000000}
if [ "$N" -gt "$MAX" ]; then
  echo "  msprof-analyze: not run above $MAX events (MSPROF_MAX_EVENTS=$N to run it here);" \
       "make bench's 1 M-event run sets the two tools side by side"
elif [ -x "$PY" ] && "$PY" -c "import msprof_analyze" 2>/dev/null; then
  work=$(dirname "$dir")
  if timed "msprof-analyze advisor all" msprof advisor all -d "$dir" -o "$work/advisor_out"; then
    ratio advise "$WALL" "$CPU" "$A_WALL" "$A_CPU"
  else
    echo "  (msprof-analyze advisor did not finish or failed on this input)"
  fi
  text="$work/text_ascend_pt"
  mkdir -p "$text" && cp -a "$dir/FRAMEWORK" "$dir"/profiler_info*.json "$text/" 2>/dev/null
  if "$BUILD/bin/aiprof" analyse -q "$text" >/dev/null 2>&1 &&
     rm -f "$text"/ASCEND_PROFILER_OUTPUT/*.db &&
     timed "msprof-analyze compare (text mode)" msprof compare -d "$text" -bp "$text" \
       -o "$work/compare_out"; then
    ratio compare "$WALL" "$CPU" "$C_WALL" "$C_CPU"
  else
    echo "  (msprof-analyze compare did not finish or failed on this input)"
  fi
else
  echo "  msprof-analyze: not installed at $PY (set MSPROF_PY): no comparison"
fi
exit $status
