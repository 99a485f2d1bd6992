#!/usr/bin/env bash
# `aiprof run --flight-recorder` (docs/FLIGHT_RECORDER.md): a SIGUSR2 dump
# is a result directory that the run analyses, and nothing else is written
# (the ring is gone at exit); a program killed with SIGKILL while armed
# leaves its ring, which the run salvages with every mark the flushes
# wrote; a flood through a 4 MiB ring is dumped with what the ring
# overwrote counted in the summary; bad options are usage errors.
set -eu
BUILD=$1 SRC=$2
TMP=$(mktemp -d /tmp/aiprof_run_flight_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
AIPROF="$BUILD/bin/aiprof"
PROG="$BUILD/bin/prog_flight"
PY=${PYTHON:-python3}

count_name() { # DIR NAME: events named NAME in DIR's trace_view.json
  "$PY" - "$1" "$2" <<'PYEOF'
import json, sys, glob
f = glob.glob(sys.argv[1] + "/ASCEND_PROFILER_OUTPUT/trace_view.json")[0]
print(sum(1 for e in json.load(open(f)) if e.get("name") == sys.argv[2] and e.get("ph") != "M"))
PYEOF
}

# A signal dumps; the dump is analysed, host_sys samples in it too; no
# other directory, no ring left.
mkdir "$TMP/sig"
"$AIPROF" run --flight-recorder 30 --flight-ring 8M --host-sys cpu,mem --dir "$TMP/sig" \
  -- "$PROG" signal \
  >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; exit 1; }
dirs=$(find "$TMP/sig" -maxdepth 1 -name '*_ascend_pt' | wc -l)
[ "$dirs" = 1 ] || { echo "signal: $dirs result directories, want 1"; cat "$TMP/err"; exit 1; }
dump=$(find "$TMP/sig" -maxdepth 1 -name '*_ascend_pt')
[ "$(count_name "$dump" before_signal)" = 1000 ] || { echo "signal: marks missing"; exit 1; }
[ "$(count_name "$dump" after_signal)" = 0 ] || { echo "signal: a mark after the dump"; exit 1; }
grep -q '"signal"' "$dump"/profiler_info*.json
"$PY" - "$dump" <<'PYEOF'
import json, sys, glob
f = glob.glob(sys.argv[1] + "/ASCEND_PROFILER_OUTPUT/trace_view.json")[0]
counters = [e for e in json.load(open(f)) if e.get("ph") == "C"]
assert counters, "no host_sys counters in the dump"
PYEOF
[ ! -e "$TMP/sig/.aiprof_flight" ] || [ -z "$(ls -A "$TMP/sig/.aiprof_flight")" ] \
  || { echo "signal: a ring was left behind"; exit 1; }

# SIGKILL while armed: the run salvages the ring.
mkdir "$TMP/kill"
if "$AIPROF" run --flight-recorder 30 --flight-ring 8M --dir "$TMP/kill" -- "$PROG" kill \
  >"$TMP/out" 2>"$TMP/err"; then
  echo "kill: the program was not killed"; exit 1
fi
grep -q "salvaged into" "$TMP/err" || { cat "$TMP/err"; exit 1; }
dump=$(find "$TMP/kill" -maxdepth 1 -name '*_salvaged_ascend_pt')
[ "$(count_name "$dump" before_kill)" = 3000 ] || { echo "kill: marks lost"; exit 1; }

# A flood through a 4 MiB ring: what it overwrote is counted, and said.
mkdir "$TMP/flood"
"$AIPROF" run --flight-recorder 600 --flight-ring 4M --dir "$TMP/flood" -- "$PROG" flood 400000 \
  >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; exit 1; }
dump=$(head -1 "$TMP/out")
"$AIPROF" summary "$dump" >"$TMP/summary"
grep -q "dropped by the flight recorder ring: [1-9][0-9]* events" "$TMP/summary" \
  || { cat "$TMP/summary"; exit 1; }
"$PY" - "$dump" <<'PYEOF'
import json, sys, glob
info = json.load(open(glob.glob(sys.argv[1] + "/profiler_info*.json")[0]))["aiprof"]
f = info["flight_recorder"]
total = f["recorded_events"] + f["overwritten_events"] + f["outside_window_events"] + info["dropped_events"]
assert total == 400000, (f, info["dropped_events"])
assert f["overwritten_events"] > 0, f
PYEOF

# Bad options.
for bad in "--flight-recorder 0" "--flight-recorder x" "--flight-ring 1M --flight-recorder 5" \
           "--flight-slow-step 0.5 --flight-recorder 5" "--flight-hang 3" \
           "--flight-recorder 5 --delay 1"; do
  # shellcheck disable=SC2086
  if "$AIPROF" run $bad -- true 2>"$TMP/err"; then echo "accepted: $bad"; exit 1; fi
  grep -q "flight" "$TMP/err" || { echo "$bad:"; cat "$TMP/err"; exit 1; }
done
echo "test_run_flight: ok"
