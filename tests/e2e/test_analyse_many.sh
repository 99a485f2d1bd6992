#!/usr/bin/env bash
# `aiprof analyse` at scale and against on-line analysis:
#  - 64 small result directories with -j 4: the one whose raw data is not
#    raw data is reported and skipped, the damaged ones are salvaged, all
#    others complete; exit status 1 and the final line count the failure;
#    each child's peak RSS stays small (memory bounded per directory, not
#    growing with the number of directories); on a terminal a progress bar
#    reaches 64/64.
#  - identical results: outputs made on-line (aip_analyse_dir() in
#    on_trace_ready, tests/e2e/prog_online.c) equal `aiprof analyse` of the
#    same raw data, byte for byte.
set -eu
BUILD=$1 SRC=$2
AIPROF="$BUILD/bin/aiprof"
PY=/usr/bin/python3
TMP=$(mktemp -d /tmp/aiprof_many_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; echo "e2e analyse many: 0 passed, 1 failed"; exit 1; }

$PY "$SRC/tests/e2e/make_many_dirs.py" "$TMP/runs" 64
$PY - "$AIPROF" "$TMP/runs" >"$TMP/result" <<'EOF' || fail "64 directories: $(cat "$TMP/result")"
import resource, subprocess, sys
aiprof, runs = sys.argv[1:]
p = subprocess.run([aiprof, "analyse", runs, "-j", "4", "-q"], capture_output=True, text=True)
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
lines = p.stdout.strip().splitlines()
assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
assert lines[-1] == "analysed 64 directories, 1 failed", lines
assert "worker003_20250101000000000_ascend_pt" in p.stderr, p.stderr
assert p.stderr.count("aiprof analyse:") == 1, p.stderr
assert peak_kib < 64 * 1024, f"a child used {peak_kib} KiB"
print(f"ok: peak child RSS {peak_kib} KiB")
EOF
ref="$TMP/runs/worker000_20250101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT"
for d in "$TMP"/runs/*_ascend_pt; do
  case $d in
    *worker003*) [ ! -d "$d/ASCEND_PROFILER_OUTPUT" ] || fail "failed dir got outputs"; continue ;;
    *worker001*|*worker002*)
      grep -q "warning" "$d/logs/analyse.log" || fail "$d: damage not logged"
      [ -f "$d/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db" ] || fail "$d: not salvaged"
      continue ;;
  esac
  diff -r "$ref" "$d/ASCEND_PROFILER_OUTPUT" >/dev/null || fail "$d differs from worker000"
done

# The progress bar, on a terminal (script(1) gives the command a pty).
if command -v script >/dev/null; then
  rm -rf "$TMP"/runs/*/ASCEND_PROFILER_OUTPUT
  script -qec "$AIPROF analyse $TMP/runs -j 2" /dev/null >"$TMP/tty" 2>&1 || true
  grep -q "64/64 analysed, 1 failed" "$TMP/tty" || fail "no progress bar: $(tail -c 300 "$TMP/tty")"
  grep -q "FAILED .*worker003" "$TMP/tty" || fail "failure not shown on the terminal"
fi

# On-line analysis (in the recording process) equals off-line analysis.
"$BUILD/bin/prog_online" "$TMP/online" >"$TMP/dirs" || fail "prog_online"
[ "$(wc -l <"$TMP/dirs")" = 2 ] || fail "expected two traces: $(cat "$TMP/dirs")"
while read -r dir; do
  [ -f "$dir/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db" ] || fail "$dir: no on-line db"
  mv "$dir/ASCEND_PROFILER_OUTPUT" "$TMP/online_out"
  "$AIPROF" analyse "$dir" -q >/dev/null || fail "offline analyse of $dir"
  diff -r "$TMP/online_out" "$dir/ASCEND_PROFILER_OUTPUT" || fail "$dir: on-line != off-line"
  rm -rf "$TMP/online_out"
done <"$TMP/dirs"
echo "e2e analyse many: 1 passed, 0 failed"
