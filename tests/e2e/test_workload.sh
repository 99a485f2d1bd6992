#!/usr/bin/env bash
# End to end: run a C program with known behaviour, analyse it with the
# aiprof command, check trace_view.json and the CSVs with a real JSON/CSV
# parser; analyse again and require identical bytes; then the bundled
# example, a SIGKILLed program and bad CLI input.
set -eu
BUILD=$1 SRC=$2
TMP=$(mktemp -d /tmp/aiprof_e2e_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
dir=$("$BUILD/bin/prog_workload" "$TMP/w")
"$BUILD/bin/aiprof" analyse "$dir" >/dev/null
/usr/bin/python3 "$SRC/tests/e2e/check_workload.py" "$dir"

# Same input, same output.
cp -r "$dir/ASCEND_PROFILER_OUTPUT" "$TMP/first"
"$BUILD/bin/aiprof" analyse "$dir" >/dev/null
diff -r "$TMP/first" "$dir/ASCEND_PROFILER_OUTPUT"

# Result modes.
[ "$(stat -c %a "$dir/ASCEND_PROFILER_OUTPUT")" -le 750 ]
[ "$(stat -c %a "$dir/ASCEND_PROFILER_OUTPUT/trace_view.json")" = 640 ]

# The bundled example analyses cleanly and is valid JSON.
"$BUILD/bin/train_loop" --steps 8 --dir "$TMP/ex" >/dev/null
"$BUILD/bin/aiprof" analyse "$TMP/ex" >/dev/null
for d in "$TMP"/ex/*_ascend_pt; do
  /usr/bin/python3 -c "import json,sys; t=json.load(open(sys.argv[1])); assert len(t) > 100" \
    "$d/ASCEND_PROFILER_OUTPUT/trace_view.json"
done

# A program killed mid-trace leaves analysable data.
( "$BUILD/bin/prog_killed" "$TMP/k" & echo $! >"$TMP/pid"; wait ) >"$TMP/killed_dir" \
  2>"$TMP/killed_stderr" &
for i in $(seq 50); do [ -s "$TMP/killed_dir" ] && break; sleep 0.1; done
sleep 0.5
if ! kill -9 "$(cat "$TMP/pid")"; then  # it must still be running: say why not
  wait || echo "prog_killed exited with $?" >&2
  cat "$TMP/killed_stderr" >&2
  exit 1
fi
wait || true
kdir=$(head -1 "$TMP/killed_dir")
"$BUILD/bin/aiprof" analyse "$kdir" >/dev/null 2>"$TMP/killed_err"
/usr/bin/python3 -c "
import json,sys
t=json.load(open(sys.argv[1]))
n=sum(1 for e in t if e.get('name')=='tick')
assert n > 10, n
" "$kdir/ASCEND_PROFILER_OUTPUT/trace_view.json"

# Drops survive SIGKILL: the counters are persisted with every flush.  Each
# "deep" tick nests 200 annotations, 72 past the recorder's stack depth, so
# dropped / (recorded + dropped) is 72/200 but for the tick cut by the kill.
( "$BUILD/bin/prog_killed" "$TMP/kd" deep & echo $! >"$TMP/pid"; wait ) >"$TMP/killed_dir" \
  2>"$TMP/killed_stderr" &
for i in $(seq 50); do [ -s "$TMP/killed_dir" ] && break; sleep 0.1; done
sleep 0.5
kill -9 "$(cat "$TMP/pid")" || { cat "$TMP/killed_stderr" >&2; exit 1; }
wait || true
kdir=$(head -1 "$TMP/killed_dir")
"$BUILD/bin/aiprof" analyse "$kdir" >/dev/null 2>&1
line=$(grep "dropped events:" "$kdir/logs/analyse.log")
/usr/bin/python3 -c "
import re,sys
ev, dr = map(int, re.search(r'events: (\d+),.*dropped events: (\d+)', sys.argv[1]).groups())
assert dr > 0 and abs(dr / (ev + dr) - 0.36) < 0.02, (ev, dr)
" "$line" || { echo "killed run: $line"; exit 1; }

# Bad input: clear errors, non-zero exit.
if "$BUILD/bin/aiprof" analyse "$TMP/does_not_exist" 2>"$TMP/err"; then exit 1; fi
grep -q "does_not_exist" "$TMP/err"
if "$BUILD/bin/aiprof" analyse --bogus 2>/dev/null; then exit 1; fi
"$BUILD/bin/aiprof" --version | grep -q "0.1"
"$BUILD/bin/aiprof" --help | grep -q analyse
echo "e2e workload: 1 passed, 0 failed"
